#!/usr/bin/env node
// Per-call work of one gateway at 1 session x 1 call in flight (issue 34, item 1): starts the
// system with per-call-preload.mjs, makes --warmup sequential echo calls, then counts --calls more.
//   npx node bench/per-call.mjs --system=switchboard|floor-relay [--cli=PATH] [--mode=alloc|cpu]
//        [--calls=3000] [--warmup=2000] [--out=FILE.json] [--top=40]
//   npx node bench/per-call.mjs --compare=A.json,B.json   (A minus B, by owner and by frame)
// alloc: bytes allocated per call (V8's sampling heap profiler, 256-byte interval: deterministic up
// to the sampling) by owner and by allocating frame, and async resources per call (promises,
// nextTicks, timers, immediates). cpu: main-thread µs per call by owner and by frame (100 µs
// sampling). Owner of a sample: the nearest frame up the stack that is ours (src/, or the floor's
// own file), fastify's (fastify, find-my-way, avvio), else node's; the leaf says whether it is V8
// native (builtins), JSON or the garbage collector.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const opt = (name, fallback) => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

const OURS = /(^|\s)(src\/|bench\/floor-relay)/;
const FASTIFY = /(^|\s)(fastify|@fastify|find-my-way|avvio|light-my-request)\//;
/** Owner of one sample from its stack (frame keys, leaf last). */
function owner(stack) {
  const leaf = stack[stack.length - 1];
  if (/^\(garbage collector\)/.test(leaf)) return 'garbage collector';
  if (/^\(program\)/.test(leaf)) return 'V8 and native (program)';
  if (/^(parse|stringify) :0$/.test(leaf) || /^(parseJson|toWireText|serializeMessage|hasNonCanonicalNumber|needsRawId|nestsDeeperThan) src\/jsonrpc/.test(leaf)) return 'JSON parse and serialise';
  let who = 'node (nothing of ours or fastify above)';
  for (let i = stack.length - 1; i >= 0; i--) {
    if (OURS.test(stack[i])) { who = i === stack.length - 1 ? 'ours, own lines' : 'node/V8 called by ours'; break; }
    if (FASTIFY.test(stack[i])) { who = 'fastify'; break; }
  }
  return who;
}

function add(map, key, value) { map.set(key, (map.get(key) ?? 0) + value); }
const sorted = (map, calls) => Object.fromEntries([...map].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / calls).toFixed(2)]));

function summariseAlloc(raw, calls) {
  const byOwner = new Map(); const byFrame = new Map(); let total = 0;
  for (const [bytes, stack] of raw.rows) { total += bytes; add(byOwner, owner(stack), bytes); add(byFrame, stack[stack.length - 1], bytes); }
  const counts = Object.fromEntries(Object.entries(raw.counts).map(([k, v]) => [k, +(v / calls).toFixed(2)]));
  return { unit: 'bytes per call', total: +(total / calls).toFixed(0), counts, byOwner: sorted(byOwner, calls), byFrame: sorted(byFrame, calls) };
}

function summariseCpu(profile, calls) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = new Map();
  const stack = (id) => { if (!stackOf.has(id)) { const s = []; for (let x = id; x !== undefined; x = parent.get(x)) s.unshift(key(nodes.get(x).callFrame)); stackOf.set(id, s); } return stackOf.get(id); };
  const key = (f) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/')}:${f.lineNumber + 1}`;
  const byOwner = new Map(); const byFrame = new Map(); let total = 0;
  profile.samples.forEach((id, i) => {
    const s = stack(id); const leaf = s[s.length - 1];
    if (leaf.startsWith('(idle)') || s.some((f) => f.includes('node:inspector'))) return; // idle, or the profiler's own stop
    const us = profile.timeDeltas[i] ?? 0; total += us; add(byOwner, owner(s), us); add(byFrame, leaf, us);
  });
  // The write syscalls (socket, pipe) swing with the machine's other work: the rest is steadier.
  const writes = ['writeUtf8String :0', 'writev :0', 'writeBuffer :0'].reduce((sum, k) => sum + (byFrame.get(k) ?? 0), 0);
  return { unit: 'µs per call', total: +(total / calls).toFixed(1), lessWrites: +((total - writes) / calls).toFixed(1), byOwner: sorted(byOwner, calls), byFrame: sorted(byFrame, calls) };
}

