/**
 * Pure parts of the extensions and progressive discovery: the BM25 tool index, sealed task ids,
 * the skills entry encoding and cache hints, the Apps UI reference, and composed extensions.
 */
import { describe, expect, it } from 'vitest';
import { encodeToolUi } from '../../../src/router/apps.ts';
import { mergeCapabilities } from '../../../src/router/capabilities.ts';
import { encodeSkill, mergeCacheHints, visibleSkill } from '../../../src/router/skills.ts';
import { createTaskIds } from '../../../src/router/task-ids.ts';
import { createToolIndex, words } from '../../../src/router/tool-search.ts';

describe('tool index', () => {
  const tools = [
    { name: 'github__create_issue', description: 'Create a new issue in a GitHub repository', inputSchema: { type: 'object', properties: { owner: {}, repo: {}, title: {} } } },
    { name: 'files__read_text_file', description: 'Read the complete contents of a file as text', inputSchema: { type: 'object', properties: { path: { description: 'Where the file is' } } } },
    { name: 'maps__maps_geocode', title: 'Geocode', description: 'Convert an address into geographic coordinates' },
  ];
  const index = createToolIndex(tools);

  it('splits names at case changes and punctuation, stems and drops stop words', () => {
    expect(words('github__createIssue for the files')).toEqual(['github', 'create', 'issue', 'file']);
  });

  it('ranks by the words of names, titles, descriptions and argument names', () => {
    expect(index.search('create github issue', 3)[0]?.tool.name).toBe('github__create_issue');
    expect(index.search('read files', 3)[0]?.tool.name).toBe('files__read_text_file');
    expect(index.search('geocode an address', 3)[0]?.tool.name).toBe('maps__maps_geocode');
    expect(index.search('repo owner', 3)[0]?.tool.name).toBe('github__create_issue');
    expect(index.search('nothing matches this', 3)).toEqual([]);
    expect(index.search('file', 0)).toEqual([]);
  });

  it('bounds what a hostile description costs', () => {
    const big = createToolIndex([{ name: 'x', description: 'word '.repeat(1_000_000) }]);
    expect(big.search('word', 1)).toHaveLength(1);
  });
});

describe('task ids', () => {
  const ids = createTaskIds();
  const owner = { target: 'a', task: 't-1', principal: 'key:alice', tool: 'slow' };

  it('open what they seal, the same id for the same task, and nothing else', () => {
    const token = ids.seal(owner);
    expect(ids.seal(owner)).toBe(token);
    expect(ids.open(token)).toEqual(owner);
    expect(ids.seal({ ...owner, principal: 'key:bob' })).not.toBe(token);
    for (const bad of [token.slice(0, -1), `${token}A`, token.replace('task1.', 'task2.'), 'task1.', 't-1', createTaskIds().seal(owner)]) expect(ids.open(bad), bad).toBeUndefined();
  });
});

describe('skills and apps', () => {
  it('encodes a skill entry and its files, digests untouched, and filters its manifest', () => {
    const entry = { uri: 'skill://a/SKILL.md', frontmatter: { name: 'a' }, resources: [{ uri: 'skill://a/SKILL.md', digest: 'sha256:1' }, { uri: 'skill://a/secret.md', digest: 'sha256:2' }] };
    expect(visibleSkill(entry, (uri) => !uri.endsWith('secret.md'))).toBe(true);
    encodeSkill('s', entry);
    expect(entry).toEqual({ uri: 's+skill://a/SKILL.md', frontmatter: { name: 'a' }, resources: [{ uri: 's+skill://a/SKILL.md', digest: 'sha256:1' }] });
    expect(visibleSkill({ uri: 'skill://b/SKILL.md' }, () => false)).toBe(false);
  });

  it('merges cache hints: shortest ttl, private when any part is or the list was filtered', () => {
    expect(mergeCacheHints([{ ttlMs: 100, cacheScope: 'public' }, { ttlMs: 50, cacheScope: 'public' }], false)).toEqual({ ttlMs: 50, cacheScope: 'public' });
    expect(mergeCacheHints([{ ttlMs: 100, cacheScope: 'public' }], true)).toEqual({ ttlMs: 100, cacheScope: 'private' });
    expect(mergeCacheHints([{ cacheScope: 'public' }, { ttlMs: -5, cacheScope: 'private' }], false)).toEqual({ ttlMs: 0, cacheScope: 'private' });
  });

  it("encodes a tool's UI resource reference in both spellings", () => {
    const tool = { name: 't', _meta: { ui: { resourceUri: 'ui://t/app.html', visibility: ['model'] }, 'ui/resourceUri': 'ui://t/app.html' } };
    encodeToolUi('app', tool);
    expect(tool._meta).toEqual({ ui: { resourceUri: 'app+ui://t/app.html', visibility: ['model'] }, 'ui/resourceUri': 'app+ui://t/app.html' });
  });

  it('composes the members\u2019 extensions', () => {
    const merged = mergeCapabilities([{ extensions: { 'io.modelcontextprotocol/skills': {} } }, { extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true }, x: {} } }, { tools: {} }]);
    expect(merged.extensions).toEqual({ 'io.modelcontextprotocol/skills': { directoryRead: true }, x: {} });
    expect(mergeCapabilities([{ tools: {} }]).extensions).toBeUndefined();
  });
});
