/**
 * The guardrails of the call path (docs/governance.md, "Guardrail hooks"): a target's HTTP hooks,
 * asked about each matching request before it is forwarded and about each result before it is answered, and
 * the built-in redaction of tool results. The session core (requests.ts) calls `request` once a
 * request is routed (so the target and the server's own names are known, on every path and era)
 * and `response` when its answer comes back; both return undefined, synchronously and without
 * allocating, for a target with nothing configured.
 *
 * Hooks run in config order; each sees what the previous one let through (a `modify` replaces
 * it); the first `deny` ends the walk. A hook that fails follows its failureMode.
 */
import { randomUUID } from 'node:crypto';
import type { HookConfig, TargetConfig } from '../../config/types.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../jsonrpc/types.ts';
import { dropRawText } from '../../jsonrpc/wire-text.ts';
import type { Logger } from '../../log/logger.ts';
import type { Observer } from '../../log/observer.ts';
import { compileGlobs } from '../../router/glob.ts';
import { HookCallError, type HookClient } from '../../transport/hook-client.ts';
import { type HookPhase, type HookVerdict, parseHookAnswer } from './answer.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { SIGNATURE_HEADER, signHookBody } from './signature.ts';

export interface CallGuard {
  /**
   * The request to forward once the target's request-phase hooks let it through (params maybe
   * replaced); rejects with GW_HOOK_DENIED or GW_HOOK_FAILED. Undefined: no hook applies, forward
   * `request` as it is. `key`: the request's own record, which its response is judged under.
   */
  request(key: object, principal: string | undefined, target: TargetConfig, request: JsonRpcRequest): Promise<JsonRpcRequest> | undefined;
  /**
   * The answer to deliver once the response-phase hooks let it through; undefined: deliver
   * `response` (redacted in place if the target redacts). `params`: the params the hooks see when
   * none were kept under `key` (a task's result is judged with the params of the call that made it).
   */
  response(key: object, principal: string | undefined, target: TargetConfig, method: string, response: JsonRpcResponse, params?: JsonObject): Promise<JsonRpcResponse> | undefined;
  /**
   * Redacts, in place, what an upstream of `target` asks the client (a sampling or elicitation
   * request's params: they reach the model as a tool result does); the number of matches replaced.
   */
  redactAsked(target: TargetConfig, params: JsonObject): number;
  /**
   * The targets of the config in force (start, reload): a target's hooks and redaction are read
   * from here, so a reload reaches live sessions at once; a session of a target the reload removed
   * keeps its own.
   */
  retain(targets: Iterable<TargetConfig>): void;
}

interface CompiledHook {
  readonly index: number;
  readonly config: HookConfig;
  readonly methods: RegExp;
  /** Calls waiting on this hook now (all sessions): capped by config.maxConcurrent. */
  inflight: number;
}

interface Compiled {
  readonly request: readonly CompiledHook[];
  readonly response: readonly CompiledHook[];
  readonly redact: Redactor | undefined;
}

export interface CallGuardOptions {
  readonly client: HookClient;
  readonly observer: Observer;
  readonly logger: Logger;
}

const matching = (hooks: readonly CompiledHook[], method: string) => hooks.filter((hook) => hook.methods.test(method));

/** What judging a message needs of its guard. */
interface GuardState {
  readonly client: HookClient;
  readonly observer: Observer;
  readonly log: Logger;
  /** The params a request was forwarded with, for its response-phase hooks (only when some apply). */
  readonly paramsOf: WeakMap<object, JsonObject | undefined>;
}

export function createCallGuard({ client, observer, logger }: CallGuardOptions): CallGuard {
  return new Guard(client, observer, logger.child({ component: 'hooks' }));
}

const hasGuardrails = (target: TargetConfig) => target.hooks !== undefined || target.redact !== undefined;

/**
 * The guard is its own state (GuardState, the compiled hooks per target config, the targets in
 * force); its methods are on the class, one copy for the gateway. Judging (ask, judgeRequest,
 * judgeResponse, redactIn) is module functions over the state.
 */
