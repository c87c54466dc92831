/**
 * Resource URIs inside answers get the same `<target>+<uri>` encoding as listed resources, so a
 * client can read what a tool returned or a prompt embedded through the aggregate endpoint:
 * `resources/read` contents, `resource_link` and embedded `resource` content blocks
 * (2025-06-18 server/tools "Resource Links", "Embedded Resources").
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { encodeResourceUri } from './resource-uri.ts';

function encodeBlock(target: string, block: unknown): void {
  if (!isObject(block)) return;
  if (block.type === 'resource_link' && typeof block.uri === 'string') block.uri = encodeResourceUri(target, block.uri);
  else if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.uri === 'string') {
    block.resource.uri = encodeResourceUri(target, block.resource.uri);
  }
}

/** Rewrites, in place, the URIs of an answer to `method` from `target`. */
export function encodeResultUris(method: string, target: string, result: JsonObject): void {
  switch (method) {
    case 'resources/read':
      if (Array.isArray(result.contents)) {
        for (const item of result.contents as unknown[]) {
          if (isObject(item) && typeof item.uri === 'string') item.uri = encodeResourceUri(target, item.uri);
        }
      }
      return;
    case 'tools/call':
      if (Array.isArray(result.content)) for (const block of result.content as unknown[]) encodeBlock(target, block);
      return;
    case 'prompts/get':
      if (Array.isArray(result.messages)) {
        for (const message of result.messages as unknown[]) if (isObject(message)) encodeBlock(target, message.content);
      }
      return;
    default:
      return;
  }
}
