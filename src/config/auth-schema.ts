/**
 * The `gateway.auth` section: who may reach the gateway's MCP routes. Absent: no client
 * authentication (the start-up log says so loudly when the gateway is exposed). Present: every MCP
 * route needs a valid credential, unless `anonymous: true` says otherwise in so many words.
 */
import { z } from 'zod';

const anObject = { error: 'expected an object' } as const;
const text = () => z.string({ error: 'expected a string' }).min(1, { error: 'must not be empty', abort: true });
const httpUrl = text().refine(
  (value) => {
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  },
  { error: 'expected an http(s) URL' },
);
const publicOrigin = text().refine(
  (value) => {
    try {
      return new URL(value).origin === value;
    } catch {
      return false;
    }
  },
  { error: 'expected an origin such as https://mcp.example.com (no path or trailing slash)' },
);
export const scope = text().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, { error: 'a scope is printable ASCII without spaces, quotes or backslashes' });

/** Asymmetric algorithms only: an HMAC secret shared with every client is not a verification key, and `none` never. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

const apiKeySchema = z
  .strictObject(
    {
      /** The principal's name: `key:<name>` in logs and session binding. */
      name: text().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'use 1-64 letters, digits, "_", "." or "-"' }),
      /** The key's SHA-256, hex: the config need not hold the key itself. */
      sha256: z.string({ error: 'expected a string' }).regex(/^[0-9a-f]{64}$/i, { error: 'expected 64 hex digits (sha256 of the key)' }).optional(),
      /** The key itself, usually `${ENV_VAR}`; at least 16 characters. Hashed at load, never logged. */
      key: z.string({ error: 'expected a string' }).min(16, { error: 'an API key needs at least 16 characters' }).optional(),
      /** Scopes this key grants. */
      scopes: z.array(scope, { error: 'expected a list of scopes' }).default([]),
    },
    anObject,
  )
  .refine((k) => (k.sha256 === undefined) !== (k.key === undefined), { error: 'give exactly one of "sha256" or "key"' });

const jwtSchema = z
  .strictObject(
    {
      /** Issuers whose tokens are accepted (`iss`, exact match). */
      issuers: z.array(httpUrl, { error: 'expected a list of issuer URLs' }).min(1, { error: 'name at least one issuer' }),
      /** Where the issuers' signing keys are (cached per the response's max-age, clamped; refetched early for an unknown `kid`). */
      jwksUrl: httpUrl.optional(),
      /** 60 s at least: a JWKS served with `max-age=0` or `no-store` must not cost one fetch per token. */
      jwksMinCacheSec: z.int({ error: 'expected an integer' }).min(0).max(86_400).default(60),
      /** 3600 s at most: a key the issuer withdrew stops verifying here within the hour. */
      jwksMaxCacheSec: z.int({ error: 'expected an integer' }).min(1).max(604_800).default(3_600),
      /** 30 s at least between two fetches of the JWKS: tokens with made-up `kid`s cannot make the gateway hammer it. */
      jwksRefetchSec: z.int({ error: 'expected an integer' }).min(1).max(3_600).default(30),
      /** Or the public keys themselves (JWK objects). */
      keys: z.array(z.record(z.string(), z.unknown()), { error: 'expected a list of JWK objects' }).min(1).optional(),
      /** Asymmetric algorithms accepted; `none` and HMAC are never accepted. */
      algorithms: z.array(z.enum(JWT_ALGORITHMS, { error: `expected some of ${JWT_ALGORITHMS.join(', ')}` })).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
      /** 60 s of clock skew allowed on `exp` and `nbf`, 300 at most. */
      clockSkewSec: z.int({ error: 'expected an integer' }).min(0).max(300, { error: 'at most 300 seconds' }).default(60),
      /** Audiences accepted besides the resource URL the client called ([]: only that URL, RFC 8707). */
      audiences: z.array(text(), { error: 'expected a list of audiences' }).default([]),
    },
    anObject,
  )
  .refine((j) => (j.jwksUrl === undefined) !== (j.keys === undefined), { error: 'give exactly one of "jwksUrl" or "keys"' })
  .refine((j) => j.jwksMinCacheSec <= j.jwksMaxCacheSec, { error: '"jwksMinCacheSec" must not exceed "jwksMaxCacheSec"', path: ['jwksMinCacheSec'] });

