/**
 * The console's HTML (console-routes.ts serves it): a shell the script (console-assets.ts) fills
 * from the JSON API, the sign-in page, and the hop page after sign-in. Nothing from outside is put
 * into this HTML but the operator's id and the CSRF token, both escaped; everything a server names
 * (tools, descriptions, errors) reaches the page only through the script's `textContent`.
 */
import { escapeHtml } from './status-page.ts';

const SECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['servers', 'Servers'],
  ['sessions', 'Sessions'],
  ['pins', 'Pins'],
  ['access', 'Access'],
  ['audit', 'Audit'],
  ['accounts', 'Upstream accounts'],
];

/** Why the sign-in page is shown again: fixed texts by key, never the query's own words. */
const ERRORS: Readonly<Record<string, string>> = {
  'not-operator': 'You signed in, but you are not an operator of this gateway: your token lacks the admin scope (or the operator claim).',
  'sign-in-failed': 'Sign-in did not complete. Try again.',
  'not-configured': 'The console has no OpenID client configured (gateway.admin.console.clientId).',
};

function shell(title: string, head: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="color-scheme" content="light dark"><title>${title}</title><link rel="stylesheet" href="/admin/console.css">${head}</head>` +
    `<body>${body}</body></html>`
  );
}

export function renderSignInPage(issuer: string | undefined, error: string): string {
  const message = ERRORS[error];
  const alert = message === undefined ? '' : `<p class="alert" role="alert">${escapeHtml(message)}</p>`;
  const how = issuer === undefined ? 'as the local operator (this gateway has no gateway.auth and listens on loopback only)' : `with ${escapeHtml(issuer)}`;
  return shell(
    'Switchboard console: sign in',
    '',
    `<main id="main" class="wrap narrow"><h1>Switchboard console</h1>${alert}<p>Sign in ${how} to manage this gateway.</p>` +
      `<p><a class="button" href="/admin/login">Sign in</a></p></main>`,
  );
}

/** After sign-in: a page that moves on by itself, so the next request starts on this site. */
export function renderRedirectPage(to: '/admin/' | `/admin/?error=${string}`): string {
  return shell('Switchboard console', `<meta http-equiv="refresh" content="0;url=${escapeHtml(to)}">`, `<main class="wrap narrow"><p><a href="${escapeHtml(to)}">Continue to the console</a></p></main>`);
}

export function renderConsolePage(operator: string, csrf: string): string {
  const nav = SECTIONS.map(([id, label]) => `<li><a href="#${id}" data-section="${id}">${label}</a></li>`).join('');
  const sections = SECTIONS.map(([id, label]) => `<section id="${id}" aria-labelledby="${id}-title" hidden><h1 id="${id}-title" tabindex="-1">${label}</h1><div class="body" id="${id}-body"><p class="muted">Loading…</p></div></section>`).join('');
  return shell(
    'Switchboard console',
    `<meta name="csrf-token" content="${escapeHtml(csrf)}"><script src="/admin/console.js" defer></script>`,
    `<a class="skip" href="#main">Skip to content</a><header class="top"><div class="wrap"><p class="brand">Switchboard console</p>` +
      `<nav aria-label="Console sections"><ul>${nav}</ul></nav>` +
      `<p class="who"><span class="muted">Signed in as</span> <code id="operator">${escapeHtml(operator)}</code> <button type="button" id="sign-out">Sign out</button></p></div></header>` +
      `<main id="main" class="wrap"><p id="notice" role="status" aria-live="polite"></p>${sections}</main>` +
      `<footer class="wrap muted"><p>Every change here is an audit line naming you. Data comes from <code>/admin/api</code>, which scripts can use with a credential that has the admin scope.</p></footer>`,
  );
}
