/**
 * The chart of docs/benchmarks.md, drawn as plain SVG (no dependency): one panel of throughput and
 * one of p99 latency, grouped by scenario, one bar per system, both on log scales (the systems
 * differ by orders of magnitude).
 */

export interface ChartSeries {
  system: string;
  /** Value per scenario; NaN or undefined: no bar (unavailable, failed or not run). */
  values: ReadonlyMap<string, number>;
}

export interface ChartPanel {
  title: string;
  unit: string;
  series: readonly ChartSeries[];
}

// Ten: one per system of the load scenarios (floor-relay made them ten), so no two share a colour.
const COLOURS = ['#7f7f7f', '#bcbd22', '#1f77b4', '#17becf', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#ff7f0e'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const short = (n: number) =>
  n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toPrecision(2);

function panel(p: ChartPanel, scenarios: readonly string[], top: number, width: number, height: number): string[] {
  const left = 60;
  const right = 10;
  const plotH = height - 60;
  const values = p.series.flatMap((s) => scenarios.map((sc) => s.values.get(sc) ?? NaN)).filter((v) => Number.isFinite(v) && v > 0);
  const lo = values.length === 0 ? 1 : Math.pow(10, Math.floor(Math.log10(Math.min(...values))));
  const hi = values.length === 0 ? 10 : Math.max(lo * 10, Math.pow(10, Math.ceil(Math.log10(Math.max(...values)))));
  const y = (v: number) => top + 30 + plotH - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotH;
  const out: string[] = [];
  out.push(`<text x="${left}" y="${top + 18}" font-size="14" font-weight="bold">${esc(p.title)} (${esc(p.unit)}, log scale)</text>`);
  for (let d = lo; d <= hi; d *= 10) {
    out.push(`<line x1="${left}" x2="${width - right}" y1="${y(d)}" y2="${y(d)}" stroke="#ddd"/>`);
    out.push(`<text x="${left - 6}" y="${y(d) + 4}" font-size="10" text-anchor="end">${short(d)}</text>`);
  }
  const groupW = (width - left - right) / scenarios.length;
  const barW = Math.max(2, (groupW - 16) / p.series.length);
  scenarios.forEach((sc, g) => {
    const gx = left + g * groupW + 8;
    out.push(`<text x="${gx + (groupW - 16) / 2}" y="${top + 30 + plotH + 16}" font-size="11" text-anchor="middle">${esc(sc)}</text>`);
    p.series.forEach((s, i) => {
      const v = s.values.get(sc);
      if (v === undefined || !Number.isFinite(v) || v <= 0) return;
      const x = gx + i * barW;
      const yTop = y(v);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${yTop.toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(top + 30 + plotH - yTop).toFixed(1)}" fill="${COLOURS[i % COLOURS.length]}"><title>${esc(`${s.system} ${sc}: ${short(v)} ${p.unit}`)}</title></rect>`,
      );
    });
  });
  return out;
}

/** The whole SVG document. */
export function renderChart(panels: readonly ChartPanel[], scenarios: readonly string[], caption: string): string {
  const width = 960;
  const panelH = 280;
  const systems = panels[0]?.series.map((s) => s.system) ?? [];
  const legendH = 24;
  const height = panels.length * panelH + legendH + 30;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  panels.forEach((p, i) => out.push(...panel(p, scenarios, i * panelH, width, panelH)));
  const ly = panels.length * panelH + 8;
  let lx = 60;
  systems.forEach((name, i) => {
    out.push(`<rect x="${lx}" y="${ly}" width="12" height="12" fill="${COLOURS[i % COLOURS.length]}"/>`);
    out.push(`<text x="${lx + 16}" y="${ly + 11}" font-size="12">${esc(name)}</text>`);
    lx += 24 + name.length * 7.5;
  });
  out.push(`<text x="60" y="${height - 6}" font-size="10" fill="#555">${esc(caption)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