export const authSchema = z
  .strictObject(
    {
      /** false: a request without a credential gets 401. true lets it in as the anonymous principal. */
      anonymous: z.boolean({ error: 'expected true or false' }).default(false),
      /** Unset: `http://<Host>` once the Host check found it names this gateway, port included. Behind a TLS-terminating proxy: its public origin. */
      publicUrl: publicOrigin.optional(),
      apiKeys: z.array(apiKeySchema, { error: 'expected a list of API keys' }).default([]),
      /** "authorization": `Authorization: Bearer <key>`. Another header carries the key as it is. */
      apiKeyHeader: text().regex(/^[A-Za-z0-9-]+$/, { error: 'expected a header name' }).default('authorization'),
      jwt: jwtSchema.optional(),
      /** Scopes every request needs ([]: none); 403 insufficient_scope names them. */
      scopes: z.array(scope, { error: 'expected a list of scopes' }).default([]),
      /**
       * How a call needing scopes the token lacks (mcpServers.<name>.requiredScopes) is refused.
       * "http": 403 insufficient_scope naming the missing scopes, as the 2026-07-28 authorization
       * rule (SEP-2350) says, so a spec client re-authorizes by itself. "jsonrpc": a JSON-RPC error
       * at HTTP 200 with data.requiredScopes, for clients that take a 403 on POST for a dead connection.
       */
      stepUp: z.enum(['http', 'jsonrpc'], { error: 'expected "http" or "jsonrpc"' }).default('http'),
      /** Authorization servers named in the protected-resource metadata. Unset: the JWT issuers. */
      authorizationServers: z.array(httpUrl, { error: 'expected a list of URLs' }).optional(),
    },
    anObject,
  )
  .refine((a) => a.anonymous || a.apiKeys.length > 0 || a.jwt !== undefined, {
    error: 'auth needs a method: "apiKeys", "jwt", or "anonymous: true" said explicitly',
  });

export type AuthSection = z.output<typeof authSchema>;

const globs = (what: string) => z.array(text(), { error: `expected a list of ${what} (globs: * and ?)` });

export const ruleSchema = z.strictObject(
  {
    /** allow grants, deny takes away; deny wins. */
    effect: z.enum(['allow', 'deny'], { error: 'expected "allow" or "deny"' }).default('allow'),
    /** Principal ids (`key:<name>`, `<issuer>#<subject>`, `anonymous`) the rule is for. */
    principals: globs('principal ids').default(['*']),
    /** Scopes the principal must all hold for the rule to apply ([]: none needed). */
    scopes: z.array(scope, { error: 'expected a list of scopes' }).default([]),
    /**
     * Token claims the principal must carry: each named claim (a string, or a list of strings)
     * must have a value matching the glob, or one of the globs, given for it ({}: none needed).
     */
    claims: z
      .record(
        text().max(256, { error: 'a claim name of at most 256 characters' }),
        z.union([text(), z.array(text(), { error: 'expected a glob or a list of globs' }).min(1, { error: 'name at least one glob' })], {
          error: 'expected a glob or a list of globs',
        }),
        { error: 'expected claim names with a glob or a list of globs' },
      )
      .refine((c) => Object.keys(c).length <= 16, { error: 'at most 16 claims per rule' })
      .default({}),
    servers: globs('server names').default(['*']),
    /**
     * Names as the server gives them (no aggregate prefix). Unset in an allow rule: every name. In a
     * deny rule: none, unless the rule lists no kind at all, which denies the whole server.
     */
    tools: globs('tool names').optional(),
    prompts: globs('prompt names').optional(),
    /** Resource and template URIs. */
    resources: globs('resource URIs').optional(),
  },
  anObject,
);

/** Present: what no allow rule grants is denied, and a deny rule wins over every allow. */
export const policySchema = z.strictObject(
  { rules: z.array(ruleSchema, { error: 'expected a list of rules' }).default([]) },
  anObject,
);

export type PolicySection = z.output<typeof policySchema>;

const bucketSchema = z.strictObject(
  {
    /** Sustained rate. */
    perSecond: z.number({ error: 'expected a number' }).positive({ error: 'must be above 0' }),
    /** Requests allowed at once after a quiet spell. Default: one second's worth (at least 1). */
    burst: z.int({ error: 'expected an integer' }).min(1).optional(),
  },
  anObject,
);

/** Token buckets keyed on the principal (not the session: re-initializing does not reset them). */
export const rateLimitsSchema = z.strictObject(
  {
    /** Every JSON-RPC request of a principal. */
    perPrincipal: bucketSchema.optional(),
    /** tools/call per principal and tool name. */
    perTool: bucketSchema.optional(),
    /** 10000 buckets at most per kind; the least recently used goes first. */
    maxKeys: z.int({ error: 'expected an integer' }).min(1).default(10_000),
  },
  anObject,
);
