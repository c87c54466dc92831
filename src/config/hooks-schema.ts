/**
 * The guardrail keys of a server entry (`mcpServers.<name>.hooks` and `.redact`): HTTP hooks asked
 * about each matching request and/or result, and the built-in secret redaction of tool results
 * (session/hooks/, docs/governance.md, "Guardrail hooks"). Strict like the rest of the config;
 * every default with its reason.
 */
import { z } from 'zod';
import { anObject, boolean, isPlainHttpUrl, isRegExp, MAX_DURATION_MS, MiB, nonEmptyString, positive, scalarString } from './schema-kit.ts';


export const hookSchema = z.strictObject(
  {
    /** Where the hook's JSON is POSTed; no user:password@ (a secret in a URL ends up in logs). */
    url: nonEmptyString().refine(isPlainHttpUrl, { error: 'expected an absolute http:// or https:// URL without user:password@' }),
    /** ["tools/call"]: the call is what a guardrail judges; lists and reads are opted into by name. */
    methods: z.array(nonEmptyString(), { error: 'expected a list of method globs' }).min(1, { error: 'list at least one method glob' }).default(['tools/call']),
    /**
     * "request": one round trip per matching call, before it leaves the gateway. Judging results
     * too ("response" or "both") doubles the hook's latency, so it is asked for by name.
     */
    phase: z.enum(['request', 'response', 'both'], { error: 'expected "request", "response" or "both"' }).default('request'),
    /**
     * 2 s: the hook sits on the call's critical path; a policy service next to the gateway answers
     * in milliseconds, and a stuck one must not hold calls for the upstream's minutes-long timeout.
     */
    timeoutMs: positive(MAX_DURATION_MS).default(2_000),
    /**
     * "closed": a guardrail that lets everything through while it is down is off exactly when it
     * is overloaded or attacked. "open" is for advisory hooks (a warn line and a metric per miss).
     */
    failureMode: z.enum(['open', 'closed'], { error: 'expected "open" or "closed"' }).default('closed'),
    /**
     * Unset: unsigned. The shared key of the X-Switchboard-Signature header (HMAC-SHA256 over
     * "<unix time>.<body>"); usually `${ENV_VAR}`. Never logged, never in error data.
     */
    secret: scalarString().pipe(z.string().min(16, { error: 'use a secret of at least 16 characters' })).optional(),
    /** 64 calls waiting on this hook at once: one more is a hook failure (failureMode), never a queue. */
    maxConcurrent: positive(10_000).default(64),
    /** 4 MiB: a "modify" answer carries a whole result; a larger answer is a hook failure, not memory growth. */
    maxAnswerBytes: positive(256 * MiB).default(4 * MiB),
  },
  anObject,
);

export const redactSchema = z.strictObject(
  {
    /** true: writing the block is the opt-in; the built-in patterns (keys, tokens) are the point of it. */
    secrets: boolean().default(true),
    /** []: only the built-in patterns. JavaScript regular expressions, matched in text content. */
    patterns: z.array(nonEmptyString().refine(isRegExp, { error: 'not a valid regular expression' }), { error: 'expected a list of regular expressions' }).default([]),
    /** "[REDACTED]": visible to the model and the user, so a missing value is not mistaken for an empty one. */
    marker: z.string({ error: 'expected a string' }).max(100, { error: 'use a marker of at most 100 characters' }).default('[REDACTED]'),
  },
  anObject,
);

/** The keys every server kind gets (server-schema.ts spreads them in). */
export const guardrailKeys = {
  /** []: no hook; nothing runs on the call path. */
  hooks: z.array(hookSchema, { error: 'expected a list of hooks' }).max(16, { error: 'at most 16 hooks per server' }).default([]),
  /** Unset: tool results pass unredacted (off by default, as redaction rewrites what the server said). */
  redact: redactSchema.optional(),
};
