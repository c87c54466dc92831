/**
 * `session.stateless.hostsPerCaller` bounds the upstream sessions the gateway holds for one
 * principal on one endpoint (docs/configuration.md). Attack: one subject presents a different
 * token on every 2026 request to a target that forwards the caller's credential; each token must
 * reach the upstream as its own (held-identity.test.ts), but the subject must not hold more than
 * the bound at once by varying tokens, as it cannot by varying its declared capabilities. Real
 * tokens from a test issuer, a recording Streamable HTTP upstream that sees each session's DELETE.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { type Issuer, jwtAuth, startIssuer } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { textOf } from '../support/recorder.ts';

const PER_CALLER = 2;
let issuer: Issuer;
let remote: HttpFixture;
let gw: RunningGateway;

beforeAll(async () => {
  issuer = await startIssuer();
  remote = await startHttpFixture({ getStream: false });
  const base = buildAggregateConfig({ targets: { remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, forwardAuthorization: true, protocol: '2025' }), exposure: { eager: false } }, col: colliderServer() } });
  const stateless = { ...base.session.stateless, hostsPerCaller: PER_CALLER };
  gw = await startGateway({ ...base, session: { ...base.session, stateless }, auth: jwtAuth(issuer) }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
  await remote?.close();
  await issuer?.close();
});

/** Upstream sessions that carried `authorization` and were not ended (no DELETE seen). */
function liveSessionsOf(tokens: ReadonlySet<string>): string[] {
  const opened = new Set<string>();
  const ended = new Set<string>();
  for (const seen of remote.seen) {
    const id = seen.headers['mcp-session-id'];
    if (id === undefined) continue;
    if (seen.method === 'DELETE') ended.add(id);
    else if (tokens.has(seen.headers.authorization ?? '')) opened.add(id);
  }
  return [...opened].filter((id) => !ended.has(id));
}

for (const [path, tool] of [['/servers/remote/mcp', 'headers'], ['/mcp', 'remote__headers']] as const) {
  it(`on ${path}: one subject with 8 tokens in turn holds at most ${PER_CALLER} upstream sessions, each call still carrying its own token`, async () => {
    const url = new URL(path, gw.url);
    const call = async (token: string) => {
      const answer = await modern(url, 'tools/call', { name: tool, arguments: {} }, { headers: { authorization: token } });
      return (JSON.parse(textOf(resultOf(answer))) as Record<string, string>).authorization;
    };
    const subject = `mallory${path.replaceAll('/', '-')}`;
    const tokens = await Promise.all(Array.from({ length: 8 }, (_, i) => issuer.mint({ aud: url.href, sub: subject, jti: `t${i}` }).then((t) => `Bearer ${t}`)));
    for (const token of tokens) expect(await call(token)).toBe(token);
    await expect.poll(() => liveSessionsOf(new Set(tokens)).length, { timeout: 10_000 }).toBeLessThanOrEqual(PER_CALLER);
    // The first token again (its host was retired for room): its own still, and another subject is served.
    expect(await call(tokens[0]!)).toBe(tokens[0]);
    const bob = `Bearer ${await issuer.mint({ aud: url.href, sub: 'bob' })}`;
    expect(await call(bob)).toBe(bob);
  });
}
