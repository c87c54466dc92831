/**
 * Attacks on skills through an aggregate (issue 33, SEP-2640): a caller the policy denies a skill
 * tries other spellings of its URI (the skill's root without a path, a trailing slash, case, dot
 * segments, a doubled slash, percent-escapes, the prefix in capitals) with `skills/get`,
 * `resources/directory/read` and `resources/read`, on a 2025 session and a 2026 request. And a
 * skill hidden by its SKILL.md alone (docs/aggregation.md: "skills/get and
 * resources/directory/read of a hidden one get the unknown-resource error"): its directories must
 * not be listed either. Real gateway, two children of the skills fixture, SDK client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { fileURLToPath } from 'node:url';

const SKILLS = fileURLToPath(new URL('../fixtures/skills-server.mjs', import.meta.url));
const ANY = z.object({}).passthrough();
const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0', carol: 'carol-key-0123456789abcdef' };
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES = [
  rule({}),
  // Bob: the whole skill, by a glob on its files.
  rule({ effect: 'deny', principals: ['key:bob'], servers: ['b'], tools: [], prompts: [], resources: ['skill://demo-forms/*'] }),
  // Carol: the skill by its identity (its SKILL.md) alone.
  rule({ effect: 'deny', principals: ['key:carol'], servers: ['b'], tools: [], prompts: [], resources: ['skill://demo-forms/SKILL.md'] }),
];
const SPELLINGS = [
  'b+skill://demo-forms/SKILL.md',
  'b+skill://demo-forms',
  'b+skill://demo-forms/',
  'b+skill://demo-forms/templates',
  'b+skill://demo-forms/templates/',
  'b+skill://demo-forms/templates/a.md',
  'b+skill://DEMO-FORMS/SKILL.md',
  'b+skill://demo-forms/./SKILL.md',
  'b+skill://demo-forms//SKILL.md',
  'b+skill://demo-guide/../demo-forms/SKILL.md',
  'b+skill://%64emo-forms/SKILL.md',
  'b+skill://demo-forms/SKILL%2Emd',
  'B+skill://demo-forms/SKILL.md',
  'b+SKILL://demo-forms/SKILL.md',
];
const METHODS = ['skills/get', 'resources/directory/read', 'resources/read'] as const;

let gw: RunningGateway;
const clients: Client[] = [];
beforeAll(async () => {
  const skills = { command: process.execPath, args: [SKILLS], env: { SKILLS_PREFIX: 'demo' } };
  const base = buildAggregateConfig({ targets: { a: skills, b: skills } });
  gw = await startGateway({ ...base, auth: keyAuth(KEYS), policy: { rules: RULES } }, { logger: createTestLogger('warn', undefined) });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
});

async function as(key: string): Promise<Client> {
  const client = new Client({ name: 'attacker', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

/** What leaked in an answer (errors echo the URI asked, which is no leak): the denied skill's content or the names of its files. */
const leaks = (text: string) => /Fill them|templates\/a\.md|"a\.md"|deep|"name":"a\.md"|\ba\n/.test(text);

describe('attack: a denied skill by another spelling of its URI', () => {
  it('the control: alice, whom nothing denies, reads the skill and lists its directories', async () => {
    const alice = await as(KEYS.alice);
    const listed = await alice.request({ method: 'resources/directory/read', params: { uri: 'b+skill://demo-forms/templates' } }, ANY);
    expect(JSON.stringify(listed)).toContain('a.md');
    const got = await alice.request({ method: 'skills/get', params: { uri: 'b+skill://demo-forms/SKILL.md' } }, ANY);
    expect(JSON.stringify(got)).toContain('demo-forms');
  });

  for (const who of ['bob', 'carol'] as const) {
    it(`${who}: no spelling and no method reaches it, on a 2025 session and a 2026 request`, async () => {
      const client = await as(KEYS[who]);
      for (const method of METHODS) {
        for (const uri of SPELLINGS) {
          // Carol's rule names SKILL.md only: a file of the skill she may read (docs: files are judged by their own URI).
          if (who === 'carol' && method === 'resources/read' && uri.endsWith('templates/a.md')) continue;
          const answer = await client.request({ method, params: { uri } }, ANY).then((r) => JSON.stringify(r), () => '');
          expect(leaks(answer), `${who} ${method} ${uri}: ${answer}`).toBe(false);
          const stateless = await modern(new URL('/mcp', gw.url), method, { uri }, { headers: { authorization: `Bearer ${KEYS[who]}` } });
          expect(leaks(JSON.stringify(stateless.json.result ?? '')), `${who} 2026 ${method} ${uri}: ${stateless.text}`).toBe(false);
        }
      }
    });
  }
});
