/**
 * One target's pinning as a session's member sees it: the registry's judgement (pin-registry.ts)
 * plus what each upstream connection last showed, so that a call is judged against the definition
 * the upstream that will run it listed, not another session's child. A connection's memory of a
 * kind is dropped when the upstream says that list changed, and a new connection (a restart)
 * starts with none: the call path then reads the list again before deciding (session/pinning.ts).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { PIN_KINDS, type PinKind } from './canonical.ts';
import type { PinChange } from './pins-file.ts';
import type { PinMode, PinRegistry } from './pin-registry.ts';

export interface PinGate {
  readonly target: string;
  readonly mode: PinMode;
  /**
   * Judges the items of a list answer from `connection` and returns the keys to withhold (the
   * caller leaves them out); undefined when `kind` is no pinned list.
   */
  judge(connection: object, kind: PinKind, result: JsonObject): Set<string>;
  /** What a call naming `key` gets: undefined (serve), the refusal, or 'unjudged' (read the list first). */
  check(connection: object, kind: PinKind, key: string): GatewayError | 'unjudged' | undefined;
  /** See PinRegistry.sealed and seal. */
  sealed(kind: PinKind): boolean;
  seal(kind: PinKind, incomplete?: string): void;
  /** The upstream on `connection` said its `kind` list changed. */
  forget(connection: object, kind: PinKind): void;
}

const WORDS: Record<PinKind, string> = { tool: 'Tool', prompt: 'Prompt', resourceTemplate: 'Resource template', skill: 'Skill' };

/** The catalog error a call to a withheld item gets: what changed, and how to let it through. */
export function changedError(change: PinChange): GatewayError {
  const what = change.changed.length > 0 ? change.changed.join(', ') : 'definition';
  const danger = change.dangers.length > 0 ? `; dangerous: ${change.dangers.map((d) => d.detail).join('; ')}` : '';
  // The key field only "changes" when nothing was pinned under it: an item added after the list was pinned.
  const news = change.changed.includes(PIN_KINDS[change.kind].key);
  return new GatewayError(
    'GW_DEFINITION_CHANGED',
    `${WORDS[change.kind]} "${change.key}" of server "${change.target}" ${news ? 'is new since its list was pinned' : `changed since it was approved (${what})`}${danger}; refused until an operator approves it`,
    { target: change.target, kind: change.kind, name: change.key, changed: [...change.changed], dangers: change.dangers.map((d) => d.code), hash: change.hash },
  );
}

export function createPinGate(registry: PinRegistry, target: string, mode: PinMode): PinGate {
  /** Per upstream connection: kind -> key -> the hash it listed. Weak: a closed connection's goes with it. */
  const shown = new WeakMap<object, Record<PinKind, Map<string, string>>>();
  const stateOf = (connection: object) => {
    let state = shown.get(connection);
    if (state === undefined) shown.set(connection, (state = { tool: new Map(), prompt: new Map(), resourceTemplate: new Map(), skill: new Map() }));
    return state;
  };
  return {
    target,
    mode,
    judge(connection, kind, result) {
      const items = result[PIN_KINDS[kind].resultKey];
      if (!Array.isArray(items)) return new Set();
      const { seen, withheld } = registry.judge(target, mode, kind, items);
      const state = stateOf(connection)[kind];
      for (const [key, hash] of seen) state.set(key, hash);
      return withheld;
    },
    check(connection, kind, key) {
      const hash = shown.get(connection)?.[kind].get(key);
      if (hash === undefined) return 'unjudged';
      const verdict = registry.verdict(target, mode, kind, key, hash);
      if (verdict === undefined || verdict === 'unjudged') return verdict;
      registry.refused(verdict);
      return changedError(verdict);
    },
    sealed: (kind) => registry.sealed(target, kind),
    seal: (kind, incomplete) => registry.seal(target, kind, incomplete),
    forget(connection, kind) {
      shown.get(connection)?.[kind].clear();
    },
  };
}
