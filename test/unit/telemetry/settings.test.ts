/**
 * Which settings tracing runs with: a config key that is set wins, an unset one comes from the
 * standard OTEL_* variables, an empty variable is unset, and off is the default.
 */
import { describe, expect, it } from 'vitest';
import type { TracesConfig } from '../../../src/config/types.ts';
import { DEFAULT_OTLP_TRACES_ENDPOINT, resolveTraceSettings } from '../../../src/telemetry/settings.ts';

const unset: TracesConfig = { enabled: undefined, endpoint: undefined, serviceName: undefined, sampleRatio: undefined };
const config = (over: Partial<TracesConfig>): TracesConfig => ({ ...unset, ...over });

describe('resolveTraceSettings', () => {
  it('is off with no config and no collector in the environment', () => {
    expect(resolveTraceSettings(undefined, {})).toBeUndefined();
    expect(resolveTraceSettings(unset, { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
  });

  it('is on when the environment names a collector, with the signal path added to the base URL', () => {
    expect(resolveTraceSettings(unset, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toMatchObject({
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'switchboard',
      sampleRatio: undefined,
      from: { enabled: 'env', endpoint: 'env' },
    });
    expect(resolveTraceSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })?.endpoint).toBe('http://collector:4318/v1/traces');
  });

  it('takes the traces endpoint as it is, before the base one', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom' };
    expect(resolveTraceSettings(unset, env)?.endpoint).toBe('http://traces:9999/custom');
  });

  it('stays off when the environment says so, unless the config turns it on', () => {
    const collector = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(resolveTraceSettings(unset, { ...collector, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(resolveTraceSettings(unset, { ...collector, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(resolveTraceSettings(config({ enabled: true }), { ...collector, OTEL_SDK_DISABLED: 'true' })?.from.enabled).toBe('config');
  });

  it('lets the config win over every variable', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318', OTEL_SERVICE_NAME: 'from-env' };
    expect(resolveTraceSettings(config({ enabled: false }), env)).toBeUndefined();
    expect(resolveTraceSettings(config({ enabled: true, endpoint: 'http://cfg:4318/v1/traces', serviceName: 'from-config', sampleRatio: 0.25 }), env)).toEqual({
      endpoint: 'http://cfg:4318/v1/traces',
      serviceName: 'from-config',
      sampleRatio: 0.25,
      from: { enabled: 'config', endpoint: 'config' },
    });
  });

  it('fills unset keys from the environment and then the defaults; empty variables are unset', () => {
    expect(resolveTraceSettings(config({ enabled: true }), { OTEL_SERVICE_NAME: 'from-env' })).toEqual({
      endpoint: DEFAULT_OTLP_TRACES_ENDPOINT,
      serviceName: 'from-env',
      sampleRatio: undefined,
      from: { enabled: 'config', endpoint: 'default' },
    });
    expect(resolveTraceSettings(config({ enabled: true }), { OTEL_SERVICE_NAME: ' ', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toMatchObject({
      endpoint: DEFAULT_OTLP_TRACES_ENDPOINT,
      serviceName: 'switchboard',
    });
    expect(resolveTraceSettings(unset, { OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
  });
});
