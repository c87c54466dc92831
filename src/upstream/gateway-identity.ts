/**
 * How the gateway names itself where it speaks for itself: the serverInfo of an aggregate's
 * initialize answer, and the clientInfo of a handshake or a 2026 request (the era probe) it
 * composes without a client's. Here, below session/, so upstream/ can send it too.
 */
import { readFileSync } from 'node:fs';
import type { JsonObject } from '../jsonrpc/types.ts';

function readVersion(): string {
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version = typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined;
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The gateway's version (package.json). */
export const VERSION = readVersion();

/** The gateway's own serverInfo in an aggregate initialize answer. */
export const GATEWAY_SERVER_INFO: JsonObject = Object.freeze({ name: 'switchboard', title: 'Switchboard MCP gateway', version: VERSION });

/** The clientInfo of a handshake or request the gateway composes on its own or a client's behalf. */
export const GATEWAY_CLIENT_INFO: JsonObject = Object.freeze({ name: 'switchboard', title: 'Switchboard MCP gateway', version: VERSION });