class Guard implements CallGuard, GuardState {
  readonly client: HookClient;
  readonly observer: Observer;
  readonly log: Logger;
  readonly paramsOf = new WeakMap<object, JsonObject | undefined>();
  /** Per target config object: a reload's new target gets fresh hooks (and fresh counts). */
  private readonly compiledOf = new WeakMap<TargetConfig, Compiled>();
  /** Every target in force by name, and whether any of them has guardrails (false: the hot path returns at once). */
  private current = new Map<string, TargetConfig>();
  private guarded = false;

  constructor(client: HookClient, observer: Observer, log: Logger) {
    this.client = client;
    this.observer = observer;
    this.log = log;
  }

  private effective(target: TargetConfig): TargetConfig {
    return this.current.get(target.name) ?? target;
  }

  private compile(target: TargetConfig): Compiled {
    let compiled = this.compiledOf.get(target);
    if (compiled !== undefined) return compiled;
    const hooks = (target.hooks ?? []).map((config, index) => ({ index, config, methods: compileGlobs(config.methods) as RegExp, inflight: 0 }));
    compiled = {
      request: hooks.filter((h) => h.config.phase !== 'response'),
      response: hooks.filter((h) => h.config.phase !== 'request'),
      redact: target.redact === undefined ? undefined : createRedactor(target.redact),
    };
    this.compiledOf.set(target, compiled);
    return compiled;
  }

  request(key: object, principal: string | undefined, member: TargetConfig, request: JsonRpcRequest): Promise<JsonRpcRequest> | undefined {
    if (!this.guarded && member.hooks === undefined) return undefined;
    const target = this.effective(member);
    if (target.hooks === undefined) return undefined;
    const compiled = this.compile(target);
    const hooks = matching(compiled.request, request.method);
    const keep = compiled.response.some((hook) => hook.methods.test(request.method));
    if (hooks.length === 0) {
      if (keep) this.paramsOf.set(key, request.params);
      return undefined;
    }
    return judgeRequest(this, key, hooks, keep, principal, target.name, request);
  }

  response(key: object, principal: string | undefined, member: TargetConfig, method: string, response: JsonRpcResponse, given?: JsonObject): Promise<JsonRpcResponse> | undefined {
    if (!this.guarded && !hasGuardrails(member)) return undefined;
    const target = this.effective(member);
    if (!hasGuardrails(target) || !('result' in response) || !isObject(response.result)) return undefined;
    const compiled = this.compile(target);
    const hooks = matching(compiled.response, method);
    if (hooks.length === 0) {
      redactIn(this.observer, compiled.redact, target.name, method, response.result, response);
      return undefined;
    }
    const params = this.paramsOf.get(key) ?? given;
    this.paramsOf.delete(key);
    return judgeResponse(this, hooks, compiled.redact, params, principal, target.name, method, response);
  }

  redactAsked(member: TargetConfig, params: JsonObject): number {
    if (!this.guarded && member.redact === undefined) return 0;
    const target = this.effective(member);
    if (target.redact === undefined) return 0;
    // Every string of the params (a message's content, an elicitation's text): walked in place as structured content is.
    const replaced = this.compile(target).redact?.({ structuredContent: params }) ?? 0;
    if (replaced > 0) this.observer.hooked(target.name, 'request', 'redacted');
    return replaced;
  }

  retain(targets: Iterable<TargetConfig>): void {
    this.current = new Map([...targets].map((target) => [target.name, target]));
    this.guarded = [...this.current.values()].some(hasGuardrails);
  }
}

/** A hook that could not judge: pass (open) or refuse (closed); never its URL or secret in the line. */
function failed({ observer, log }: GuardState, hook: CompiledHook, target: string, phase: HookPhase, failure: string, detail: string): undefined {
  const line = { target, hook: hook.index, phase, failure, detail };
  if (hook.config.failureMode === 'open') {
    observer.hooked(target, phase, 'failed-open');
    log.warn(line, 'a hook failed; the message passes (failureMode open)');
    return undefined;
  }
  const correlationId = randomUUID();
  observer.hooked(target, phase, 'failed-closed');
  log.warn({ ...line, correlationId }, 'a hook failed; the message is refused (failureMode closed)');
  throw new GatewayError('GW_HOOK_FAILED', undefined, { target, phase, correlationId }, { internal: { hook: hook.index } });
}

