/** Valid, stable, unique target names for the server names other clients write (src/config/server-names.ts). */
import { describe, expect, it } from 'vitest';
import { candidateNames, deriveServerNames } from '../../../src/config/server-names.ts';
import { TARGET_NAME_PATTERN } from '../../../src/config/schema-kit.ts';

const derive = (names: string[]) => Object.fromEntries(deriveServerNames(names));

describe('derived server names', () => {
  it('a repository path: its last meaningful segment first, then more of the path', () => {
    expect(candidateNames('github.com/modelcontextprotocol/servers/tree/main/src/everything')).toEqual(['everything', 'modelcontextprotocol-everything']);
    expect(candidateNames('github.com/upstash/context7-mcp')).toEqual(['context7-mcp', 'upstash-context7-mcp']);
    expect(candidateNames('github.com/owner/repo.git')).toEqual(['repo', 'owner-repo']);
    expect(candidateNames('@scope/pkg')).toEqual(['pkg', 'scope-pkg']);
    // Only noise left: the noise is the name.
    expect(candidateNames('github.com/tree/main')).toEqual(['main', 'tree-main']);
  });

  it('other names: runs of other characters become "-"; nothing left becomes "server"', () => {
    expect(candidateNames('docs.search')).toEqual(['docs-search']);
    expect(candidateNames('My Server (beta)')).toEqual(['My-Server-beta']);
    expect(candidateNames('...')).toEqual(['server']);
    expect(candidateNames('///')).toEqual(['server']);
  });

  it('valid names keep themselves and are claimed before any derived name', () => {
    expect(derive(['github.com/a/memory', 'memory'])).toEqual({ 'github.com/a/memory': 'a-memory' });
  });

  it('collisions: more of the path, then a number; the same input always gives the same names', () => {
    const names = ['github.com/a/x', 'gitlab.com/b/x', 'bitbucket.org/b/x', 'a.b', 'a b', 'a-b'];
    const first = derive(names);
    expect(first).toEqual({ 'github.com/a/x': 'x', 'gitlab.com/b/x': 'b-x', 'bitbucket.org/b/x': 'x-2', 'a.b': 'a-b-2', 'a b': 'a-b-3' });
    expect(derive(names)).toEqual(first);
    expect(new Set(Object.values(first)).size).toBe(Object.keys(first).length);
  });

  it('long paths keep their end, within 64 characters, and stay valid', () => {
    const long = `github.com/o/${'very-long-segment-'.repeat(6)}tail`;
    for (const candidate of candidateNames(long)) {
      expect(candidate).toMatch(TARGET_NAME_PATTERN);
      expect(candidate.endsWith('tail')).toBe(true);
    }
    const [name] = Object.values(derive([`${'x'.repeat(70)}.y`, `${'x'.repeat(70)} y`]));
    expect(name).toMatch(TARGET_NAME_PATTERN);
  });
});
