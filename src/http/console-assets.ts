/**
 * The console's stylesheet and script, served by the gateway (no CDN, no framework, no inline
 * script: the Content-Security-Policy allows scripts from the gateway only). The script builds
 * every element with createElement and textContent, never innerHTML: names and descriptions come
 * from servers and are shown as text, whatever they contain. Long lists are paginated by the API.
 */
import { STATUS_CSS } from './status-assets.ts';

export const CONSOLE_CSS = `${STATUS_CSS}
.narrow{max-width:40rem;padding-top:3rem}.who{margin:0;display:flex;gap:.5rem;align-items:center}
section h1{margin:1.5rem 0 1rem}section h1:focus{outline:none}
button,.button,input,select{font:inherit;color:inherit}
button,.button{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.3rem .8rem;cursor:pointer;text-decoration:none;display:inline-block}
button:hover,.button:hover{border-color:var(--accent)}button:focus-visible,.button:focus-visible,input:focus-visible,select:focus-visible,a:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
button.primary,.button{background:var(--accent);border-color:var(--accent);color:var(--bg)}button.danger{color:var(--bad-fg);border-color:var(--bad-fg)}
input,select{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.3rem .5rem}
form.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin:0 0 1rem}form.filters label{display:flex;flex-direction:column;font-size:.85rem;gap:.2rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;margin:0 0 1rem}
.card h2{margin:0 0 .5rem}.actions{display:flex;gap:.5rem;margin-top:.75rem}
.diff{font:0.85rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word;margin:.5rem 0;padding:.5rem;border:1px solid var(--line);border-radius:6px}
.diff .del{background:var(--bad-bg);color:var(--bad-fg);display:block}.diff .add{background:var(--ok-bg);color:var(--ok-fg);display:block}.diff .same{display:block;color:var(--muted)}
.hash{word-break:break-all}.alert{background:var(--bad-bg);color:var(--bad-fg);padding:.75rem 1rem;border-radius:8px}
.pager{display:flex;gap:.75rem;align-items:center;margin:.75rem 0}#notice:empty{display:none}#notice{background:var(--head);padding:.5rem .75rem;border-radius:6px}
`;

