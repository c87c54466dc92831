/**
 * Mutations of valid messages into the inputs a gateway must survive: truncated JSON, invalid
 * UTF-8, deep nesting, huge numbers and strings, odd id types, wrong field types, unknown
 * methods, batches, answers to nothing, cancels for nothing, colliding progress tokens, stray
 * bytes. Each takes a message (and the generator) and gives the bytes to send. Raw JSON text a
 * JSON value cannot hold (`1e400`, `-0`, duplicate keys) goes in through `raw()`.
 */
import type { Json, JsonObject } from './corpus.ts';
import type { Rng } from './prng.ts';

const RAW = '\u0000RAW:';
/** A placeholder for JSON text written as is (numbers JSON.parse would round, `-0`...). */
export function raw(text: string): string {
  return `${RAW}${Buffer.from(text).toString('base64')}\u0000`;
}
/** JSON.stringify, then the `raw()` placeholders replaced by their text. */
export function serialize(value: Json): string {
  return JSON.stringify(value).replace(/"\\u0000RAW:([A-Za-z0-9+/=]*)\\u0000"/g, (_m, b64: string) => Buffer.from(b64, 'base64').toString());
}

export const ODD_IDS: readonly string[] = [
  'null', '1.5', '{}', '[]', 'true', 'false', '18446744073709551616', '"-0"', '-0', '""', '1e3', '1E400', '-1',
  '"\\u0000"', '9007199254740993', '0.1e-999', `"${'i'.repeat(5_000)}"`, '[1,2]', '{"id":1}', '"\\ud800"',
];
const HUGE_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '-0', '1.0', '0.0000000000000000000001', '-9007199254740993', `1${'0'.repeat(400)}`];
const WRONG_VALUES: readonly string[] = ['null', '42', '"text"', '[]', '{}', 'true', '-1.5', '[{"a":1}]'];
const UNKNOWN_METHODS = ['', 'rpc.discover', 'notifications/', 'tools/cal', 'TOOLS/LIST', 'ünïcödé/method', 'x'.repeat(3_000), 'a/b/c/d/e', '__proto__', 'constructor', 'initialize/', 'sampling/createMessage', 'elicitation/create'];
const INVALID_UTF8 = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xc0, 0xaf], [0x80]];

export interface Mutation {
  name: string;
  apply(message: JsonObject, rng: Rng, limits: MutationLimits): Buffer;
}

export interface MutationLimits {
  /** The gateway's body limit: huge strings go up to a little past it. */
  maxBodyBytes: number;
}

const clone = (m: JsonObject): JsonObject => structuredClone(m);
const bytes = (m: Json) => Buffer.from(serialize(m));
const paramsOf = (m: JsonObject): JsonObject => {
  if (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params)) m.params = {};
  return m.params as JsonObject;
};

