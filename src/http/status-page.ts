/**
 * The status page and the tool listing, rendered on the server (docs/operations.md): complete HTML
 * on first paint, no JavaScript needed. Live updates (status-events.ts) send the same fragments
 * this file renders, so there is one renderer; every value from outside is escaped here.
 */
import type { ErrorRecord, SessionStatus, StatusSnapshot, TargetStatus, ToolInfo } from '../observe/status.ts';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for an HTML text node or a quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const clock = (at: number) => new Date(at).toISOString().slice(11, 19);
const ms = (value: number | undefined) => (value === undefined ? '–' : value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value).toString());
const percent = (rate: number) => (rate === 0 ? '0%' : rate < 0.001 ? '<0.1%' : `${(rate * 100).toFixed(1)}%`);
const perSec = (rate: number) => (rate === 0 ? '0' : rate < 10 ? rate.toFixed(2) : Math.round(rate).toString());
/** Session ids let whoever holds one use the session (without gateway.auth): only a prefix is shown. */
const shortId = (id: string) => id.slice(0, 8);

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ${Math.floor((seconds % 3_600) / 60)}m`;
  return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3_600)}h`;
}

const cell = (text: string, cls = '') => `<td${cls ? ` class="${cls}"` : ''}>${escapeHtml(text)}</td>`;
const num = (text: string) => cell(text, 'num');
const empty = (columns: number, text: string) => `<tr class="empty"><td colspan="${columns}">${escapeHtml(text)}</td></tr>`;

function healthBadge(health: string): string {
  const kind = health === 'up' ? 'ok' : health === 'idle' ? 'idle' : 'bad';
  return `<td><span class="badge badge-${kind}">${escapeHtml(health)}</span></td>`;
}

function targetRow(t: TargetStatus): string {
  const failing = t.errorRate > 0 ? 'num warn' : 'num';
  return (
    `<tr><th scope="row">${escapeHtml(t.name)}</th>${cell(t.type)}${healthBadge(t.health)}${num(String(t.children))}` +
    `${num(String(t.starts))}${num(String(t.restarts))}${num(perSec(t.callsPerSec))}${cell(percent(t.errorRate), failing)}` +
    `${num(ms(t.p50))}${num(ms(t.p99))}${num(String(t.calls))}</tr>`
  );
}

function sessionRow(s: SessionStatus): string {
  return (
    `<tr><th scope="row"><code>${escapeHtml(shortId(s.id))}</code></th>${cell(s.endpoint)}${cell(s.transport)}${cell(s.era)}` +
    `${cell(s.principal ?? '–')}${num(duration(s.ageSec))}${num(duration(s.idleSec))}</tr>`
  );
}

function errorRow(e: ErrorRecord): string {
  return (
    `<tr><th scope="row"><time datetime="${new Date(e.at).toISOString()}">${clock(e.at)}</time></th>${cell(e.target ?? '–')}${cell(e.method)}` +
    `<td><code>${escapeHtml(e.code)}</code></td><td><code>${escapeHtml(shortId(e.session))}</code></td>${cell(e.requestId)}` +
    `<td>${e.correlationId === undefined ? '–' : `<code>${escapeHtml(e.correlationId)}</code>`}</td></tr>`
  );
}

function toolsRow(target: string, tools: readonly ToolInfo[]): string {
  const names = tools.length === 0 ? '<span class="muted">not listed yet</span>' : tools.map((t) => `<code>${escapeHtml(t.name)}</code>`).join(' ');
  return `<tr><th scope="row">${escapeHtml(target)}</th>${num(String(tools.length))}<td class="names">${names}</td></tr>`;
}

function pinRow(p: NonNullable<StatusSnapshot['pins']>[number]): string {
  const dangers = p.dangers.length === 0 ? '<span class="muted">none</span>' : p.dangers.map((d) => `<code>${escapeHtml(d)}</code>`).join(' ');
  return (
    `<tr><th scope="row">${escapeHtml(p.target)}</th><td>${escapeHtml(p.kind)}</td><td><code>${escapeHtml(p.key)}</code></td>` +
    `<td>${escapeHtml(p.changed.join(', '))}</td><td>${dangers}</td><td><code>${escapeHtml(p.hash)}</code></td></tr>`
  );
}

/** The parts of the page that change, by element id: first paint and live updates alike. */
export function statusFragments(s: StatusSnapshot): Record<string, string> {
  const callsPerSec = s.targets.reduce((sum, t) => sum + t.callsPerSec, 0);
  const children = s.targets.reduce((sum, t) => sum + t.children, 0);
  const tile = (label: string, value: string) => `<div class="tile"><dt>${label}</dt><dd>${escapeHtml(value)}</dd></div>`;
  return {
    summary:
      tile('Sessions', String(s.sessions.length)) +
      tile('Live children', String(children)) +
      tile('Calls/s (1 min)', perSec(callsPerSec)) +
      tile('Recent errors', String(s.errors.length)) +
      (s.pins === undefined ? '' : tile('Pending changes', String(s.pins.length))) +
      tile('Up for', duration(Math.round((s.at - s.startedAt) / 1000))),
    'targets-body': s.targets.length === 0 ? empty(11, 'No targets configured.') : s.targets.map(targetRow).join(''),
    'sessions-body': s.sessions.length === 0 ? empty(7, 'No live sessions.') : s.sessions.map(sessionRow).join(''),
    'errors-body': s.errors.length === 0 ? empty(7, 'No errors recorded.') : s.errors.map(errorRow).join(''),
    'tools-body': s.targets.map((t) => toolsRow(t.name, s.tools[t.name] ?? [])).join('') || empty(3, 'No targets configured.'),
    ...(s.pins === undefined ? {} : { 'pins-body': s.pins.length === 0 ? empty(6, 'No definition changes waiting.') : s.pins.map(pinRow).join('') }),
    updated: `Snapshot at <time datetime="${new Date(s.at).toISOString()}">${clock(s.at)} UTC</time>`,
  };
}

