/**
 * Policy rules on token claims, through the gateway: a real issuer (JWKS over HTTP) mints tokens
 * whose `groups` differ; lists and calls agree, deny wins, and a denied tool answers exactly like
 * an unknown one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig, PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { type Issuer, jwtAuth, startIssuer } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { MAX_VALUE_LENGTH, MAX_VALUES } from '../../src/auth/claims.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claims-test', version: '1' } } };
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES: PolicyRule[] = [
  // Everyone with a token: echo and whoami. Admins (a list claim, by glob): everything.
  rule({ tools: ['echo', 'whoami'] }),
  rule({ claims: { groups: ['admin*'] } }),
  // Contractors lose whoami, even when they are admins too: deny wins.
  rule({ effect: 'deny', claims: { groups: ['contractors'] }, tools: ['whoami'], prompts: [], resources: [] }),
];

let issuer: Issuer;
let gw: RunningGateway;
const path = '/servers/col/mcp';

async function exchange(groups: string[] | string, ...messages: Array<{ id: number; method: string; params?: unknown }>) {
  const token = await issuer.mint({ aud: new URL(path, gw.url).href, groups });
  const auth = { authorization: `Bearer ${token}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  const answers: Array<{ text: string; json: Record<string, any> }> = [];
  for (const m of messages) {
    const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify({ jsonrpc: '2.0', ...m }) });
    const text = await res.text();
    answers.push({ text, json: JSON.parse(text) as Record<string, any> });
  }
  await fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...session } });
  return answers;
}

const list = { id: 1, method: 'tools/list' };
const call = (name: string) => ({ id: 2, method: 'tools/call', params: { name, arguments: { message: 'x' } } });
const names = (answer: { json: Record<string, any> }) => (answer.json.result.tools as Array<{ name: string }>).map((t) => t.name).sort();

beforeAll(async () => {
  issuer = await startIssuer();
  const base = buildAggregateConfig({ targets: { col: colliderServer('--page-size=100') } });
  const auth: AuthConfig = jwtAuth(issuer);
  gw = await startGateway({ ...base, auth, policy: { rules: RULES } }, { logger: createTestLogger('warn', []) });
});

afterAll(async () => {
  await gw?.close();
  await issuer?.close();
});

describe('policy on token claims', () => {
  it('a group claim grants more; lists and calls agree; denied answers like unknown', async () => {
    const user = await exchange(['staff'], list, call('secret_admin'), call('no_such_tool'), call('whoami'));
    expect(names(user[0]!)).toEqual(['echo', 'whoami']);
    expect(user[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: secret_admin' });
    expect(user[1]!.text).toBe(user[2]!.text.replace('no_such_tool', 'secret_admin'));
    expect(user[3]!.json.result).toBeDefined();

    const admin = await exchange('admins', list, call('secret_admin'));
    expect(names(admin[0]!)).toContain('secret_admin');
    expect(admin[1]!.json.result).toBeDefined();
  });

  it('deny on a claim wins over an allow on another', async () => {
    const both = await exchange(['admins', 'contractors'], list, call('whoami'), call('secret_admin'));
    expect(names(both[0]!)).toContain('secret_admin');
    expect(names(both[0]!)).not.toContain('whoami');
    expect(both[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: whoami' });
    expect(both[2]!.json.result).toBeDefined();
  });

  it('a claim cut to its bounds fails closed: a deny rule naming it applies (65 groups, a 300-character group)', async () => {
    const many = Array.from({ length: MAX_VALUES }, (_, i) => `team-${i}`);
    // The 65th value is the one the deny rule names: it was never seen, so the deny rule must apply.
    const over = await exchange([...many, 'contractors'], list, call('whoami'), call('echo'));
    expect(names(over[0]!)).toEqual(['echo']);
    expect(over[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: whoami' });
    expect(over[2]!.json.result).toBeDefined();
    const long = await exchange(['staff', `contractors-${'x'.repeat(300 - 12)}`], list, call('whoami'));
    expect(MAX_VALUE_LENGTH).toBeLessThan(300);
    expect(names(long[0]!)).toEqual(['echo']);
    expect(long[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: whoami' });
    // Exactly at the bounds nothing is cut: the deny rule does not apply.
    const full = await exchange([...many.slice(1), 'x'.repeat(MAX_VALUE_LENGTH)], list);
    expect(names(full[0]!)).toEqual(['echo', 'whoami']);
  });

  it('an allow rule never matches a value that was cut', async () => {
    // `admins` is the 65th group: kept it would grant everything; cut, it grants nothing more.
    const many = Array.from({ length: MAX_VALUES }, (_, i) => `team-${i}`);
    const answers = await exchange([...many, 'admins'], list, call('secret_admin'));
    expect(names(answers[0]!)).not.toContain('secret_admin');
    expect(answers[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: secret_admin' });
  });
});
