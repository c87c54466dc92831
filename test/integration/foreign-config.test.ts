/**
 * A Cline settings file whose servers came from Cline's marketplace (named after their repository
 * path) is served as it is: each server under a valid name derived from its path, the mapping in
 * the start-up log and in `switchboard validate`, the same names on every start.
 */
import { describe, expect, it } from 'vitest';
import { endpointsOf, initializeAt, post, run, start, useCliProcesses, writeConfig } from '../support/cli.ts';
import { fixture } from '../support/recorder.ts';

useCliProcesses();

const EVERYTHING = 'github.com/modelcontextprotocol/servers/tree/main/src/everything';
const OTHER = 'github.com/someone/everything';

/** What Cline writes for two marketplace installs, pointed at our recorder fixture. */
async function clineFile(): Promise<string> {
  const server = { command: process.execPath, args: [fixture('recorder-server.mjs')], disabled: false, autoApprove: [] };
  return writeConfig('cline_mcp_settings.json', JSON.stringify({ mcpServers: { [EVERYTHING]: server, [OTHER]: server } }, null, 2));
}

async function echoAt(url: string): Promise<unknown> {
  const sessionId = await initializeAt(url);
  const answer = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, sessionId);
  return answer.json();
}

describe('a Cline file with marketplace servers', () => {
  it('--config serves each under a derived name and logs the mapping', async () => {
    const file = await clineFile();
    const running = start(['--config', file, '--port', '0']);
    const endpoints = await endpointsOf(running);
    const base = new URL(endpoints[0] ?? '').origin;
    const log = running.stdout();
    expect(log).toContain(`server \\"${EVERYTHING}\\" is served as \\"everything\\"`);
    expect(log).toContain(`server \\"${OTHER}\\" is served as \\"someone-everything\\"`);
    expect(endpoints).toContain(`${base}/servers/everything/mcp`);
    expect(endpoints).toContain(`${base}/servers/someone-everything/mcp`);
    expect(await echoAt(`${base}/servers/everything/mcp`)).toMatchObject({ result: { content: [{ text: 'hi' }] } });
    expect(await echoAt(`${base}/servers/someone-everything/mcp`)).toMatchObject({ result: { content: [{ text: 'hi' }] } });
    // The repository path itself is no URL of this gateway.
    expect((await post(`${base}/servers/${EVERYTHING}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(404);
  }, 90_000);

  it('validate says the same mapping and exits 0', async () => {
    const result = await run(['validate', await clineFile()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('config OK: 2 server(s)');
    expect(result.stdout).toContain(`warning: server "${EVERYTHING}" is served as "everything"`);
    expect(result.stdout).toContain('everything: stdio');
    expect(result.stdout).toContain('someone-everything: stdio');
  }, 60_000);
});
