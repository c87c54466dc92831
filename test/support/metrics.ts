/**
 * Reading a gateway's /metrics in tests: the Prometheus text format parsed into samples, and the
 * value of one series by exact labels.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the series `name` whose labels are exactly `labels`; undefined when absent. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samples.find(
    (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
  );
  return found?.value;
}

/** GET /metrics of `base` (optionally with headers), parsed; throws unless 200. */
export async function scrape(base: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(new URL('/metrics', base), { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text}`);
  return parseMetrics(text);
}
