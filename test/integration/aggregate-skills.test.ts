/**
 * Skills (SEP-2640) through an aggregate, on both eras: two real children of the skills fixture
 * (written from the SEP's text; no npm server implements it) that serve the same skill names, so
 * only the per-server URI encoding tells them apart. Lists merge page by page with the composite
 * cursor, `skills/get`, `resources/directory/read` and `resources/read` go to the server the URI
 * names, digests arrive untouched and match the bytes read through the gateway, the extension is
 * composed into initialize, a policy's denied skill never shows (and makes the answer private),
 * and pinning withholds a skill whose SKILL.md changed.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, connectClient, errorOf, startAggregateGateway } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { admin, eventually, startFromFile, type PinningGateway } from '../support/pinning.ts';
import { fileURLToPath } from 'node:url';

const SKILLS = fileURLToPath(new URL('../fixtures/skills-server.mjs', import.meta.url));
const ANY = z.object({}).passthrough();
type Entry = { uri: string; frontmatter: Record<string, unknown>; resources: Array<{ uri: string; digest: string; size: number }> };

const skillsServer = (prefix: string, state?: string) => ({ command: process.execPath, args: [SKILLS], env: { SKILLS_PREFIX: prefix, ...(state ? { SKILLS_STATE: state } : {}) } });
const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** Every page of skills/list through `ask`. */
async function allSkills(ask: (params: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<{ entries: Entry[]; pages: Array<Record<string, unknown>> }> {
  const entries: Entry[] = [];
  const pages: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10; i++) {
    const page = await ask(cursor === undefined ? {} : { cursor });
    pages.push(page);
    entries.push(...(page.skills as Entry[]));
    cursor = page.nextCursor as string | undefined;
    if (cursor === undefined) break;
  }
  return { entries, pages };
}

describe('skills through an aggregate', () => {
  let gw: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    gw = await startAggregateGateway({ targets: { a: { ...skillsServer('demo'), exposure: { eager: true } }, b: { ...skillsServer('demo'), exposure: { eager: true } } } });
    client = await connectClient(gw);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
  });

  it('composes the extension, merges both servers page by page and keeps digests, on a 2025 session', async () => {
    expect(client.getServerCapabilities()?.extensions).toEqual({ 'io.modelcontextprotocol/skills': { directoryRead: true } });
    const { entries, pages } = await allSkills((params) => client.request({ method: 'skills/list', params }, ANY));
    expect(entries.map((e) => e.uri)).toEqual(['a+skill://demo-guide/SKILL.md', 'b+skill://demo-guide/SKILL.md', 'a+skill://demo-forms/SKILL.md', 'b+skill://demo-forms/SKILL.md']);
    expect(pages[0]).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    const guide = entries.find((e) => e.uri === 'b+skill://demo-guide/SKILL.md') as Entry;
    expect(guide.frontmatter).toEqual({ name: 'demo-guide', description: 'How demo works' });
    expect(guide.resources.map((r) => r.uri)).toEqual(['b+skill://demo-guide/SKILL.md', 'b+skill://demo-guide/references/GUIDE.md']);
    // The digest is the upstream's, untouched, and matches the bytes read through the gateway.
    for (const file of guide.resources) {
      const read = await client.readResource({ uri: file.uri });
      const text = (read.contents[0] as { text: string }).text;
      expect(read.contents[0]?.uri).toBe(file.uri);
      expect(file.digest).toBe(sha(text));
      expect(file.size).toBe(Buffer.byteLength(text));
    }
  });

  it('routes skills/get and resources/directory/read by the encoded URI', async () => {
    const got = await client.request({ method: 'skills/get', params: { uri: 'a+skill://demo-forms/SKILL.md' } }, ANY);
    expect((got.skill as Entry).uri).toBe('a+skill://demo-forms/SKILL.md');
    expect((got.skill as Entry).resources.map((r) => r.uri)).toContain('a+skill://demo-forms/templates/deep/b.md');
    const dir = await client.request({ method: 'resources/directory/read', params: { uri: 'b+skill://demo-forms/templates' } }, ANY);
    expect(dir.resources).toEqual([
      { uri: 'b+skill://demo-forms/templates/a.md', name: 'a.md', mimeType: 'text/markdown' },
      { uri: 'b+skill://demo-forms/templates/deep', name: 'deep', mimeType: 'inode/directory' },
    ]);
    // A URI of no server, or an unencoded one, is an unknown resource; the server's own refusal passes.
    for (const uri of ['skill://demo-forms/SKILL.md', 'zz+skill://demo-forms/SKILL.md']) {
      const err = await errorOf(client.request({ method: 'skills/get', params: { uri } }, ANY));
      expect(err.data).toMatchObject({ code: 'GW_RESOURCE_NOT_FOUND' });
    }
    const unknown = await errorOf(client.request({ method: 'skills/get', params: { uri: 'a+skill://nope/SKILL.md' } }, ANY));
    expect(unknown.code).toBe(-32602);
  });

  it('serves the same on stateless 2026 requests', async () => {
    const url = new URL('/mcp', gw.url);
    let id = 100;
    const ask = async (method: string, params: Record<string, unknown>) => resultOf(await modern(url, method, params, { id: id++ }));
    const { entries, pages } = await allSkills((params) => ask('skills/list', params));
    expect(entries).toHaveLength(4);
    expect(pages[0]).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'private' });
    const got = await ask('skills/get', { uri: 'b+skill://demo-guide/SKILL.md' });
    expect((got.skill as Entry).resources[1]?.uri).toBe('b+skill://demo-guide/references/GUIDE.md');
    const dir = await ask('resources/directory/read', { uri: 'a+skill://demo-guide' });
    expect((dir.resources as Array<{ uri: string }>).map((r) => r.uri)).toEqual(['a+skill://demo-guide/SKILL.md', 'a+skill://demo-guide/references']);
    const discovered = await ask('server/discover', {});
    expect((discovered.capabilities as Record<string, unknown>).extensions).toEqual({ 'io.modelcontextprotocol/skills': { directoryRead: true } });
  });
});

