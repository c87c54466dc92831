#!/usr/bin/env node
// The leanest MCP server we can write: NDJSON over stdio, no SDK, no validation, no allocation
// beyond one JSON.parse and one JSON.stringify per message. The upstream of the benchmarks, where
// it must never be the bottleneck. What it answers: see echo-core.mjs.
//
// Options: --result-bytes=N pads every echo result to N characters (a tool argument `bytes` wins).
//
// Exits when stdin ends, so it never outlives whoever started it.
import process from 'node:process';
import { answer, defaultResultBytes } from './echo-core.mjs';

const resultBytes = defaultResultBytes(process.argv.slice(2));
const out = process.stdout;

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let start = 0;
  let nl;
  let batch = '';
  while ((nl = buffer.indexOf('\n', start)) !== -1) {
    const line = buffer.slice(start, nl);
    start = nl + 1;
    if (line.length === 0) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue; // not ours to judge: the benchmark never sends garbage
    }
    const reply = answer(msg, resultBytes);
    // Answers to lines read together leave in one write (one wake-up of the reader).
    if (reply !== undefined) batch += JSON.stringify(reply) + '\n';
  }
  buffer = start === 0 ? buffer : buffer.slice(start);
  if (batch !== '') out.write(batch);
});
process.stdin.on('end', () => process.exit(0));
// The reader went away (the gateway or the benchmark died): nothing left to do.
out.on('error', () => process.exit(0));
