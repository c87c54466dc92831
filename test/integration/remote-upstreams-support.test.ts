/**
 * The server-everything launchers other suites rely on: each starts a real server that answers at
 * `url`, and `close()` leaves no process behind (even when called twice).
 */
import { describe, expect, it } from 'vitest';
import { descendantsOf, waitUntilGone } from '../support/processes.ts';
import { startEverythingHttp, startEverythingSse } from '../support/remote-upstreams.ts';

describe.each([
  { mode: 'streamableHttp', start: startEverythingHttp, path: '/mcp', status: 400 },
  { mode: 'sse', start: startEverythingSse, path: '/sse', status: 200 },
])('server-everything in $mode mode', ({ start, path, status }) => {
  it('listens at url and close() kills it', async () => {
    const before = new Set(descendantsOf(process.pid));
    const upstream = await start();
    const started = descendantsOf(process.pid).filter((pid) => !before.has(pid));
    expect(started.length).toBeGreaterThan(0);
    expect(new URL(upstream.url).pathname).toBe(path);
    // The server answers over HTTP: a GET without a session is refused (http) or opens a stream (sse).
    const res = await fetch(upstream.url, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5_000) });
    expect(res.status).toBe(status);
    await res.body?.cancel();
    await Promise.all([upstream.close(), upstream.close()]);
    expect(await waitUntilGone(started, 5_000)).toEqual([]);
  });
});
