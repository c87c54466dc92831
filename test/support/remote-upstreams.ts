/**
 * @modelcontextprotocol/server-everything started as a remote upstream: its `streamableHttp` mode
 * (POST/GET/DELETE at /mcp, resumable) or its legacy `sse` mode (GET /sse, POST /message). It reads
 * its port from the PORT environment variable and logs a line once listening; we pick a free port,
 * wait for that line, and retry on the rare race where another process took the port meanwhile.
 *
 * `close()` kills the child and waits for it to exit, so no test leaves a server behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.ts';
import { fileURLToPath } from 'node:url';

export interface RemoteUpstream {
  /** The MCP endpoint (`http`) or the SSE stream URL (`sse`). */
  readonly url: string;
  /** Kills the server and resolves once it has exited. Idempotent. */
  close(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
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

const CRASHY = fileURLToPath(new URL('../fixtures/crashy-remote.mjs', import.meta.url));

/**
 * test/fixtures/crashy-remote.mjs (the SDK's server) over Streamable HTTP or legacy SSE: its
 * `crash` tool takes the whole server down mid-call. It binds port 0 and says which it got.
 */
export function startCrashyRemote(mode: 'http' | 'sse'): Promise<RemoteUpstream> {
  const path = mode === 'http' ? '/mcp' : '/sse';
  return launch('crashy-remote', [CRASHY, mode], {}, /listening (\d+)/, (port) => `http://127.0.0.1:${port}${path}`);
}

async function startWithRetry(mode: string, path: string, ready: RegExp): Promise<RemoteUpstream> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const port = await freePort();
      return await launch(`server-everything ${mode}`, [ENTRY, mode], { PORT: String(port) }, ready, () => `http://127.0.0.1:${port}${path}`);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}


/** Starts `node <argv>`, waits for `ready` in its output, and builds the URL from its first group. */
function launch(
  label: string,
  argv: string[],
  env: Record<string, string>,
  ready: RegExp,
  urlOf: (group: string) => string,
): Promise<RemoteUpstream> {
  const child = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const close = once(() => stop(child, exited));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = ready.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ url: urlOf(match[1] ?? ''), close });
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      void close().then(() => reject(error));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${label} exited (${code ?? signal}) before listening:\n${output}`)));
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
