/** `mcpServers.<name>.requiredScopes` and `gateway.auth.stepUp`: strict, with their defaults. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';

const AUTH = { jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks' } };
/** `auth` null: no gateway.auth section. */
const load = (requiredScopes: unknown, auth: unknown = AUTH) => () =>
  parseConfig({ mcpServers: { files: { command: 'x', requiredScopes }, plain: { command: 'y' } }, gateway: auth === null ? {} : { auth } });

describe('requiredScopes', () => {
  it('keeps the rules of the servers that set them, each kind filled', () => {
    const config = load({ tools: { 'delete_*': ['files:write'] }, resources: { 'file:///private/*': ['files:read'] } })();
    expect(config.requiredScopes).toEqual(new Map([['files', { tools: { 'delete_*': ['files:write'] }, prompts: {}, resources: { 'file:///private/*': ['files:read'] } }]]));
    expect(config.auth?.stepUp).toBe('http');
  });

  it('is undefined when no server sets any (nothing judged per call)', () => {
    expect(parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { auth: AUTH } }).requiredScopes).toBeUndefined();
  });

  it.each([
    ['without gateway.auth', { tools: { a: ['s'] } }, null, 'needs gateway.auth'],
    ['an unknown kind', { calls: { a: ['s'] } }, AUTH, 'calls'],
    ['an empty scope list', { tools: { a: [] } }, AUTH, 'name at least one scope'],
    ['a scope with a space', { tools: { a: ['files write'] } }, AUTH, 'a scope is printable ASCII'],
    ['a list instead of an object', { tools: ['a'] }, AUTH, 'expected an object of tool name globs'],
  ])('refuses %s, saying how to fix it', (_label, rules, auth, message) => {
    expect(load(rules, auth)).toThrow(message);
  });

  it('gateway.auth.stepUp is "http" or "jsonrpc"', () => {
    expect(load({ tools: { a: ['s'] } }, { ...AUTH, stepUp: 'jsonrpc' })().auth?.stepUp).toBe('jsonrpc');
    expect(load({ tools: { a: ['s'] } }, { ...AUTH, stepUp: '403' })).toThrow('expected "http" or "jsonrpc"');
  });
});
