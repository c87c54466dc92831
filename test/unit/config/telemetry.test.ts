import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';

const withTelemetry = (telemetry: unknown) => () => parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { telemetry } });
const unset = { enabled: undefined, endpoint: undefined, serviceName: undefined, sampleRatio: undefined };

describe('gateway.telemetry', () => {
  it('leaves every key unset when absent, so the OTEL_* variables decide', () => {
    expect(parseConfig({ mcpServers: { a: { command: 'x' } } }).telemetry).toEqual({ traces: unset });
    expect(withTelemetry({})().telemetry).toEqual({ traces: unset });
  });

  it('takes the keys as given, numbers and booleans also as the strings ${VAR} yields', () => {
    const traces = { enabled: 'true', endpoint: 'http://127.0.0.1:4318/v1/traces', serviceName: 'gw', sampleRatio: '0.25' };
    expect(withTelemetry({ traces })().telemetry?.traces).toEqual({ enabled: true, endpoint: 'http://127.0.0.1:4318/v1/traces', serviceName: 'gw', sampleRatio: 0.25 });
  });

  it.each([
    ['an unknown key', { traces: { exporter: 'zipkin' } }, 'unknown key'],
    ['a ratio above 1', { traces: { sampleRatio: 1.5 } }, 'expected a number from 0 to 1'],
    ['a ratio that is a word', { traces: { sampleRatio: 'half' } }, 'expected a number from 0 to 1'],
    ['an endpoint that is not http(s)', { traces: { endpoint: 'grpc://collector:4317' } }, 'expected an absolute http:// or https:// URL'],
    ['credentials in the endpoint', { traces: { endpoint: 'https://user:secret@collector/v1/traces' } }, 'without user:password@'],
    ['an empty service name', { traces: { serviceName: '' } }, 'must not be empty'],
  ])('refuses %s, saying how to fix it', (_label, telemetry, message) => {
    expect(withTelemetry(telemetry)).toThrow(message);
  });

  it('never repeats the refused URL (it may hold a secret)', () => {
    expect(withTelemetry({ traces: { endpoint: 'https://user:secret@collector/v1/traces' } })).not.toThrow(/secret/);
  });
});
