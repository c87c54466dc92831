/**
 * Where a full run's report goes (bench/run.ts): the machine's lines at the head of the report,
 * the chart of the load scenarios (docs/benchmarks.svg) and the report itself, written into
 * docs/benchmarks.md between the bench:begin/end markers (the rest of the page is left as it is).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { machineFacts } from './machine.ts';
import { loadMedian, type Results } from './results.ts';
import type { Scenario } from './scenarios.ts';
import { renderChart, type ChartSeries } from './svg.ts';
import { ROOT, SYSTEM_NAMES } from './systems.ts';

export const DOC = `${ROOT}docs/benchmarks.md`;
export const SVG = `${ROOT}docs/benchmarks.svg`;
const BEGIN = '<!-- bench:begin (written by bench/run.ts) -->';
const END = '<!-- bench:end -->';

/** The machine, the builds and the load at the start; `beforeLabel`: the `-before` build, if any. */
export function machine(beforeLabel: string | undefined): string[] {
  const facts = machineFacts(ROOT);
  const peers = (name: string) => {
    try {
      return (JSON.parse(readFileSync(`${ROOT}bench/node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
    } catch {
      return 'not installed';
    }
  };
  return [
    `- Machine: ${os.availableParallelism()} x ${facts.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, kernel ${os.release()}${facts.virtual ? ' (virtual machine)' : ''}`,
    `- Node ${process.version}; Switchboard ${facts.source}, log level info; supergateway ${peers('supergateway')}, mcp-proxy ${peers('mcp-proxy')}`,
    ...(beforeLabel === undefined ? [] : [`- switchboard-before (and switchboard-spare-before): ${beforeLabel}`]),
    `- Load average at start: ${facts.load}`,
  ];
}

/** Throughput and p99 of every load scenario that ran, medians of `rounds` rounds. */
export function chart(results: Results, list: readonly Scenario[], rounds: number): string {
  const loads = list.filter((s) => s.kind === 'load');
  const names = SYSTEM_NAMES.filter((s) => loads.some((sc) => sc.systems.includes(s)));
  const series = (field: 'callsPerSecond' | 'p99'): ChartSeries[] =>
    names.map((system) => ({ system, values: new Map(loads.map((sc) => [sc.name, loadMedian(results, sc.name, system, field)])) }));
  return renderChart(
    [
      { title: 'Throughput', unit: 'calls/s', series: series('callsPerSecond') },
      { title: 'p99 latency', unit: 'ms', series: series('p99') },
    ],
    loads.map((s) => s.name),
    `Medians of ${rounds} round(s); missing bars: unavailable or not run. See docs/benchmarks.md.`,
  );
}

/** The report into docs/benchmarks.md, in place of the last one (or appended the first time). */
export function writeDoc(section: string): void {
  const block = `${BEGIN}\n${section}\n${END}`;
  let text = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin !== -1 && end > begin) text = text.slice(0, begin) + block + text.slice(end + END.length);
  else text = `${text}\n${block}\n`;
  writeFileSync(DOC, text);
}
