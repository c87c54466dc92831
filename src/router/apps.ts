/**
 * MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension) behind an aggregate endpoint. A
 * tool names the UI resource its host renders in `_meta.ui.resourceUri` (an earlier draft used the
 * flat key `_meta["ui/resourceUri"]`); the resource is a `ui://` resource of the same server. The
 * aggregate encodes resource URIs per server (resource-uri.ts), so the tool's reference is encoded
 * the same way: the host's `resources/read` of it then reaches the tool's own server. Pure.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { encodeResourceUri } from './resource-uri.ts';

const FLAT_KEY = 'ui/resourceUri';

/** Rewrites, in place, the UI resource references of a listed tool of `target`. */
export function encodeToolUi(target: string, tool: JsonObject): void {
  const meta = tool._meta;
  if (!isObject(meta)) return;
  const ui = meta.ui;
  if (isObject(ui) && typeof ui.resourceUri === 'string') meta.ui = { ...ui, resourceUri: encodeResourceUri(target, ui.resourceUri) };
  if (typeof meta[FLAT_KEY] === 'string') meta[FLAT_KEY] = encodeResourceUri(target, meta[FLAT_KEY]);
}
