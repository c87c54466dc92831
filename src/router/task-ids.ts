/**
 * Task ids behind an aggregate endpoint (SEP-2663, the `io.modelcontextprotocol/tasks` extension).
 * A member answers a `tools/call` with a task (`resultType: "task"`) whose `taskId` only that member
 * knows; the client gets instead a sealed id naming the member, the member's own id, the caller it
 * was created for and the tool (its name as the client knows it, before the prefix), so a later
 * `tasks/get`, `tasks/update` or `tasks/cancel` is routed with no table and judged again on the
 * tool (aggregate-tasks.ts). AES-256-GCM, as sealed session ids are (cluster/sealed-id.ts); the IV is
 * derived from the plaintext (an HMAC under a second key), so one task always gets the same id,
 * which the SEP asks ("stable identifier"). A token that does not open, or opens for another
 * caller, is no task. Pure but for the key (random per process unless one is given).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export interface TaskOwner {
  /** The member (target) that created the task. */
  readonly target: string;
  /** The member's own task id. */
  readonly task: string;
  /** The principal id it was created for; '' without client authentication. */
  readonly principal: string;
  /** The tool it runs, as the client named it before the prefix (after overrides). */
  readonly tool: string;
}

export interface TaskIds {
  seal(owner: TaskOwner): string;
  /** The owner a sealed id names, or undefined when it is not one of ours. */
  open(token: string): TaskOwner | undefined;
}

const PREFIX = 'task1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Far longer than any id we seal (names <= 128, upstream ids of a few hundred bytes): refused unread. */
const MAX_TOKEN_CHARS = 4_096;
const TOKEN = /^task1\.[A-Za-z0-9_-]+$/;

export function createTaskIds(key: Buffer = randomBytes(64)): TaskIds {
  const encryption = key.subarray(0, 32);
  const ivKey = key.subarray(32);
  return {
    seal({ target, task, principal, tool }) {
      const plain = Buffer.from(JSON.stringify([target, task, principal, tool]), 'utf8');
      const iv = createHmac('sha256', ivKey).update(plain).digest().subarray(0, IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', encryption, iv, { authTagLength: TAG_BYTES });
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    open(token) {
      if (token.length > MAX_TOKEN_CHARS || !TOKEN.test(token)) return undefined;
      const bytes = Buffer.from(token.slice(PREFIX.length), 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', encryption, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
        const parts: unknown = JSON.parse(text);
        if (!Array.isArray(parts) || parts.length !== 4 || !parts.every((p) => typeof p === 'string')) return undefined;
        const [target, task, principal, tool] = parts as [string, string, string, string];
        return { target, task, principal, tool };
      } catch {
        return undefined;
      }
    },
  };
}
