/**
 * Long fuzzing campaigns (`npm run fuzz`), beside the bounded one in the suite
 * (test/integration/fuzz.test.ts): the gateway as its own process, seeded cases over POST /mcp,
 * WebSocket, legacy SSE and stdio framing (test/support/fuzz/).
 *
 *   npm run fuzz -- [--cases 20000] [--seed 42] [--case I] [--max-rss-mib 1024] [--json out.json]
 *
 * Prints a summary and every failing case with the command that replays it; exit code 1 when an
 * invariant broke.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeFailure, runCampaign } from '../support/fuzz/campaign.ts';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '20000' },
    seed: { type: 'string' },
    case: { type: 'string' },
    'max-rss-mib': { type: 'string', default: '1024' },
    json: { type: 'string' },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const summary = await runCampaign({
  seed,
  cases: Number(values.cases),
  ...(values.case === undefined ? {} : { only: Number(values.case) }),
  maxRssMiB: Number(values['max-rss-mib']),
  log: (line) => console.error(`[fuzz] ${line}`),
});
const { failures, ...rest } = summary;
console.log(JSON.stringify({ ...rest, failures: failures.length + summary.moreFailures }, null, 2));
for (const failure of failures) console.log(describeFailure(failure));
if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(summary, null, 2));
console.log(summary.problems.length === 0 ? `OK: ${summary.cases} cases, seed ${seed}` : `FAILED (seed ${seed}): ${summary.problems.join('; ')}`);
process.exit(summary.problems.length === 0 ? 0 : 1);
