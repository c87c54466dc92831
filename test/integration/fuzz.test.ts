/**
 * The bounded fuzzing campaign of the suite: about 2,000 seeded cases over POST /mcp, WebSocket,
 * legacy SSE, malformed HTTP and stdio framing from an upstream, against the gateway run as its own process
 * (test/support/fuzz/). Every answer must be a JSON-RPC envelope or a documented HTTP error, the
 * process must survive, the healthy sessions opened first must answer throughout and after, and
 * RSS must stay under a generous bound. Longer campaigns: `npm run fuzz -- --cases N --seed S`.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, runCampaign } from '../support/fuzz/campaign.ts';

const SEED = 20_261_125;
const CASES = 2_000;

describe('fuzzing campaign', () => {
  it(`${CASES} seeded cases (seed ${SEED}) keep every invariant`, { timeout: 180_000 }, async () => {
    const summary = await runCampaign({ seed: SEED, cases: CASES, maxRssMiB: 768 });
    // Written out so a failure in CI says what broke and how to replay it.
    const report = [...summary.problems, ...summary.failures.map(describeFailure), ...summary.probes.failed, ...summary.gateway.logProblems].join('\n');
    expect(report).toBe('');
    expect(summary.cases).toBe(CASES);
    expect(summary.gateway.alive).toBe(true);
    // The campaign reached every target and the kinds of answers it is meant to provoke.
    for (const target of ['post /servers/rec/mcp', 'post /mcp', 'ws /servers/rec/ws', 'legacy /servers/rec/messages', 'stdio /servers/fuzzy']) {
      expect(summary.byTarget[target], target).toBeGreaterThan(50);
    }
    for (const target of ['http raw', 'http methods']) expect(summary.byTarget[target], target).toBeGreaterThan(20);
    for (const outcome of ['200', '202', '400', '413', 'close 1007', 'GW_UPSTREAM_MESSAGE_TOO_LARGE', 'GW_UPSTREAM_TIMEOUT']) {
      expect(summary.outcomes[outcome], outcome).toBeGreaterThan(0);
    }
    expect(summary.probes.ok).toBeGreaterThan(10);
    expect(summary.rssMiB.max).toBeGreaterThan(0);
  });
});
