/**
 * The outside probe of issue 30: a 2026 call parked for input (SEP-2322) and resumed with another
 * token of the same subject. Each request is judged by the token it carries (docs/security.md,
 * step-up): a retry with a narrower token, lacking the scope the tool needs, must not complete the
 * stepped-up call nor hand the server the answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { jwtAuth, startIssuer, type Issuer } from '../support/auth-server.ts';
import { parseConfig } from '../../src/config/load.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { fixture, type Recorded } from '../support/recorder.ts';

const ELICIT = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
let issuer: Issuer;
let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attack-parked-step-'));
  issuer = await startIssuer();
  const config = parseConfig({
    mcpServers: { s: { command: process.execPath, args: [fixture('attacker-server.mjs'), `--record-to=${join(dir, 'received.ndjson')}`], requiredScopes: { tools: { 'ask_*': ['admin'] } } } },
    gateway: { port: 0, auth: { jwt: { issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl }, scopes: ['mcp'] } },
  });
  gw = await startGateway({ ...config, auth: jwtAuth(issuer, ['mcp']) }, { logger: createTestLogger('warn', undefined) });
});

afterAll(async () => {
  await gw?.close();
  await issuer?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const answered = () =>
  readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded).filter((r) => r.method === undefined && String(r.id).startsWith('ask-'));

describe('a parked 2026 round resumed with a narrower token', () => {
  it('is refused for step-up; the wide token still completes it', async () => {
    const url = new URL('/servers/s/mcp', gw.url);
    const aud = url.href;
    const wide = await issuer.mint({ aud, scope: 'mcp admin' });
    const narrow = await issuer.mint({ aud, scope: 'mcp' });
    const as = (token: string, id: string) => ({ meta: ELICIT, headers: { authorization: `Bearer ${token}` }, id });
    const parked = await modern(url, 'tools/call', { name: 'ask_elicit', arguments: {} }, as(wide, 'p1'));
    const result = parked.json.result as Record<string, any>;
    expect(result?.resultType, parked.text).toBe('input_required');
    const [key] = Object.keys(result.inputRequests);
    const retry = { name: 'ask_elicit', arguments: {}, inputResponses: { [key as string]: { action: 'accept', content: { ok: true } } }, requestState: result.requestState };
    const refused = await modern(url, 'tools/call', retry, as(narrow, 'p2'));
    expect(refused.status, refused.text).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('scope="mcp admin"');
    expect((refused.json.error as { data?: { code?: string } } | undefined)?.data?.code, refused.text).toBe('GW_STEP_UP_REQUIRED');
    expect(answered()).toEqual([]);
    const done = await modern(url, 'tools/call', retry, as(wide, 'p3'));
    expect((done.json.result as Record<string, any>)?.resultType, done.text).toBe('complete');
    expect(answered()).toHaveLength(1);
  });
});
