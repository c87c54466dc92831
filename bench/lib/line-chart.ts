/**
 * A line chart as plain SVG (no dependency), for readings over time: the soak test's RSS, file
 * descriptors and children. One panel per quantity, a shared time axis, linear scales from zero.
 */

export interface LinePanel {
  title: string;
  unit: string;
  /** [x, y] points in x order. */
  points: ReadonlyArray<readonly [number, number]>;
  /** A straight line drawn over the points (a fit), as [x0, y0, x1, y1]. */
  trend?: readonly [number, number, number, number];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const tick = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toPrecision(2));

/** A round step giving about `count` ticks up to `max`. */
function step(max: number, count: number): number {
  const raw = max / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}

function panel(p: LinePanel, xMax: number, xLabel: string, top: number, width: number, height: number): string[] {
  const left = 60;
  const right = 20;
  const plotW = width - left - right;
  const plotH = height - 60;
  const yMaxRaw = Math.max(1e-9, ...p.points.map(([, y]) => y));
  const yStep = step(yMaxRaw, 5);
  const yMax = Math.ceil(yMaxRaw / yStep) * yStep;
  const x = (v: number) => left + (v / (xMax || 1)) * plotW;
  const y = (v: number) => top + 30 + plotH - (v / yMax) * plotH;
  const out = [`<text x="${left}" y="${top + 18}" font-size="14" font-weight="bold">${esc(p.title)} (${esc(p.unit)})</text>`];
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    out.push(`<line x1="${left}" x2="${width - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" font-size="10" text-anchor="end">${tick(v)}</text>`);
  }
  const xStep = step(xMax || 1, 8);
  for (let v = 0; v <= xMax + 1e-9; v += xStep) {
    out.push(`<text x="${x(v).toFixed(1)}" y="${top + 30 + plotH + 14}" font-size="10" text-anchor="middle">${tick(v)}</text>`);
  }
  out.push(`<text x="${width - right}" y="${top + 30 + plotH + 28}" font-size="10" text-anchor="end">${esc(xLabel)}</text>`);
  const path = p.points.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
  out.push(`<path d="${path}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>`);
  if (p.trend) {
    const [x0, y0, x1, y1] = p.trend;
    out.push(`<line x1="${x(x0).toFixed(1)}" y1="${y(y0).toFixed(1)}" x2="${x(x1).toFixed(1)}" y2="${y(y1).toFixed(1)}" stroke="#d62728" stroke-dasharray="4 3"/>`);
  }
  return out;
}

/** The whole SVG document: the panels stacked, a caption under them. */
export function renderLineChart(panels: readonly LinePanel[], xLabel: string, caption: string): string {
  const width = 960;
  const panelH = 220;
  const height = panels.length * panelH + 30;
  const xMax = Math.max(0, ...panels.flatMap((p) => p.points.map(([px]) => px)));
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
  ];
  panels.forEach((p, i) => out.push(...panel(p, xMax, xLabel, i * panelH, width, panelH)));
  out.push(`<text x="60" y="${height - 8}" font-size="10" fill="#555">${esc(caption)}</text>`, '</svg>');
  return out.join('\n') + '\n';
}