function nested(depth: number, rng: Rng): string {
  const array = rng.chance(0.5);
  return array ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Sets a field somewhere the gateway reads (id, params, arguments, _meta) or passes through. */
function setSomewhere(m: JsonObject, rng: Rng, value: string): JsonObject {
  const out = clone(m);
  switch (rng.int(5)) {
    case 0:
      out.id = raw(value);
      break;
    case 1:
      paramsOf(out).arguments = { text: raw(value) };
      break;
    case 2:
      paramsOf(out)._meta = { progressToken: raw(value) };
      break;
    case 3:
      out.params = raw(value);
      break;
    default:
      out[`x${rng.int(100)}`] = raw(value);
  }
  return out;
}

export const MUTATIONS: readonly Mutation[] = [
  { name: 'valid', apply: (m) => bytes(m) },
  {
    name: 'truncated',
    apply: (m, rng) => {
      const text = bytes(m);
      return text.subarray(0, rng.range(0, Math.max(0, text.length - 1)));
    },
  },
  {
    name: 'invalid-utf8',
    apply: (m, rng) => {
      const text = bytes(m);
      const at = rng.int(text.length + 1);
      return Buffer.concat([text.subarray(0, at), Buffer.from(rng.pick(INVALID_UTF8)), text.subarray(at)]);
    },
  },
  { name: 'deep-nesting', apply: (m, rng) => bytes(setSomewhere(m, rng, nested(rng.pick([64, 127, 128, 129, 500, 20_000, 200_000]), rng))) },
  { name: 'huge-number', apply: (m, rng) => bytes(setSomewhere(m, rng, rng.pick(HUGE_NUMBERS))) },
  {
    name: 'huge-string',
    apply: (m, rng, limits) => {
      const size = rng.pick([1_000, 64 * 1024, Math.floor(limits.maxBodyBytes * 0.9), limits.maxBodyBytes + 10]);
      return bytes(setSomewhere(m, rng, JSON.stringify(rng.pick(['x', 'é', '\\', '"', '\n']).repeat(Math.max(1, Math.floor(size / 2))))));
    },
  },
  {
    name: 'odd-id',
    apply: (m, rng) => {
      const out = clone(m);
      out.id = raw(rng.pick(ODD_IDS));
      return bytes(out);
    },
  },
  {
    name: 'wrong-type',
    apply: (m, rng) => {
      const out = clone(m);
      const field = rng.pick(['jsonrpc', 'method', 'params', 'id', 'result', 'error', 'params.name', 'params.arguments', 'params._meta', 'params.requestId']);
      const value = raw(rng.pick(WRONG_VALUES));
      if (field.startsWith('params.')) paramsOf(out)[field.slice(7)] = value;
      else out[field] = value;
      return bytes(out);
    },
  },
  {
    name: 'drop-field',
    apply: (m, rng) => {
      const out = clone(m);
      delete out[rng.pick(['jsonrpc', 'method', 'id', 'params'])];
      return bytes(out);
    },
  },
  {
    name: 'unknown-method',
    apply: (m, rng) => {
      const out = clone(m);
      out.method = rng.pick(UNKNOWN_METHODS);
      if (rng.chance(0.3)) delete out.id;
      return bytes(out);
    },
  },
  {
    name: 'extra-fields',
    apply: (m, rng) => {
      const out = clone(m);
      out.extension = { nested: [1, 'two', null] };
      paramsOf(out)[rng.pick(['__proto__', 'constructor', 'zz', '_meta'])] = { polluted: true };
      return bytes(out);
    },
  },
  {
    name: 'duplicate-keys',
    apply: (m, rng) => {
      const text = serialize(m);
      const dup = rng.pick(['"id":"dup",', '"jsonrpc":"1.0",', '"method":"ping",', '"params":[],']);
      return Buffer.from(rng.chance(0.5) ? text.replace('{', `{${dup}`) : text.replace(/}$/, `,${dup.slice(0, -1)}}`));
    },
  },
  {
    name: 'answer-to-nothing',
    apply: (_m, rng) => bytes({ jsonrpc: '2.0', id: raw(rng.pick(['1', '"srv-1"', '424242', '0', ...ODD_IDS])), ...(rng.chance(0.5) ? { result: {} } : { error: { code: -1, message: 'x' } }) }),
  },
  {
    name: 'cancel-for-nothing',
    apply: (_m, rng) => {
      const params: JsonObject = { reason: 'fuzz' };
      if (rng.chance(0.8)) params.requestId = raw(rng.pick(['1', '"nope"', '0', ...ODD_IDS]));
      return bytes({ jsonrpc: '2.0', method: 'notifications/cancelled', params });
    },
  },
  {
    name: 'progress-for-nothing',
    apply: (_m, rng) => bytes({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: raw(rng.pick(['"p-0"', '1', ...ODD_IDS])), progress: raw(rng.pick(['1', '-1', '1e400', '"x"'])) } }),
  },
  {
    name: 'byte-flip',
    apply: (m, rng) => {
      const text = Buffer.from(bytes(m));
      for (let i = rng.range(1, 4); i > 0 && text.length > 0; i--) text[rng.int(text.length)] = rng.int(256);
      return text;
    },
  },
  {
    name: 'whitespace',
    apply: (m, rng) => {
      const pad = rng.pick(['\uFEFF', ' \n\t', '\u0000', '\r\n\r\n', '\u2028']);
      return Buffer.from(rng.chance(0.5) ? pad + serialize(m) : serialize(m) + pad);
    },
  },
  {
    name: 'not-an-object',
    apply: (_m, rng) => Buffer.from(rng.pick(['', ' ', 'null', '0', '"str"', 'true', '[]', '[[]]', '[1,2]', '{}', '{"jsonrpc":"2.0"}', 'NaN', 'undefined', '{"__proto__":{"x":1}}'])),
  },
];

export const mutationNamed = (name: string): Mutation => {
  const found = MUTATIONS.find((m) => m.name === name);
  if (found === undefined) throw new Error(`no mutation ${name}`);
  return found;
};
