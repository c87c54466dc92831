/**
 * A gateway that listens beyond loopback has no client authentication to fall back on: it says so
 * loudly at every start, and names the Host allow-list. On loopback it says nothing of the kind.
 */
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { recorderServer } from '../support/recorder.ts';

async function startLines(host: string): Promise<string[]> {
  const lines: string[] = [];
  const config = { ...buildConfig({ targets: { rec: recorderServer() } }), listen: { host, port: 0 } };
  const gateway = await startGateway(config, { logger: createTestLogger('info', lines) });
  await gateway.close();
  return lines;
}

describe('exposure warning', () => {
  it('listening on 0.0.0.0 logs a warning naming the risk and allowedHosts', async () => {
    const lines = await startLines('0.0.0.0');
    const warning = lines.map((l) => JSON.parse(l) as { level: number; msg: string; allowedHosts?: string }).find((l) => l.msg.startsWith('EXPOSED'));
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toContain('no client authentication');
    expect(warning?.allowedHosts).toBe('any (unset)');
  });

  it('listening on loopback does not', async () => {
    const lines = await startLines('127.0.0.1');
    expect(lines.some((l) => l.includes('EXPOSED'))).toBe(false);
  });
});
