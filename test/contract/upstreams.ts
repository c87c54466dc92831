/**
 * The upstream kinds the contract suite runs against. Each row starts what the gateway forwards to
 * and says how to configure it: an `mcpServers` entry exactly as a config file would hold it.
 *
 * `start` gives server-everything; `startCrashable` gives a server with a `crash` tool that makes
 * it go away (its connection drops) while a call is in flight, for the upstream-crash scenario.
 * Remote rows: `{ type: 'http', url }` / `{ type: 'sse', url }` entries from
 * test/support/remote-upstreams.ts (startEverythingHttp / startEverythingSse), and the 2026-only
 * fixture (test/fixtures/modern-upstream.ts) behind the same kind of entry.
 */
import { everythingServer } from '../support/gateway.ts';
import { recorderServer } from '../support/recorder.ts';
import { startCrashyRemote, startEverythingHttp, startEverythingSse, type RemoteUpstream } from '../support/remote-upstreams.ts';
import { startModernFixture } from '../fixtures/modern-upstream.ts';

/** What a row started: its config entry, and how to stop it. */
export interface StartedUpstream {
  entry: Record<string, unknown>;
  close(): Promise<void>;
}

export interface UpstreamRow {
  name: string;
  start(): Promise<StartedUpstream>;
  startCrashable(): Promise<StartedUpstream>;
}

/** A stdio entry: the gateway spawns the child per session, so there is nothing to stop here. */
function stdioEntry(target: { command: string; args?: readonly string[] | undefined }): StartedUpstream {
  return { entry: { type: 'stdio', command: target.command, args: [...(target.args ?? [])] }, close: async () => undefined };
}

/** A remote entry: the server runs beside the gateway and is stopped with the row. */
function remoteEntry(type: 'http' | 'sse', server: RemoteUpstream): StartedUpstream {
  return { entry: { type, url: server.url }, close: () => server.close() };
}

export const UPSTREAMS: UpstreamRow[] = [
  {
    name: 'stdio',
    start: async () => stdioEntry(everythingServer()),
    // The recorder fixture exits on its `crash` tool: the stdio child dies mid-call.
    startCrashable: async () => stdioEntry(recorderServer()),
  },
  {
    name: 'http',
    start: async () => remoteEntry('http', await startEverythingHttp()),
    // The SDK's own server over Streamable HTTP; its `crash` tool takes the whole server down.
    startCrashable: async () => remoteEntry('http', await startCrashyRemote('http')),
  },
  {
    name: 'sse',
    start: async () => remoteEntry('sse', await startEverythingSse()),
    startCrashable: async () => remoteEntry('sse', await startCrashyRemote('sse')),
  },
  {
    // A 2026-07-28-only server (the SDK v2's, stateless) reached by 2025 clients through the
    // bridge (docs/eras.md): its era is found by `protocol: auto`; sampling and elicitation are
    // input_required rounds. Its `crash` tool cuts its answer stream and stops the server.
    name: 'http 2026-07-28',
    start: async () => remoteEntry('http', await startModernFixture({ flavour: 'everything' })),
    startCrashable: async () => remoteEntry('http', await startModernFixture({ flavour: 'everything' })),
  },
];
