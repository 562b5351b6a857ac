import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Runs the real entry point as a user would, through stdin, stdout, stderr and the exit code.

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

function wekaDrives(
  args: readonly string[],
  stdin: string,
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'src/cli/weka-drives.ts', ...args], { cwd: repoRoot, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
    // On a usage error the CLI exits without reading stdin; the broken pipe is expected then.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

const input = (request: object) =>
  JSON.stringify({
    physicalDrives: [
      { physicalUUID: 'a', serial: 'SA', capacityGiB: 20000, type: 'TLC', devicePath: '/dev/nvme0n1' },
      { physicalUUID: 'b', serial: 'SB', capacityGiB: 500, type: 'TLC', devicePath: '/dev/nvme1n1' },
      { physicalUUID: 'c', serial: 'SC', capacityGiB: 500, type: 'TLC', devicePath: '/dev/nvme2n1' },
    ],
    claimed: [{ container: 'ns/other', virtualDrives: [] }],
    request,
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.concurrent('weka-drives plan (end to end)', { timeout: 120_000 }, () => {
  it('prints the virtual drives with fresh random UUIDs and exits 0', async () => {
    const run = await wekaDrives(
      ['plan'],
      input({ driveCores: 3, containerCapacity: 21000, driveTypesRatio: { tlc: 1, qlc: 0 } }),
    );
    expect(run.exitCode).toBe(0);
    const output = JSON.parse(run.stdout) as { virtualDrives: { virtualUUID: string; capacityGiB: number }[] };
    expect(output.virtualDrives.map((vd) => vd.capacityGiB)).toEqual([20000, 500, 500]);
    for (const vd of output.virtualDrives) expect(vd.virtualUUID).toMatch(UUID);
  });

  it('prints the error document and exits 2 when the allocation is refused', async () => {
    const run = await wekaDrives(
      ['plan'],
      input({ driveCores: 3, containerCapacity: 30000, driveTypesRatio: { tlc: 1, qlc: 0 } }),
    );
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      error: { type: 'InsufficientDriveCapacity', reason: 'not-enough-capacity' },
    });
  });

  it('prints a table with --human', async () => {
    const run = await wekaDrives(['plan', '--human'], input({ driveCores: 1, numDrives: 2, driveCapacity: 400 }));
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('FREE BEFORE');
    expect(run.stdout).toContain('TLC: 800 GiB as 2 virtual drives by fixed-size');
  });

  it('exits 1 with a message on stderr when stdin is not JSON', async () => {
    const run = await wekaDrives(['plan'], 'not json');
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('weka-drives plan: stdin is not a JSON document');
  });

  it('prints usage and exits 1 for an unknown command', async () => {
    const run = await wekaDrives(['apply'], '');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('usage: weka-drives plan [--human]');
  });
});