export const CONSOLE_JS = `'use strict';
(function () {
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
  var notice = document.getElementById('notice');
  var state = { sessionsOffset: 0 };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'on') Object.keys(attrs.on).forEach(function (e) { node.addEventListener(e, attrs.on[e]); });
      else if (attrs[k] !== null && attrs[k] !== undefined) node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function api(method, path, body) {
    var init = { method: method, credentials: 'same-origin', headers: { accept: 'application/json' } };
    if (method !== 'GET') { init.headers['content-type'] = 'application/json'; init.headers['x-csrf-token'] = csrf; init.body = JSON.stringify(body || {}); }
    return fetch('/admin/api/' + path, init).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) throw new Error((data && data.error && data.error.message) || ('HTTP ' + res.status));
        return data;
      });
    });
  }
  function say(text) { notice.textContent = text; }
  function fill(id, nodes) { var body = document.getElementById(id + '-body'); body.replaceChildren.apply(body, nodes); }
  function table(caption, heads, rows, empty) {
    var head = el('tr', {}, heads.map(function (h) { return el('th', { scope: 'col', text: h }); }));
    var body = rows.length ? rows : [el('tr', { class: 'empty' }, [el('td', { colspan: String(heads.length), text: empty })])];
    return el('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': caption }, [el('table', {}, [el('caption', { class: 'visually-hidden', text: caption }), el('thead', {}, [head]), el('tbody', {}, body)])]);
  }
  function row(cells) { return el('tr', {}, cells.map(function (c, i) { return typeof c === 'string' || typeof c === 'number' ? el(i === 0 ? 'th' : 'td', i === 0 ? { scope: 'row', text: String(c) } : { text: String(c) }) : el('td', {}, [c]); })); }
  function when(ms) { return new Date(ms).toISOString().replace('T', ' ').slice(0, 19); }
  function filters(id, fields, onsubmit) {
    var form = el('form', { class: 'filters', id: id + '-filters' }, fields.map(function (f) {
      var input = f.options ? el('select', { name: f.name }, f.options.map(function (o) { return el('option', { value: o, text: o || 'any' }); })) : el('input', { name: f.name, type: f.type || 'text', autocomplete: 'off', value: f.value || '' });
      return el('label', {}, [f.label, input]);
    }).concat([el('button', { type: 'submit', class: 'primary', text: 'Apply' })]));
    form.addEventListener('submit', function (e) { e.preventDefault(); onsubmit(new FormData(form)); });
    return form;
  }
  function query(data, names) { return names.filter(function (n) { return data.get(n); }).map(function (n) { return n + '=' + encodeURIComponent(data.get(n)); }).join('&'); }

  var loaders = {
    servers: function () {
      return api('GET', 'servers').then(function (d) {
        var rows = d.servers.map(function (s) {
          var errors = el('div', { class: 'small' }, s.lastErrors.map(function (e) { return el('div', { text: when(e.at) + ' ' + e.method + ' ' + e.code }); }));
          if (s.stderr) errors.appendChild(el('details', {}, [el('summary', { text: 'stderr of the last ' + s.stderr.event + ' (' + when(s.stderr.at) + ')' }), el('pre', { class: 'diff', text: s.stderr.lines.join('\\n') })]));
          if (!errors.childNodes.length) errors.textContent = '–';
          var restart = el('button', { type: 'button', class: 'danger', 'aria-label': 'Restart ' + s.name, text: 'Restart', on: { click: function () {
            if (!window.confirm('Restart ' + s.name + '? Its ' + s.sessions + ' session(s) end; their clients reconnect.')) return;
            api('POST', 'servers/restart', { name: s.name }).then(function (r) { say('Restarted ' + s.name + ': ' + r.sessionsEnded + ' session(s) ended.'); return loaders.servers(); }).catch(function (e) { say(e.message); });
          } } });
          return row([s.name, s.type, s.health, s.circuit, s.children, s.sessions, s.calls, s.errors, errors, restart]);
        });
        var config = el('div', { class: 'card' }, [el('h2', { text: 'Configuration' }), el('p', { class: 'small muted', text: 'The gateway reloads its file when it changes and on SIGHUP. Check reads the file now: is it valid, and what would change.' }),
          el('div', { class: 'actions' }, [el('button', { type: 'button', text: 'Check config', on: { click: function () { api('POST', 'config/check').then(showConfig).catch(function (e) { say(e.message); }); } } }),
            el('button', { type: 'button', class: 'primary', text: 'Reload config', on: { click: function () { api('POST', 'config/reload').then(function (r) { showConfig(r); if (r.reloaded) say('Config reloaded.'); }).catch(function (e) { say(e.message); }); } } })]),
          el('div', { id: 'config-result' })]);
        fill('servers', [table('Servers', ['Server', 'Type', 'Health', 'Circuit', 'Children', 'Sessions', 'Calls', 'Errors', 'Last errors', 'Action'], rows, 'No servers configured.'), config]);
      });
    },
    sessions: function (data) {
      var q = 'offset=' + state.sessionsOffset + '&limit=50' + (data ? '&' + query(data, ['principal', 'server']) : '');
      state.sessionsQuery = data || state.sessionsQuery;
      return api('GET', 'sessions?' + q).then(function (d) {
        var rows = d.sessions.map(function (s) {
          var end = el('button', { type: 'button', class: 'danger', 'aria-label': 'End session ' + s.id, text: 'End', on: { click: function () {
            if (!window.confirm('End session ' + s.id + ' of ' + (s.principal || 'anonymous') + '?')) return;
            api('POST', 'sessions/end', { handle: s.handle }).then(function () { say('Session ' + s.id + ' ended.'); return loaders.sessions(state.sessionsQuery); }).catch(function (e) { say(e.message); });
          } } });
          return row([s.id, s.principal || '–', s.era, s.transport, s.endpoint, s.ageSec + 's', s.inFlight ? 'yes' : 'no', end]);
        });
        var pager = el('div', { class: 'pager' }, [
          el('button', { type: 'button', text: 'Previous', disabled: d.offset === 0 ? 'disabled' : null, on: { click: function () { state.sessionsOffset = Math.max(0, d.offset - d.limit); loaders.sessions(state.sessionsQuery); } } }),
          el('span', { text: d.total ? (d.offset + 1) + '–' + (d.offset + d.sessions.length) + ' of ' + d.total : '0 sessions' }),
          el('button', { type: 'button', text: 'Next', disabled: d.offset + d.limit >= d.total ? 'disabled' : null, on: { click: function () { state.sessionsOffset = d.offset + d.limit; loaders.sessions(state.sessionsQuery); } } }),
        ]);
        fill('sessions', [filters('sessions', [{ name: 'principal', label: 'Principal' }, { name: 'server', label: 'Server' }], function (f) { state.sessionsOffset = 0; loaders.sessions(f); }), table('Live sessions', ['Session', 'Principal', 'Era', 'Transport', 'Endpoint', 'Age', 'In flight', 'Action'], rows, 'No live sessions.'), pager]);
      });
    },
    pins: function () {
      return api('GET', 'pins').then(function (d) {
        if (!d.enabled) return fill('pins', [el('p', { text: 'Pinning is off: no server has gateway.pinning or pinning set.' })]);
        var cards = d.pending.map(function (c) {
          var decide = function (what) { return function () { api('POST', 'pins/' + what, { target: c.target, kind: c.kind, name: c.key, hash: c.hash }).then(function () { say((what === 'approve' ? 'Approved ' : 'Rejected ') + c.kind + ' ' + c.key + ' of ' + c.target + '.'); return loaders.pins(); }).catch(function (e) { say(e.message); }); }; };
          var dangers = c.dangers.length ? el('ul', {}, c.dangers.map(function (x) { return el('li', {}, [el('strong', { text: x.code }), ' ' + x.detail]); })) : el('p', { class: 'muted', text: 'No dangers found.' });
          return el('article', { class: 'card pin' }, [
            el('h2', { text: c.target + ' · ' + c.kind + ' · ' + c.key }),
            el('p', { class: 'muted small', text: 'Seen ' + c.seenAt + '. Changed: ' + c.changed.join(', ') + (c.rejected ? '. Rejected by ' + c.rejected.by + ' at ' + c.rejected.at : '') }),
            el('h3', { text: 'Dangers' }), dangers, el('h3', { text: 'Change' }), diff(c.before, c.after),
            el('p', { class: 'small' }, ['Hash ', el('code', { class: 'hash', text: c.hash })]),
            el('div', { class: 'actions' }, [el('button', { type: 'button', class: 'primary', text: 'Approve', on: { click: decide('approve') } }), el('button', { type: 'button', class: 'danger', text: 'Reject', on: { click: decide('reject') } })]),
          ]);
        });
        var history = table('Decisions', ['When', 'Who', 'Decision', 'Server', 'Kind', 'Name', 'Hash'], d.history.map(function (h) { return row([h.at, h.by, h.decision, h.target, h.kind, h.key, el('code', { class: 'hash', text: h.hash })]); }), 'No decisions yet on this replica (the audit log has them all).');
        fill('pins', (cards.length ? cards : [el('p', { text: 'No changes waiting.' })]).concat([el('h2', { text: 'Who decided what, when' }), history]));
      });
    },
    access: function () {
      fill('access', [filters('access', [{ name: 'principal', label: 'Principal id' }, { name: 'scopes', label: 'Scopes (space separated)' }, { name: 'token', label: 'Or paste a token', type: 'password' }, { name: 'resource', label: 'Token for (path)', value: '/mcp' }], function (f) {
        var body = f.get('token') ? { token: f.get('token'), resource: f.get('resource') } : { principal: f.get('principal'), scopes: String(f.get('scopes') || '').split(/\\s+/).filter(Boolean) };
        api('POST', 'access', body).then(showAccess).catch(function (e) { say(e.message); });
      }), el('div', { id: 'access-result' })]);
      return Promise.resolve();
    },
    audit: function (data) {
      var q = data ? query(data, ['principal', 'server', 'tool', 'outcome']) : '';
      return api('GET', 'calls?' + q).then(function (d) {
        fill('audit', [filters('audit', [{ name: 'principal', label: 'Principal' }, { name: 'server', label: 'Server' }, { name: 'tool', label: 'Tool' }, { name: 'outcome', label: 'Outcome', options: ['', 'ok', 'error', 'denied', 'cancelled'] }], loaders.audit),
          table('Recent calls', ['When', 'Principal', 'Server', 'Method', 'Name', 'Outcome', 'Code', 'Rule', 'ms'], d.calls.map(function (c) { return row([when(c.at), c.principal || '–', c.server || '–', c.method, c.name || '–', c.outcome, c.code || c.reason || '–', c.rule || '–', c.ms]); }), 'No calls recorded.')]);
      });
    },
    accounts: function () {
      return api('GET', 'accounts').then(function (d) {
        if (!d.provider) return fill('accounts', [el('p', { class: 'muted', text: 'No upstream accounts: this gateway has no upstream OAuth provider.' })]);
        fill('accounts', [table('Upstream accounts', ['Principal', 'Server', 'Connected', 'Action'], d.accounts.map(function (a) {
          var revoke = el('button', { type: 'button', class: 'danger', 'aria-label': 'Disconnect ' + a.principal + ' from ' + a.server, text: 'Disconnect', on: { click: function () {
            if (!window.confirm('Disconnect ' + a.principal + ' from ' + a.server + '? Its tokens are revoked where the server offers it, and forgotten; the user must consent again.')) return;
            api('POST', 'accounts/disconnect', { principal: a.principal, server: a.server }).then(function () { say('Disconnected ' + a.principal + ' from ' + a.server + '.'); return loaders.accounts(); }).catch(function (e) { say(e.message); });
          } } });
          return row([a.principal, a.server, a.connectedAt, revoke]);
        }), 'No accounts connected.')]);
      });
    },
  };

  function showConfig(r) {
    var out = document.getElementById('config-result');
    if (!r.valid) return out.replaceChildren(el('p', { class: 'alert', role: 'alert', text: 'The config file is not valid; the running config stays.' }), el('pre', { class: 'diff', text: r.problems }));
    var d = r.diff, items = [];
    d.added.forEach(function (n) { items.push(el('li', { text: 'server ' + n + ' added' })); });
    d.removed.forEach(function (n) { items.push(el('li', { text: 'server ' + n + ' removed' })); });
    d.changed.forEach(function (c) { items.push(el('li', { text: 'server ' + c.name + ' changed: ' + c.keys.join(', ') })); });
    d.sections.forEach(function (s) { items.push(el('li', { text: s + ' changed' })); });
    d.needRestart.forEach(function (s) { items.push(el('li', { class: 'warn', text: s + ': takes effect after a restart' })); });
    out.replaceChildren(el('p', { text: r.reloaded ? 'Reloaded. What changed:' : 'Valid. What a reload would change:' }), items.length ? el('ul', {}, items) : el('p', { class: 'muted', text: 'Nothing: the file is the running config.' }));
  }
  function lines(value) { return value === null || value === undefined ? [] : JSON.stringify(value, null, 2).split('\\n'); }
  function diff(before, after) {
    var keys = Object.keys(Object.assign({}, before || {}, after || {})).sort();
    var out = [];
    keys.forEach(function (k) {
      var a = lines((before || {})[k]), b = lines((after || {})[k]);
      if (JSON.stringify(a) === JSON.stringify(b)) { out.push(el('span', { class: 'same', text: '  ' + k + ': ' + a.join(' ') })); return; }
      a.forEach(function (l, i) { out.push(el('span', { class: 'del', text: '- ' + (i ? '  ' : k + ': ') + l })); });
      b.forEach(function (l, i) { out.push(el('span', { class: 'add', text: '+ ' + (i ? '  ' : k + ': ') + l })); });
    });
    return el('pre', { class: 'diff', 'aria-label': 'Removed lines start with a minus, added lines with a plus' }, out);
  }
  function showAccess(d) {
    var parts = [el('p', { text: 'As ' + (d.principal || 'anonymous') + (d.scopes.length ? ' with scopes ' + d.scopes.join(' ') : '') })];
    d.endpoints.forEach(function (e) {
      var rows = [];
      e.targets.forEach(function (t) {
        if (!t.reachable) rows.push(row([t.target, '–', '–', 'denied', t.decidedBy]));
        t.items.forEach(function (i) { rows.push(row([t.target, i.kind, i.shownAs, i.allowed ? 'allowed' : 'denied', i.decidedBy])); });
        if (t.reachable && !t.items.length) rows.push(row([t.target, '–', 'nothing listed yet', 'reachable', t.decidedBy]));
      });
      parts.push(el('section', { class: 'reach', 'data-path': e.path }, [el('h2', {}, [el('code', { text: e.path })]), table('Reach on ' + e.path, ['Server', 'Kind', 'Name', 'List and call', 'Decided by'], rows, 'No servers.')]));
    });
    document.getElementById('access-result').replaceChildren.apply(document.getElementById('access-result'), parts);
  }

  function show() {
    var id = (location.hash || '#servers').slice(1);
    if (!loaders[id]) id = 'servers';
    document.querySelectorAll('main > section').forEach(function (s) { s.hidden = s.id !== id; });
    document.querySelectorAll('nav a[data-section]').forEach(function (a) { if (a.dataset.section === id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current'); });
    say('');
    loaders[id]().catch(function (e) { say(e.message); });
    document.getElementById(id + '-title').focus();
  }
  document.getElementById('sign-out').addEventListener('click', function () { api('POST', 'logout').then(function () { location.href = '/admin/'; }); });
  window.addEventListener('hashchange', show);
  show();
})();
`;