/** One hook's verdict; undefined when it failed open. */
async function ask(g: GuardState, hook: CompiledHook, target: string, phase: HookPhase, method: string, payload: JsonObject, params: JsonObject | undefined): Promise<HookVerdict | undefined> {
  const { config } = hook;
  if (hook.inflight >= config.maxConcurrent) return failed(g, hook, target, phase, 'busy', `${config.maxConcurrent} calls already wait on this hook`);
  hook.inflight++;
  let answer: unknown;
  try {
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = config.secret === undefined ? {} : { [SIGNATURE_HEADER]: signHookBody(config.secret, body) };
    answer = await g.client.post({ url: config.url, body, headers, timeoutMs: config.timeoutMs, maxAnswerBytes: config.maxAnswerBytes });
  } catch (err) {
    return err instanceof HookCallError ? failed(g, hook, target, phase, err.failure, err.message) : failed(g, hook, target, phase, 'error', 'the hook call failed');
  } finally {
    hook.inflight--;
  }
  const verdict = parseHookAnswer(answer, phase, method, params);
  if (typeof verdict === 'string') return failed(g, hook, target, phase, 'invalid-answer', verdict);
  g.observer.hooked(target, phase, verdict.action);
  if (verdict.action === 'deny') {
    g.log.info({ target, hook: hook.index, phase, method }, 'a hook denied a message');
    // `internal`: which hook, for the audit record's rule (chain/judged.ts); never sent to the client.
    throw new GatewayError('GW_HOOK_DENIED', `Denied by a gateway hook: ${verdict.reason}`, { target, phase, reason: verdict.reason }, { internal: { hook: hook.index } });
  }
  return verdict;
}

async function judgeRequest(g: GuardState, key: object, hooks: readonly CompiledHook[], keep: boolean, principal: string | undefined, target: string, request: JsonRpcRequest): Promise<JsonRpcRequest> {
  const { method } = request;
  let params = request.params;
  for (const hook of hooks) {
    const verdict = await ask(g, hook, target, 'request', method, { phase: 'request', principal: principal ?? null, target, method, params: params ?? {} }, params);
    // The gateway's own _meta (progress token, trace context) stays what it was.
    if (verdict?.action === 'modify') params = request.params?._meta === undefined ? { ...verdict.value } : { ...verdict.value, _meta: request.params._meta };
  }
  if (keep) g.paramsOf.set(key, params);
  return params === request.params ? request : { ...request, params: params as JsonObject };
}

async function judgeResponse(
  g: GuardState,
  hooks: readonly CompiledHook[],
  redact: Redactor | undefined,
  params: JsonObject | undefined,
  principal: string | undefined,
  target: string,
  method: string,
  response: JsonRpcResponse,
): Promise<JsonRpcResponse> {
  let result = (response as { result: JsonObject }).result;
  for (const hook of hooks) {
    const verdict = await ask(g, hook, target, 'response', method, { phase: 'response', principal: principal ?? null, target, method, params: params ?? {}, result }, params);
    if (verdict?.action === 'modify') result = verdict.value;
  }
  if (result !== (response as { result: JsonObject }).result) return { ...response, result: redactIn(g.observer, redact, target, method, result) };
  redactIn(g.observer, redact, target, method, result, response);
  return response;
}

/**
 * Redacts `result` in place. A large answer is forwarded as the line it was read from
 * (jsonrpc/wire-text.ts): once anything in it was replaced, `response`'s kept line no longer says
 * what the client may see, so it is dropped (issue 30 probe: a secret after 16 KiB came back in clear).
 */
function redactIn(observer: Observer, redact: Redactor | undefined, target: string, method: string, result: JsonObject, response?: JsonRpcResponse): JsonObject {
  if (redact !== undefined && method === 'tools/call' && redact(result) > 0) {
    if (response !== undefined) dropRawText(response);
    observer.hooked(target, 'response', 'redacted');
  }
  return result;
}