describe('skills under a policy', () => {
  const ALICE = 'alice-key-0123456789abcdef';
  const BOB = 'bob-key-0123456789abcdef0';
  const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
  let gw: RunningGateway;
  beforeAll(async () => {
    const base = buildAggregateConfig({ targets: { a: skillsServer('demo'), b: skillsServer('demo') } });
    const rules = [rule({}), rule({ effect: 'deny', principals: ['key:bob'], servers: ['b'], tools: [], prompts: [], resources: ['skill://demo-forms/*'] })];
    gw = await startGateway({ ...base, auth: keyAuth({ alice: ALICE, bob: BOB }), policy: { rules } }, { logger: createTestLogger('warn', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const as = async (key: string) => {
    const client = new Client({ name: 'skills-policy', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  };

  it('never shows a denied skill, refuses it as unknown on every route and marks the list private', async () => {
    const alice = await as(ALICE);
    const bob = await as(BOB);
    try {
      const all = await allSkills((params) => alice.request({ method: 'skills/list', params }, ANY));
      expect(all.entries).toHaveLength(4);
      const seen = await allSkills((params) => bob.request({ method: 'skills/list', params }, ANY));
      expect(seen.entries.map((e) => e.uri)).not.toContain('b+skill://demo-forms/SKILL.md');
      expect(seen.entries).toHaveLength(3);
      expect(seen.pages.every((p) => p.cacheScope === 'private')).toBe(true);
      for (const [method, uri] of [
        ['skills/get', 'b+skill://demo-forms/SKILL.md'],
        ['resources/directory/read', 'b+skill://demo-forms/templates'],
        ['resources/read', 'b+skill://demo-forms/SKILL.md'],
      ] as const) {
        const err = await errorOf(bob.request({ method, params: { uri } }, ANY));
        expect(err.data, `${method} ${uri}`).toMatchObject({ code: 'GW_RESOURCE_NOT_FOUND' });
      }
      // 2026, same caller, same answer.
      const answer = await modern(new URL('/mcp', gw.url), 'skills/get', { uri: 'b+skill://demo-forms/SKILL.md' }, { headers: { authorization: `Bearer ${BOB}` } });
      expect((answer.json.error as { data?: unknown } | undefined)?.data).toMatchObject({ code: 'GW_RESOURCE_NOT_FOUND' });
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('skills and pinning', () => {
  let dir: string;
  let running: PinningGateway | undefined;
  afterEach(async () => {
    await running?.gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('withholds a skill whose SKILL.md changed and refuses skills/get until approved', async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-skills-pins-'));
    const state = join(dir, 'b.state');
    await writeFile(state, 'original');
    const config = join(dir, 'switchboard.json');
    await writeFile(config, JSON.stringify({ mcpServers: { a: skillsServer('one'), b: skillsServer('two', state) }, gateway: { port: 0, pinning: { mode: 'block' }, logging: { level: 'warn' } } }));
    running = await startFromFile(config);
    const client = await connectClient(running.gateway);
    try {
      const list = async () => (await allSkills((params) => client.request({ method: 'skills/list', params }, ANY))).entries.map((e) => e.uri);
      expect(await list()).toContain('b+skill://two-guide/SKILL.md');
      await eventually('skills pinned', async () => ((await admin(running!.gateway, '/admin/pins')).json.pins.b?.skill === 2 ? true : undefined));
      await writeFile(state, 'changed');
      const now = await eventually('the changed skill withheld', async () => {
        const uris = await list();
        return uris.includes('b+skill://two-guide/SKILL.md') ? undefined : uris;
      });
      expect(now).toContain('b+skill://two-forms/SKILL.md');
      const err = await errorOf(client.request({ method: 'skills/get', params: { uri: 'b+skill://two-guide/SKILL.md' } }, ANY));
      expect(err.data).toMatchObject({ code: 'GW_DEFINITION_CHANGED', kind: 'skill', name: 'skill://two-guide/SKILL.md', changed: ['resources'] });
      const approved = await admin(running.gateway, '/admin/pins/approve', { target: 'b', kind: 'skill', name: 'skill://two-guide/SKILL.md' });
      expect(approved.status).toBe(200);
      expect(await list()).toContain('b+skill://two-guide/SKILL.md');
    } finally {
      await client.close();
    }
  });
});
