import { describe, expect, it } from 'vitest';
import { createRequestLimits, createToolLimits, type SharedBuckets } from '../../../src/auth/rate-limit.ts';
import { GatewayError, isGatewayError } from '../../../src/errors/gateway-error.ts';
import type { JsonObject, JsonRpcRequest } from '../../../src/jsonrpc/types.ts';

const request = (id: number, method = 'tools/list', params?: JsonObject): JsonRpcRequest => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });

function refused(check: () => void): number | undefined {
  try {
    check();
    return undefined;
  } catch (err) {
    if (!isGatewayError(err) || err.code !== 'GW_RATE_LIMITED') throw err;
    return err.details.retryAfterSec as number;
  }
}

describe('rate limits', () => {
  it('none configured: no limiter at all', () => {
    expect(createRequestLimits(undefined)).toBeUndefined();
    expect(createRequestLimits({ perPrincipal: undefined, perTool: undefined, maxKeys: 10 })).toBeUndefined();
  });

  it('a burst, then one request per refill, per principal; notifications are free', () => {
    const limits = createRequestLimits({ perPrincipal: { perSecond: 2, burst: 3 }, perTool: undefined, maxKeys: 10 })!;
    const t = 1_000_000;
    for (let i = 0; i < 3; i++) expect(refused(() => limits.check('a', [request(i)], t))).toBeUndefined();
    expect(refused(() => limits.check('a', [request(4)], t))).toBe(1);
    expect(refused(() => limits.check('a', [{ jsonrpc: '2.0', method: 'notifications/initialized' }], t))).toBeUndefined();
    expect(refused(() => limits.check('b', [request(5)], t))).toBeUndefined();
    expect(refused(() => limits.check('a', [request(6)], t + 500))).toBeUndefined();
    expect(refused(() => limits.check('a', [request(7)], t + 500))).toBe(1);
  });

  it('per tool: keyed by principal, target and tool; one running out leaves the others alone', () => {
    const take = createToolLimits({ perPrincipal: undefined, perTool: { perSecond: 0.1, burst: 2 }, maxKeys: 10 })!;
    expect(refused(() => take('a', 'ev', 'echo', 0))).toBeUndefined();
    expect(refused(() => take('a', 'ev', 'echo', 0))).toBeUndefined();
    expect(refused(() => take('a', 'ev', 'echo', 0))).toBe(10);
    expect(refused(() => take('a', 'ev', 'other', 0))).toBeUndefined();
    expect(refused(() => take('a', 'files', 'echo', 0))).toBeUndefined();
    expect(refused(() => take('b', 'ev', 'echo', 0))).toBeUndefined();
    // The per-principal check no longer counts tools: that is the session's, after routing.
    const limits = createRequestLimits({ perPrincipal: undefined, perTool: { perSecond: 0.1, burst: 1 }, maxKeys: 10 });
    expect(limits).toBeUndefined();
  });

  it('per tool: a principal id holding the separator cannot take from another key', () => {
    const take = createToolLimits({ perPrincipal: undefined, perTool: { perSecond: 0.1, burst: 1 }, maxKeys: 10 })!;
    take('iss#a\u0000t', 'x', 'y', 0);
    expect(refused(() => take('iss#a', 't', 'x\u0000y', 0))).toBeUndefined();
  });

  it('without perTool there is no per-call limiter at all', () => {
    expect(createToolLimits({ perPrincipal: { perSecond: 1, burst: 1 }, perTool: undefined, maxKeys: 10 })).toBeUndefined();
  });

  it('keeps at most maxKeys buckets, forgetting the least recently used', () => {
    const limits = createRequestLimits({ perPrincipal: { perSecond: 0.001, burst: 1 }, perTool: undefined, maxKeys: 2 })!;
    limits.check('a', [request(1)], 0);
    limits.check('b', [request(2)], 0);
    expect(refused(() => limits.check('a', [request(3)], 0))).toBeGreaterThan(0);
    limits.check('c', [request(4)], 0); // evicts b, the least recently used
    expect(refused(() => limits.check('b', [request(5)], 0))).toBeUndefined();
  });
});

describe('rate limits over a shared store (a cluster)', () => {
  const config = { perPrincipal: { perSecond: 1, burst: 1 }, perTool: { perSecond: 1, burst: 1 }, maxKeys: 10 };

  it('in one process a check decides at once: nothing to await', () => {
    const limits = createRequestLimits(config)!;
    expect(limits.check('a', [request(1)], 0)).toBeUndefined();
    expect(createToolLimits(config)!('a', 't', 'echo', 0)).toBeUndefined();
  });

  it('a shared take is awaited: granted, refused with the wait, or refused by the store itself', async () => {
    const codes: string[] = [];
    const answers: Array<number | Error> = [0, 1_500, new GatewayError('GW_RATE_LIMIT_UNAVAILABLE', undefined, { retryAfterSec: 1 })];
    const kinds: string[] = [];
    const shared: SharedBuckets = (kind, _bucket, local) => {
      kinds.push(kind);
      expect(local('k', 0)).toBe(0); // this process's own bucket, for failMode local
      return () => {
        const next = answers.shift()!;
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      };
    };
    const limits = createRequestLimits(config, (code) => codes.push(code), shared)!;
    await expect(limits.check('a', [request(1)])).resolves.toBeUndefined();
    await expect(limits.check('a', [request(2)])).rejects.toMatchObject({ code: 'GW_RATE_LIMITED', details: { retryAfterSec: 2 } });
    await expect(limits.check('a', [request(3)])).rejects.toMatchObject({ code: 'GW_RATE_LIMIT_UNAVAILABLE' });
    expect(codes).toEqual(['GW_RATE_LIMITED', 'GW_RATE_LIMIT_UNAVAILABLE']);
    createToolLimits(config, undefined, shared);
    expect(kinds).toEqual(['principal', 'tool']);
  });
});
