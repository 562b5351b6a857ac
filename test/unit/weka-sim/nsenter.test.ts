import { describe, expect, it } from 'vitest';
import { expectOk, readLog, rootDiskNode, sim, simRoot, tool } from './helpers.js';

const LSBLK = ['lsblk', '-J', '-d', '-o', 'NAME,MOUNTPOINT'];

describe('weka-sim nsenter', () => {
  it.each([
    ['long options and "--"', ['--mount', '--pid', '--target', '1', '--', ...LSBLK]],
    ['short options in another order', ['-t', '1', '-m', '-p', '--', ...LSBLK]],
    ['--target=1, without "--"', ['--target=1', '--pid', '--mount', ...LSBLK]],
    ['-t1 and lsblk by its path', ['-p', '-t1', '-m', '/usr/bin/lsblk', ...LSBLK.slice(1)]],
  ])('runs lsblk in the host namespaces given %s', async (_what, argv) => {
    const state = await rootDiskNode(await simRoot());
    const direct = await expectOk(tool(state, ...LSBLK));
    expect(await tool(state, 'nsenter', ...argv)).toEqual(direct);
    expect((await readLog(state)).at(-1)).toMatchObject({ argv: ['nsenter', ...argv], exitCode: 0, changes: [] });
  });

  const mountpoints = (stdout: string): Array<string | null> =>
    (JSON.parse(stdout) as { blockdevices: Array<{ mountpoint: string | null; children?: unknown[] }> }).blockdevices
      .flatMap((d) => [d, ...((d.children ?? []) as Array<{ mountpoint: string | null }>)])
      .map((d) => d.mountpoint);
  const PARTITIONS = ['lsblk', '-J', '-o', 'NAME,MOUNTPOINT'];

  it("sees the host's mounts from a hostPID pod, as on the node itself", async () => {
    const state = await rootDiskNode(await simRoot());
    const onNode = await expectOk(tool(state, 'nsenter', '-m', '-p', '-t', '1', '--', ...PARTITIONS));
    expect(mountpoints(onNode.stdout)).toContain('/');
    const fromPod = await sim(
      '--state',
      state,
      '--in-host-pid-pod',
      '--',
      'nsenter',
      '-m',
      '-p',
      '-t',
      '1',
      ...PARTITIONS,
    );
    expect(fromPod).toEqual(onNode);
  });

  it("sees no mount of the host from a pod without hostPID: PID 1 is the pod's own", async () => {
    const state = await rootDiskNode(await simRoot());
    const result = await expectOk(
      sim('--state', state, '--in-pod', '--', 'nsenter', '-m', '-p', '-t', '1', ...PARTITIONS),
    );
    const seen = JSON.parse(result.stdout) as { blockdevices: Array<{ name: string; children?: unknown[] }> };
    expect(seen.blockdevices.map((d) => d.name)).toEqual(['nvme0n1', 'sda']);
    expect(seen.blockdevices[1]!.children).toHaveLength(3);
    expect(mountpoints(result.stdout).every((m) => m === null)).toBe(true);
  });

  it("sees no mount of the host with lsblk alone in a pod, hostPID or not: the pod's mount namespace is its own", async () => {
    const state = await rootDiskNode(await simRoot());
    for (const pod of ['--in-pod', '--in-host-pid-pod']) {
      const result = await expectOk(sim('--state', state, pod, '--', ...PARTITIONS));
      expect(mountpoints(result.stdout).every((m) => m === null)).toBe(true);
    }
    expect(mountpoints((await expectOk(tool(state, ...PARTITIONS))).stdout)).toContain('/');
  });

  const ONLY = 'the simulated nsenter takes exactly --mount, --pid and --target 1';
  it.each([
    ['no --target', ['--mount', '--pid', '--', ...LSBLK], 64, `nsenter: missing --target; ${ONLY}`],
    ['neither --mount nor --pid', ['-t', '1', ...LSBLK], 64, `nsenter: missing --mount, --pid; ${ONLY}`],
    [
      'another target',
      ['-m', '-p', '-t', '2', ...LSBLK],
      64,
      `nsenter: only PID 1's namespaces can be entered (--target 1), not "2"`,
    ],
    ['--target without a value', ['-m', '-p', '--target'], 64, "nsenter: option '--target' requires an argument"],
    [
      'another namespace',
      ['-m', '-p', '-t', '1', '--net', ...LSBLK],
      64,
      `nsenter: unsupported option '--net'; ${ONLY}`,
    ],
    [
      '-mp (a mount namespace file "p")',
      ['-mp', '-t', '1', ...LSBLK],
      64,
      `nsenter: unsupported option '-mp'; ${ONLY}`,
    ],
    [
      '--mount=FILE',
      ['--mount=/proc/1/ns/mnt', '-p', '-t', '1', ...LSBLK],
      64,
      `nsenter: unsupported option '--mount=/proc/1/ns/mnt'`,
    ],
    ['an option twice', ['-m', '--mount', '-p', '-t', '1', ...LSBLK], 64, "nsenter: option '--mount' given twice"],
    [
      'no command',
      ['-m', '-p', '-t', '1', '--'],
      64,
      'nsenter: no command given; the simulated nsenter runs only lsblk',
    ],
    [
      'a command other than lsblk',
      ['-m', '-p', '-t', '1', '--', 'weka-sign-drive', 'show', '/dev/sda'],
      65,
      `nsenter: the simulator runs only lsblk in the host's namespaces, not "weka-sign-drive"`,
    ],
    ['lsblk through a shell', ['-m', '-p', '-t', '1', 'sh', '-c', 'lsblk -J'], 65, 'not "sh"'],
    ["lsblk's unknown column", ['-m', '-p', '-t', '1', 'lsblk', '-J', '-o', 'X'], 1, 'lsblk: unknown column: X'],
    [
      "lsblk's unknown device",
      ['-m', '-p', '-t', '1', 'lsblk', '-J', '/dev/x'],
      32,
      'lsblk: /dev/x: not a block device',
    ],
    ["lsblk's usage error", ['-m', '-p', '-t', '1', 'lsblk', '-p'], 64, 'lsblk: only JSON output is simulated'],
  ])('refuses %s', async (_what, argv, exitCode, message) => {
    const state = await rootDiskNode(await simRoot());
    const result = await tool(state, 'nsenter', ...argv);
    expect(result.exitCode).toBe(exitCode);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(result.stderr.endsWith('\n')).toBe(true);
    expect((await readLog(state)).at(-1)).toMatchObject({ argv: ['nsenter', ...argv], exitCode, changes: [] });
  });
});
