import { describe, expect, it } from 'vitest';
import { createTaskRegistry } from '../../../../src/session/chain/tasks.ts';

describe('the task registry of a session', () => {
  it('remembers what created a task, and knows no other', () => {
    const tasks = createTaskRegistry();
    tasks.remember('t1', { target: 'files', tool: 'research', params: { name: 'research' } });
    expect(tasks.origin('t1')).toEqual({ target: 'files', tool: 'research', params: { name: 'research' } });
    expect(tasks.origin('t2')).toBeUndefined();
  });

  it('is bounded: past the bound the oldest is forgotten first', () => {
    const tasks = createTaskRegistry(2);
    for (const id of ['a', 'b', 'c']) tasks.remember(id, { target: 'x', tool: id, params: undefined });
    expect(tasks.size).toBe(2);
    expect(tasks.origin('a')).toBeUndefined();
    expect(tasks.origin('c')?.tool).toBe('c');
  });
});
