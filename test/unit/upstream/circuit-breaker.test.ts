/**
 * The circuit breaker's rules with an explicit clock: what opens it, what it refuses while open,
 * the single half-open probe, the doubling cooldown, and the registry's reset on a changed target.
 */
import { describe, expect, it } from 'vitest';
import type { CircuitBreakerPolicy } from '../../../src/config/types.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { createBreakers } from '../../../src/upstream/breakers.ts';
import { createCircuitBreaker } from '../../../src/upstream/circuit-breaker.ts';
import { stdioTarget } from '../../support/gateway.ts';

const logger = createLogger({ level: 'silent' });
const policy: CircuitBreakerPolicy = { startFailures: 3, timeouts: 2, timeoutCallers: 2, windowMs: 1_000, cooldownMs: 100, maxCooldownMs: 300 };

function clocked(overrides: Partial<CircuitBreakerPolicy> = {}) {
  let t = 10_000;
  const breaker = createCircuitBreaker({ target: 't', policy: { ...policy, ...overrides }, sharedFate: true, logger, now: () => t });
  return { breaker, advance: (ms: number) => (t += ms) };
}

const spawnFailed = () => new GatewayError('GW_UPSTREAM_SPAWN_FAILED', 'spawn failed', { target: 't', reason: 'ENOENT' });
const refusedCode = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as GatewayError).code;
  }
};

