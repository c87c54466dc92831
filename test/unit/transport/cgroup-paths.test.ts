import { describe, expect, it } from 'vitest';
import { locate, parseKeyedCounts, parseMountinfo, parseProcCgroup } from '../../../src/transport/cgroup-paths.ts';

// A hybrid host (this project's CI machines): memory and pids on v1, a v2 mount with neither.
const HYBRID_MOUNTS = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '42 31 0:39 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  '43 31 0:40 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
].join('\n');
const HYBRID_SELF = ['8:pids:/', '4:memory:/process_api/abc', '1:cpu,cpuacct:/', '0::/'].join('\n');

// A unified host: systemd service in its own cgroup; a cgroup namespace whose root is a sub-path.
const V2_MOUNTS = '29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
const V2_SELF = '0::/system.slice/switchboard.service';

describe('parseMountinfo and parseProcCgroup', () => {
  it('find v1 hierarchies with their controllers and the v2 mount', () => {
    const mounts = parseMountinfo(HYBRID_MOUNTS);
    expect(mounts.map((m) => [m.mountPoint, m.version])).toEqual([
      ['/sys/fs/cgroup/memory', 1], ['/sys/fs/cgroup/pids', 1], ['/sys/fs/cgroup/unified', 2], ['/sys/fs/cgroup/cpu,cpuacct', 1],
    ]);
    expect(mounts[3]?.controllers).toEqual(['rw', 'cpu', 'cpuacct']);
    const self = parseProcCgroup(HYBRID_SELF);
    expect(self.v2).toBe('/');
    expect(self.v1.get('memory')).toBe('/process_api/abc');
    expect(self.v1.get('cpuacct')).toBe('/');
  });

  it('unescape octal escapes in mount points', () => {
    expect(parseMountinfo('1 2 0:1 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw')[0]?.mountPoint).toBe('/mnt/my cgroups');
  });
});

describe('locate', () => {
  it('uses v1 for a controller the v2 mount does not offer', () => {
    const mounts = parseMountinfo(HYBRID_MOUNTS);
    const self = parseProcCgroup(HYBRID_SELF);
    expect(locate('memory', mounts, self, [])).toEqual({ version: 1, ownDir: '/sys/fs/cgroup/memory/process_api/abc', mountPoint: '/sys/fs/cgroup/memory' });
    expect(locate('pids', mounts, self, ['hugetlb'])).toEqual({ version: 1, ownDir: '/sys/fs/cgroup/pids', mountPoint: '/sys/fs/cgroup/pids' });
  });

  it('prefers v2 when it offers the controller', () => {
    const located = locate('memory', parseMountinfo(V2_MOUNTS), parseProcCgroup(V2_SELF), ['cpu', 'memory', 'pids']);
    expect(located).toEqual({ version: 2, ownDir: '/sys/fs/cgroup/system.slice/switchboard.service', mountPoint: '/sys/fs/cgroup' });
  });

  it('strips a namespaced mount root from the own path', () => {
    const mounts = parseMountinfo('29 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw');
    expect(locate('pids', mounts, parseProcCgroup('0::/docker/abc/inner'), ['pids'])).toMatchObject({ ownDir: '/sys/fs/cgroup/inner' });
  });

  it('says why when no hierarchy has the controller', () => {
    expect(locate('memory', parseMountinfo(V2_MOUNTS), parseProcCgroup(V2_SELF), ['cpu'])).toBe('no cgroup hierarchy offers the memory controller');
  });
});

describe('parseKeyedCounts', () => {
  it('reads memory.events, memory.oom_control and pids.events', () => {
    expect(parseKeyedCounts('low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n').get('oom_kill')).toBe(1);
    expect(parseKeyedCounts('oom_kill_disable 0\nunder_oom 0\noom_kill 2\n').get('oom_kill')).toBe(2);
    expect(parseKeyedCounts('max 17\n').get('max')).toBe(17);
  });
});
