import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bwrapArgs, containedSpawn, wrapperScript } from '../../../src/transport/sandbox-args.ts';

const closed = { writable: ['/srv/data'], readable: undefined, network: false };

/** The options bwrap gets, as [option, ...its operands] groups, in order. */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const arity = ['--ro-bind', '--ro-bind-try', '--bind'].includes(arg) ? 2 : ['--tmpfs', '--proc', '--dev', '--chdir', '--dir', '--remount-ro', '--cap-drop'].includes(arg) ? 1 : 0;
    out.push([arg, ...args.slice(i + 1, i + 1 + arity)].join(' '));
    i += arity;
  }
  return out;
}

describe('bwrapArgs', () => {
  it('unshares everything (network included), dies with its parent, starts a new session, keeps no capability', () => {
    const args = bwrapArgs(closed, { home: '/root' });
    expect(args.slice(0, 5)).toEqual(['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL']);
    expect(args).not.toContain('--share-net');
    expect(bwrapArgs({ ...closed, network: true }, { home: '/root' })).toContain('--share-net');
  });

  it('without `readable`: the whole system read-only, /run hidden, private /tmp and home, then the writable paths', () => {
    expect(mounts(bwrapArgs(closed, { home: '/home/me', cwd: '/srv/data' })).slice(4)).toEqual([
      '--ro-bind / /', '--tmpfs /run', '--proc /proc', '--dev /dev', '--tmpfs /tmp', '--tmpfs /home/me', '--ro-bind /srv/data /srv/data', '--bind /srv/data /srv/data', '--chdir /srv/data',
    ]);
  });

  it('in every mode the child sees itself: command folder, own files and working folder bound read-only after the private /tmp and home, before the writable paths', () => {
    const paths = { home: '/home/me', commandDir: '/home/me/.nvm/bin', own: ['/tmp/a b/server.mjs', '/var/cache/pkg'], cwd: '/tmp/a b' };
    for (const readable of [undefined, []]) {
      const list = mounts(bwrapArgs({ writable: ['/tmp/a b/out'], readable, network: false }, paths));
      const order = ['--tmpfs /tmp', '--tmpfs /home/me', '--ro-bind /home/me/.nvm/bin /home/me/.nvm/bin', '--ro-bind /tmp/a b/server.mjs /tmp/a b/server.mjs', '--ro-bind /var/cache/pkg /var/cache/pkg', '--ro-bind /tmp/a b /tmp/a b', '--bind /tmp/a b/out /tmp/a b/out', '--chdir /tmp/a b'].map((m) => list.indexOf(m));
      expect(order.every((at) => at >= 0), String(readable)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    }
  });

  it('never binds a folder that would undo the private /tmp or home (/, /home, the home itself); a hidden working folder is created empty', () => {
    const list = mounts(bwrapArgs({ writable: [], readable: undefined, network: false }, { home: '/home/me', cwd: '/', own: ['/home', '/home/me', '/tmp'], workdir: '/tmp/x' }));
    expect(list.filter((m) => m.startsWith('--ro-bind ') && m !== '--ro-bind / /')).toEqual([]);
    const hidden = mounts(bwrapArgs({ writable: [], readable: undefined, network: false }, { home: '/home/me', workdir: '/tmp/clone' }));
    expect(hidden.slice(-2)).toEqual(['--dir /tmp/clone', '--chdir /tmp/clone']);
  });

  it('with `readable`: system folders, the listed and command paths, writable ones last, then the root read-only', () => {
    const list = mounts(bwrapArgs({ writable: ['/tmp/out'], readable: ['/etc/ssl'], network: false }, { home: '/root', commandDir: '/opt/node/bin' }));
    expect(list).not.toContain('--ro-bind / /');
    expect(list).toContain('--ro-bind-try /usr /usr');
    expect(list).not.toContain('--ro-bind-try /etc/resolv.conf /etc/resolv.conf');
    const order = ['--tmpfs /tmp', '--ro-bind /etc/ssl /etc/ssl', '--ro-bind /opt/node/bin /opt/node/bin', '--bind /tmp/out /tmp/out', '--remount-ro /'].map((m) => list.indexOf(m));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('name resolution files only with the network', () => {
    const args = bwrapArgs({ writable: [], readable: [], network: true }, { home: '/root' });
    expect(mounts(args)).toContain('--ro-bind-try /etc/resolv.conf /etc/resolv.conf');
  });
});

describe('containedSpawn', () => {
  it('is the command itself when nothing contains it', () => {
    expect(containedSpawn({ command: 'node', args: ['s.js'], cgroupProcs: [] })).toEqual({ command: 'node', args: ['s.js'] });
  });

  it('puts bwrap before the command, and the shell wrapper (cgroups, rlimits) before bwrap', () => {
    const run = containedSpawn({
      command: 'node',
      args: ['s.js', '--flag'],
      sandbox: { config: closed, bwrap: '/usr/bin/bwrap', paths: { home: '/root' } },
      limits: { processes: 8, openFiles: 64 },
      cgroupProcs: ['/cg/a/cgroup.procs', '/cg/b/cgroup.procs'],
    });
    expect(run.command).toBe('/bin/sh');
    expect(run.args.slice(0, 7)).toEqual(['-c', wrapperScript({ processes: 8, openFiles: 64 }), 'sh', '/cg/a/cgroup.procs', '/cg/b/cgroup.procs', '--', '/usr/bin/bwrap']);
    expect(run.args.slice(-4)).toEqual(['--', 'node', 's.js', '--flag']);
  });
});

describe('wrapperScript (run by the real /bin/sh)', () => {
  const sh = (script: string, ...args: string[]) => execFileSync('/bin/sh', ['-c', script, 'sh', ...args], { encoding: 'utf8' });

  it('sets the rlimits, then runs the command with its arguments intact', () => {
    const out = sh(wrapperScript({ cpuSeconds: 7, openFiles: 99 }), '--', '/bin/sh', '-c', 'ulimit -S -t; ulimit -H -t; ulimit -n; printf "%s|" "$@"', 'x', 'a b', '$HOME;`id`');
    expect(out).toBe('7\n8\n99\na b|$HOME;`id`|');
  });

  it('refuses to run the command when it cannot join a cgroup (exit 125)', () => {
    expect(() => sh(wrapperScript(undefined), '/nonexistent/cgroup.procs', '--', '/bin/echo', 'ran')).toThrow(/Command failed/);
    try {
      sh(wrapperScript(undefined), '/nonexistent/cgroup.procs', '--', '/bin/echo', 'ran');
    } catch (error) {
      expect((error as { status: number }).status).toBe(125);
      expect(String((error as { stdout: string }).stdout)).toBe('');
    }
  });
});