describe('circuit breaker', () => {
  it('opens after N consecutive failed starts; a success in between resets the count', () => {
    const { breaker } = clocked();
    breaker.startFailed(spawnFailed());
    breaker.startFailed(spawnFailed());
    breaker.succeeded();
    breaker.startFailed(spawnFailed());
    breaker.startFailed(spawnFailed());
    expect(breaker.state).toBe('closed');
    breaker.startFailed(spawnFailed());
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', cause: 'GW_UPSTREAM_SPAWN_FAILED: ENOENT', consecutiveStartFailures: 3, opened: 1 });
  });

  it('ignores failures that say nothing about the target (a cap, the session ending, a refused initialize)', () => {
    const { breaker } = clocked({ startFailures: 1 });
    breaker.startFailed(new GatewayError('GW_SESSION_LIMIT'));
    breaker.startFailed(new GatewayError('GW_TARGET_UNAVAILABLE', 'x', { target: 't', reason: 'the session ended' }));
    expect(breaker.state).toBe('closed');
    breaker.startFailed(new GatewayError('GW_UPSTREAM_EXITED', 'exited', { target: 't', exitCode: 1 }));
    expect(breaker.snapshot().cause).toBe('GW_UPSTREAM_EXITED: exit code 1');
  });

  it('while open refuses starts with the cause and when to retry; requests pass when it opened for starts', () => {
    const { breaker, advance } = clocked({ startFailures: 1, cooldownMs: 2_500 });
    breaker.startFailed(spawnFailed());
    try {
      breaker.admit('start');
      expect.unreachable();
    } catch (err) {
      expect((err as GatewayError).code).toBe('GW_CIRCUIT_OPEN');
      expect((err as GatewayError).details).toEqual({ target: 't', reason: 'GW_UPSTREAM_SPAWN_FAILED: ENOENT', retryAfterSec: 3 });
    }
    expect(breaker.admit('request')).toBe(false);
    advance(1_000);
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
  });

  it('half-open lets one probe through; its failure re-opens with the cooldown doubled up to the cap; success closes', () => {
    const { breaker, advance } = clocked({ startFailures: 1 });
    breaker.startFailed(spawnFailed());
    advance(100);
    expect(breaker.snapshot().state).toBe('half-open');
    expect(breaker.admit('start')).toBe(true);
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
    breaker.startFailed(spawnFailed());
    expect(breaker.state).toBe('open');
    advance(199);
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
    advance(1);
    expect(breaker.admit('start')).toBe(true);
    breaker.startFailed(spawnFailed());
    advance(299);
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
    advance(1);
    expect(breaker.admit('start')).toBe(true);
    breaker.startFailed(spawnFailed());
    advance(300); // capped at maxCooldownMs
    expect(breaker.admit('start')).toBe(true);
    breaker.succeeded();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', started: true, consecutiveStartFailures: 0, lastFailure: undefined, opened: 4 });
    // The cooldown starts small again.
    breaker.startFailed(spawnFailed());
    advance(100);
    expect(breaker.admit('start')).toBe(true);
  });

  it('a probe that reports nothing frees its slot after one more cooldown', () => {
    const { breaker, advance } = clocked({ startFailures: 1 });
    breaker.startFailed(spawnFailed());
    advance(100);
    expect(breaker.admit('start')).toBe(true);
    advance(99);
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
    advance(1);
    expect(breaker.admit('start')).toBe(true);
  });

  it('timeouts of two callers within the window open it, for requests too; older ones fall out of the window', () => {
    const { breaker, advance } = clocked();
    breaker.timedOut('a');
    advance(1_000);
    breaker.timedOut('b');
    expect(breaker.state).toBe('closed');
    advance(10);
    breaker.timedOut('a');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', cause: 'request timeouts' });
    expect(refusedCode(() => breaker.admit('request'))).toBe('GW_CIRCUIT_OPEN');
    advance(100);
    expect(breaker.admit('request')).toBe(true);
    expect(refusedCode(() => breaker.admit('request'))).toBe('GW_CIRCUIT_OPEN');
    breaker.succeeded();
    expect(breaker.admit('request')).toBe(false);
  });

  it('one caller\'s timeouts never open it, however many (it may have asked for long work)', () => {
    const { breaker, advance } = clocked();
    for (let i = 0; i < 50; i++) {
      breaker.timedOut('only');
      advance(10);
    }
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', opened: 0 });
    // A second caller within the window is the evidence.
    breaker.timedOut('other');
    expect(breaker.state).toBe('open');
  });

  it('timeoutCallers 1: one caller\'s timeouts are enough', () => {
    const { breaker } = clocked({ timeoutCallers: 1 });
    breaker.timedOut('only');
    breaker.timedOut('only');
    expect(breaker.state).toBe('open');
  });

  it('half-open after timeouts: the probe\'s timeout opens it again; other timeouts are counted as usual', () => {
    const { breaker, advance } = clocked();
    breaker.timedOut('a');
    breaker.timedOut('b');
    advance(100);
    expect(breaker.admit('request')).toBe(true);
    breaker.timedOut('c');
    expect(breaker.snapshot().state).toBe('half-open');
    breaker.timedOut('a', true);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', opened: 2 });
  });

  it('per-session children: timeouts never open it, whoever sends them (each child is its session\'s own)', () => {
    let t = 0;
    const breaker = createCircuitBreaker({ target: 't', policy: { ...policy, timeoutCallers: 1 }, sharedFate: false, logger, now: () => t });
    for (let i = 0; i < 20; i++) breaker.timedOut(`caller-${i}`);
    expect(breaker.state).toBe('closed');
    expect(breaker.admit('start')).toBe(false);
    // Failed starts still open it.
    for (let i = 0; i < 3; i++) breaker.startFailed(spawnFailed());
    expect(refusedCode(() => breaker.admit('start'))).toBe('GW_CIRCUIT_OPEN');
  });

  it('0 disables a trigger', () => {
    const { breaker } = clocked({ startFailures: 0, timeouts: 0 });
    for (let i = 0; i < 10; i++) {
      breaker.startFailed(spawnFailed());
      breaker.timedOut(`caller-${i}`);
    }
    expect(breaker.state).toBe('closed');
  });
});

describe('breakers of a gateway', () => {
  it('one per target across sessions; a reload that changes a target resets it, an unchanged one keeps it', () => {
    const a = stdioTarget('a', { command: 'a', circuitBreaker: { ...policy, startFailures: 1 } });
    const b = stdioTarget('b', { command: 'b', circuitBreaker: { ...policy, startFailures: 1 } });
    const breakers = createBreakers([a, b], logger);
    breakers.of(a).startFailed(spawnFailed());
    breakers.of(b).startFailed(spawnFailed());
    expect(breakers.of(a).state).toBe('open');

    const a2 = stdioTarget('a', { command: 'a', circuitBreaker: { ...policy, startFailures: 1 } });
    const b2 = stdioTarget('b', { command: 'b-fixed', circuitBreaker: { ...policy, startFailures: 1 } });
    breakers.retain([a2, b2]);
    expect(breakers.of(a2).state).toBe('open');
    expect(breakers.of(a)).toBe(breakers.of(a2));
    expect(breakers.of(b2).state).toBe('closed');
    // A session still on the old config of b does not count against the new one.
    expect(breakers.of(b)).not.toBe(breakers.of(b2));
  });
});