async function start(system, mode, rawOut) {
  const echo = here('./echo-server.mjs');
  const env = { ...process.env, PER_CALL_MODE: mode, PER_CALL_OUT: rawOut };
  const pre = ['--import', here('./per-call-preload.mjs')];
  if (system === 'floor-relay') {
    const child = spawn(process.execPath, [...pre, here('./floor-relay.mjs')], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const line = await firstLine(child, (l) => JSON.parse(l).url);
    return { child, url: new URL(line) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'per-call-'));
  const config = { mcpServers: { echo: { command: process.execPath, args: [echo] } }, gateway: { host: '127.0.0.1', port: 0, limits: { maxSessions: 2000 }, session: { maxChildren: 2000, maxChildrenPerTarget: 2000 }, logging: { level: 'info' } } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const child = spawn(process.execPath, [...pre, opt('cli', here('../src/cli.ts')), '--config', join(dir, 'config.json')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const endpoint = await firstLine(child, (l) => JSON.parse(l).endpoints?.find((e) => e.includes('/servers/echo/')));
  return { child, url: new URL(endpoint) };
}

function firstLine(child, pick) {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.once('exit', (code) => reject(new Error(`exited ${code} before listening`)));
    child.stdout.on('data', (d) => {
      buf += d;
      for (const l of buf.split('\n')) { try { const v = pick(l); if (v) { child.stdout.resume(); return resolve(v); } } catch { /* not JSON */ } }
    });
  });
}

async function measure(system, mode) {
  const calls = Number(opt('calls', '3000')); const warmup = Number(opt('warmup', '2000'));
  const rawOut = join(tmpdir(), `per-call-${process.pid}-${system}-${mode}.json`);
  rmSync(rawOut, { force: true });
  const { child, url } = await start(system, mode, rawOut);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let sid;
  const post = (body) => new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } : {}) };
    const r = request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      let t = ''; res.setEncoding('utf8'); res.on('data', (c) => (t += c));
      res.on('end', () => { sid ??= res.headers['mcp-session-id']; if (res.statusCode >= 300) reject(new Error(`${res.statusCode} ${t}`)); else resolve(t); });
    });
    r.on('error', reject); r.end(body);
  });
  const call = async (i) => { const t = await post(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"call-${i}"}}}`); if (!t.includes(`call-${i}`)) throw new Error(`bad answer ${t}`); };
  try {
    await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'per-call', version: '1' } } }));
    await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    for (let i = 1; i <= warmup; i++) await call(i);
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < calls; i++) await call(100_000 + i);
    child.kill('SIGUSR2');
    for (let i = 0; i < 200 && !existsSync(rawOut); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300)); // the file is written in one call; give it time to close
  } finally {
    agent.destroy(); child.kill('SIGTERM');
  }
  const raw = JSON.parse(readFileSync(rawOut, 'utf8'));
  rmSync(rawOut, { force: true });
  return { system, mode, calls, ...(mode === 'cpu' ? summariseCpu(raw, calls) : summariseAlloc(raw, calls)) };
}

function print(r, top) {
  console.log(`${r.system} ${r.mode}: ${r.total} ${r.unit}${r.lessWrites === undefined ? '' : ` (${r.lessWrites} without the write syscalls)`}${r.counts ? `; async resources per call ${JSON.stringify(r.counts)}` : ''}`);
  for (const [k, v] of Object.entries(r.byOwner)) console.log(`  ${String(v).padStart(9)}  ${k}`);
  for (const [k, v] of Object.entries(r.byFrame).slice(0, top)) console.log(`  ${String(v).padStart(9)}    ${k}`);
}

function compare(a, b, top) {
  console.log(`${a.system} minus ${b.system} (${a.mode}, ${a.unit}): ${a.total} - ${b.total} = ${(a.total - b.total).toFixed(1)}`);
  for (const part of ['byOwner', 'byFrame']) {
    const keys = new Set([...Object.keys(a[part]), ...Object.keys(b[part])]);
    const rows = [...keys].map((k) => [k, (a[part][k] ?? 0) - (b[part][k] ?? 0), a[part][k] ?? 0, b[part][k] ?? 0]).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
    for (const [k, d, x, y] of rows.slice(0, part === 'byOwner' ? 20 : top)) console.log(`  ${d.toFixed(1).padStart(9)} (${x} - ${y})  ${k}`);
  }
}

const top = Number(opt('top', '40'));
const cmp = opt('compare', undefined);
if (cmp !== undefined) {
  const [a, b] = cmp.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')));
  compare(a, b, top);
} else {
  const result = await measure(opt('system', 'switchboard'), opt('mode', 'alloc'));
  if (opt('out', undefined)) writeFileSync(opt('out'), JSON.stringify(result, null, 1));
  print(result, top);
}