function table(id: string, caption: string, headers: readonly string[], body: string, note = ''): string {
  const heads = headers.map((h, i) => `<th scope="col"${i > 0 && /^(Children|Starts|Restarts|Calls|p50|p99|Age|Idle|Tools$)/.test(h) ? ' class="num"' : ''}>${h}</th>`).join('');
  return (
    `<section aria-labelledby="${id}-title"><h2 id="${id}-title">${caption}</h2>${note}` +
    `<div class="scroll" role="region" aria-labelledby="${id}-title" tabindex="0"><table>` +
    `<caption class="visually-hidden">${caption}</caption><thead><tr>${heads}</tr></thead><tbody id="${id}-body">${body}</tbody></table></div></section>`
  );
}

function layout(title: string, current: string, main: string, extraHead = ''): string {
  const link = (href: string, text: string) => `<li><a href="${href}"${href === current ? ' aria-current="page"' : ''}>${text}</a></li>`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="color-scheme" content="light dark"><title>${title}</title><link rel="stylesheet" href="/status/style.css">${extraHead}</head>` +
    `<body><a class="skip" href="#main">Skip to content</a><header class="top"><div class="wrap"><p class="brand">Switchboard</p>` +
    `<nav aria-label="Operator pages"><ul>${link('/status', 'Status')}${link('/tools', 'Tools')}${link('/metrics', 'Metrics')}</ul></nav></div></header>` +
    `<main id="main" class="wrap">${main}</main><footer class="wrap muted"><p>Served by the gateway; no data leaves it. Secrets, headers and environment values are never shown.</p></footer></body></html>`
  );
}

/** GET /status. */
export function renderStatusPage(s: StatusSnapshot): string {
  const f = statusFragments(s);
  const main =
    `<div class="heading"><h1>Gateway status</h1><p class="muted"><span id="updated">${f.updated}</span> · <span id="live" aria-live="polite">Reload for fresh numbers.</span></p></div>` +
    `<section aria-label="Summary"><dl id="summary" class="tiles">${f.summary}</dl></section>` +
    table('targets', 'Targets', ['Target', 'Type', 'Health', 'Children', 'Starts', 'Restarts', 'Calls/s', 'Errors', 'p50 ms', 'p99 ms', 'Calls'], f['targets-body'] as string, '<p class="note muted">Rates and latencies over the last minute; latency is arrival to answer.</p>') +
    table('sessions', 'Live sessions', ['Session', 'Endpoint', 'Transport', 'Era', 'Principal', 'Age', 'Idle'], f['sessions-body'] as string) +
    table('errors', 'Recent errors', ['Time (UTC)', 'Target', 'Method', 'Code', 'Session', 'Request id', 'Correlation id'], f['errors-body'] as string, '<p class="note muted">Newest first. The correlation id of an internal error is the one in the gateway log.</p>') +
    (f['pins-body'] === undefined
      ? ''
      : table('pins', 'Pending definition changes', ['Target', 'Kind', 'Name', 'Changed', 'Dangers', 'Hash'], f['pins-body'], '<p class="note muted">Pinning: changed tools, prompts and templates waiting for <code>switchboard pins approve</code> or the admin API (docs/governance.md).</p>')) +
    table('tools', 'Tools per target', ['Target', 'Tools', 'Names'], f['tools-body'] as string, '<p class="note muted">As each server last listed them to a client. Descriptions: <a href="/tools">Tools</a>.</p>');
  return layout('Switchboard status', '/status', main, '<script src="/status/app.js" defer></script>');
}

/** GET /tools: every server and its tools with their descriptions. */
export function renderToolsPage(s: StatusSnapshot): string {
  const sections = s.targets
    .map((t) => {
      const tools = s.tools[t.name] ?? [];
      const id = `tools-${t.name}`;
      const rows = tools.length === 0 ? empty(2, 'Not listed yet: tools appear once a client has listed them.') : tools.map((tool) => `<tr><th scope="row" class="tool"><code>${escapeHtml(tool.name)}</code></th>${cell(tool.description)}</tr>`).join('');
      return (
        `<section aria-labelledby="${escapeHtml(id)}"><h2 id="${escapeHtml(id)}">${escapeHtml(t.name)} <span class="muted small">${escapeHtml(t.type)} · ${tools.length} tools</span></h2>` +
        `<div class="scroll" role="region" aria-labelledby="${escapeHtml(id)}" tabindex="0"><table><caption class="visually-hidden">Tools of ${escapeHtml(t.name)}</caption>` +
        `<thead><tr><th scope="col">Tool</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table></div></section>`
      );
    })
    .join('');
  return layout('Switchboard tools', '/tools', `<div class="heading"><h1>Servers and tools</h1></div>${sections || '<p>No targets configured.</p>'}`);
}
