/**
 * The status page's stylesheet and its small script, served by the gateway itself (no CDN, no
 * framework). The script only enhances: it swaps in the fragments /status/events sends
 * (status-page.ts renders them, escaped), and the page reads fine without it.
 */

export const STATUS_CSS = `:root{--bg:#f7f8fa;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d8dee4;--head:#eef1f4;--accent:#0a58ca;
--ok-bg:#dafbe1;--ok-fg:#116329;--bad-bg:#ffebe9;--bad-fg:#a40e26;--idle-bg:#eaeef2;--idle-fg:#424a53;--warn:#a40e26;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--card:#161b22;--line:#30363d;--head:#1c2128;--accent:#6cb6ff;
--ok-bg:#033a16;--ok-fg:#7ee787;--bad-bg:#490202;--bad-fg:#ffa198;--idle-bg:#262c36;--idle-fg:#c9d1d9;--warn:#ff7b72}}
*{box-sizing:border-box}html{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
body{margin:0}a{color:var(--accent)}code{font:0.92em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.wrap{max-width:1200px;margin:0 auto;padding:0 1.25rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem;z-index:1}
.top{background:var(--card);border-bottom:1px solid var(--line)}.top .wrap{display:flex;align-items:center;justify-content:space-between;gap:1rem;min-height:3.25rem}
.brand{font-weight:700;margin:0;letter-spacing:.01em}.top ul{display:flex;gap:1.25rem;list-style:none;margin:0;padding:0}
.top a{text-decoration:none;font-weight:500}.top a[aria-current]{color:var(--fg);border-bottom:2px solid var(--accent)}.top a:hover,.top a:focus-visible{text-decoration:underline}
.heading{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:.5rem 1rem;margin:1.5rem 0 1rem}
h1{font-size:1.5rem;margin:0}h2{font-size:1.1rem;margin:2rem 0 .5rem}.muted{color:var(--muted)}.small{font-size:.85rem;font-weight:400}.note{margin:.25rem 0 .5rem;font-size:.85rem}
.heading p{margin:0}.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.75rem;margin:0}
.tile{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.75rem 1rem}.tile dt{color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
.tile dd{margin:.15rem 0 0;font-size:1.6rem;font-weight:650;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px}.scroll:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}th,td{text-align:left;padding:.5rem .75rem;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:var(--head);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);white-space:nowrap}
tbody tr:last-child>*{border-bottom:0}tbody th{font-weight:600}.num{text-align:right;white-space:nowrap}.warn{color:var(--warn);font-weight:600}
.empty td{color:var(--muted);font-style:italic}th.tool{white-space:nowrap;width:1%}.names code{display:inline-block;margin:0 .35rem .2rem 0}
.badge{display:inline-block;padding:.05rem .55rem;border-radius:999px;font-size:.8rem;font-weight:600}
.badge-ok{background:var(--ok-bg);color:var(--ok-fg)}.badge-bad{background:var(--bad-bg);color:var(--bad-fg)}.badge-idle{background:var(--idle-bg);color:var(--idle-fg)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
footer{margin:2.5rem auto 2rem;font-size:.85rem}
@media (prefers-reduced-motion:no-preference){.flash{animation:flash 1s ease-out}@keyframes flash{from{background:var(--head)}to{background:transparent}}}
`;

export const STATUS_JS = `'use strict';
(function () {
  var live = document.getElementById('live');
  if (!live || typeof EventSource !== 'function') return;
  var source = new EventSource('/status/events');
  live.textContent = 'Connecting for live updates…';
  source.addEventListener('snapshot', function (event) {
    var parts = JSON.parse(event.data);
    Object.keys(parts).forEach(function (id) {
      var element = document.getElementById(id);
      // The fragments are rendered and escaped by the gateway (status-page.ts).
      if (element && element.innerHTML !== parts[id]) element.innerHTML = parts[id];
    });
    live.textContent = 'Live';
  });
  source.onerror = function () {
    live.textContent = 'Live updates paused; retrying…';
  };
})();
`;
