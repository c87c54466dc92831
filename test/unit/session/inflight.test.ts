/**
 * The in-flight caps' arithmetic: which cap a request (or a batch) passes, and what the error says.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../src/errors/gateway-error.ts';
import { checkInflight, createInflightBudget } from '../../../src/session/inflight.ts';
import { buildConfig } from '../../support/gateway.ts';

const limits = (maxInflightPerSession: number, maxInflight: number) => ({ ...buildConfig({ targets: {} }).limits, maxInflightPerSession, maxInflight });

const refusal = (fn: () => void): GatewayError | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err as GatewayError;
  }
};

describe('in-flight caps', () => {
  it('admits up to each cap, a batch counting every request in it', () => {
    const budget = createInflightBudget(limits(4, 10));
    expect(refusal(() => checkInflight(budget, 3, 1))).toBeUndefined();
    expect(refusal(() => checkInflight(budget, 3, 2))?.details).toEqual({ kind: 'session', limit: 4, retryAfterSec: 1 });
    budget.active = 9;
    expect(refusal(() => checkInflight(budget, 0, 1))).toBeUndefined();
    const full = refusal(() => checkInflight(budget, 0, 2));
    expect(full?.code).toBe('GW_OVERLOADED');
    expect(full?.httpStatus).toBe(503);
    expect(full?.details).toEqual({ kind: 'gateway', limit: 10, retryAfterSec: 1 });
  });

  it('a hand-built config without the keys gets the documented defaults', () => {
    const { maxInflight: _a, maxInflightPerSession: _b, ...rest } = limits(1, 1);
    expect(createInflightBudget(rest)).toEqual({ active: 0, maxTotal: 4_096, maxPerSession: 256 });
  });
});
