/**
 * @modelcontextprotocol/server-everything started as a remote upstream: its `streamableHttp` mode
 * (POST/GET/DELETE at /mcp, resumable) or its legacy `sse` mode (GET /sse, POST /message). It reads
 * its port from the PORT environment variable and logs a line once listening; we pick a free port,
 * wait for that line, and retry on the rare race where another process took the port meanwhile.
 *
 * `close()` kills the child and waits for it to exit, so no test leaves a server behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface RemoteUpstream {
  /** The MCP endpoint (`http`) or the SSE stream URL (`sse`). */
  readonly url: string;
  /** Kills the server and resolves once it has exited. Idempotent. */
  close(): Promise<void>;
}

const ENTRY = new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url).pathname;
/** Generous for a loaded 2-core machine; the server normally listens within a second. */
const START_TIMEOUT_MS = 20_000;

/** server-everything in streamableHttp mode; `url` ends in /mcp. */
export function startEverythingHttp(): Promise<RemoteUpstream> {
  return startWithRetry('streamableHttp', '/mcp', /listening on port/);
}

/** server-everything in legacy sse mode; `url` ends in /sse. */
export function startEverythingSse(): Promise<RemoteUpstream> {
  return startWithRetry('sse', '/sse', /running on port/);
}

async function startWithRetry(mode: string, path: string, ready: RegExp): Promise<RemoteUpstream> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await start(mode, path, ready, await freePort());
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function start(mode: string, path: string, ready: RegExp, port: number): Promise<RemoteUpstream> {
  const child = spawn(process.execPath, [ENTRY, mode], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const upstream: RemoteUpstream = { url: `http://127.0.0.1:${port}${path}`, close: once(() => stop(child, exited)) };
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`server-everything ${mode} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(upstream);
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      void upstream.close().then(() => reject(error));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`server-everything ${mode} exited (${code ?? signal}) before listening:\n${output}`)));
  });
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => (result ??= fn());
}
