/**
 * The official suite's client auth scenarios with the gateway as the OAuth client (docs/conformance.md,
 * "Client auth scenarios through the gateway"): the CLI starts its mock MCP server and authorization
 * server and runs test/fixtures/gateway-auth-client.ts, which puts a gateway with `oauth.perUser`
 * in front of the mock server and completes the consent unattended. Discovery, registration, PKCE,
 * the code exchange, the bearer and the step-up consent are the gateway's; every check must pass.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_CLI } from '../support/conformance.ts';

const DRIVER = fileURLToPath(new URL('../fixtures/gateway-auth-client.ts', import.meta.url));
// The suite splits --command at spaces and runs it through a shell, which joins the words again:
// quoted, a path with a space (a checkout under "/tmp/sb ci/") stays one word.
const shellQuoted = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;

function scenario(name: string): Promise<string> {
  return new Promise((resolve) => {
    // The CLI's own --timeout stops the driver; ours stops the CLI if it hangs past that.
    execFile(process.execPath, [CONFORMANCE_CLI, 'client', '--command', `${shellQuoted(process.execPath)} ${shellQuoted(DRIVER)}`, '--scenario', name, '--timeout', '40000'], { timeout: 60_000 }, (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`));
  });
}

describe('client auth scenarios of the conformance suite, the gateway as the client', () => {
  it.each(['auth/metadata-default', 'auth/scope-step-up', 'auth/token-endpoint-auth-post'])('%s: every check passes', async (name) => {
    const out = await scenario(name);
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
    expect(summary, out.slice(-2_000)).not.toBeNull();
    expect(Number(summary![1]), out.slice(-2_000)).toBe(Number(summary![2]));
    expect(Number(summary![2])).toBeGreaterThan(10);
  }, 90_000);
});
