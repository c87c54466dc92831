/**
 * Where a timeout is counted: a per-session child's stay with it (the breaker never hears them,
 * and after `timeouts` in the window it is reported hung); a shared child's and a remote target's
 * go to the breaker with their caller.
 */
import { describe, expect, it } from 'vitest';
import type { CircuitBreakerPolicy } from '../../../src/config/types.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { createCircuitBreaker } from '../../../src/upstream/circuit-breaker.ts';
import { createConnectionHealth, ownsChild } from '../../../src/upstream/connection-health.ts';
import { remoteTarget, stdioTarget } from '../../support/gateway.ts';

const logger = createLogger({ level: 'silent' });
const policy: CircuitBreakerPolicy = { startFailures: 3, timeouts: 3, timeoutCallers: 2, windowMs: 1_000, cooldownMs: 100, maxCooldownMs: 300 };

describe('connection health', () => {
  it('a per-session child: its own timeouts end it after `timeouts` in the window; the breaker never hears them', () => {
    let t = 0;
    const target = stdioTarget('own', { command: 'x', circuitBreaker: policy });
    const breaker = createCircuitBreaker({ target: 'own', policy: { ...policy, timeoutCallers: 1 }, sharedFate: true, logger });
    const health = createConnectionHealth(target, breaker, () => t);
    expect(ownsChild(target)).toBe(true);
    expect(health.timedOut('a', false)).toBeUndefined();
    t += 2_000; // out of the window
    expect(health.timedOut('a', false)).toBeUndefined();
    expect(health.timedOut('a', false)).toBeUndefined();
    const hung = health.timedOut('a', true);
    expect(hung).toMatchObject({ code: 'GW_UPSTREAM_TIMEOUT', details: { target: 'own', reason: '3 requests timed out within 1000 ms' } });
    expect(breaker.state).toBe('closed');
    // A fresh connection starts from zero.
    health.reset();
    expect(health.timedOut('a', false)).toBeUndefined();
  });

  it('a shared child and a remote target: the breaker hears each timeout with its caller; nothing is ended', () => {
    for (const target of [
      stdioTarget('pool', { command: 'x', circuitBreaker: policy, upstream: { mode: 'shared', children: 1 } }),
      remoteTarget('far', { type: 'http', url: 'http://127.0.0.1:9/mcp', circuitBreaker: policy }),
    ]) {
      const breaker = createCircuitBreaker({ target: target.name, policy, sharedFate: true, logger });
      const health = createConnectionHealth(target, breaker);
      expect(ownsChild(target)).toBe(false);
      for (let i = 0; i < 5; i++) expect(health.timedOut('one', false)).toBeUndefined();
      expect(breaker.state).toBe('closed');
      expect(health.timedOut('two', false)).toBeUndefined();
      expect(breaker.state).toBe('open');
    }
  });
});
