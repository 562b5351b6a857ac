// A second control plane runs beside the shared one without clashing, and none of its servers
// outlives the process that started it: not after SIGTERM, not even after SIGKILL.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/async.js';
import { kubeConfig } from '../support/harness.js';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../deploy/local/control-plane-cli.ts', import.meta.url));

/** Processes whose command line mentions `dir` (the data directory every server is given). */
async function processesUsing(dir: string): Promise<string[]> {
  try {
    const { stdout } = await run('pgrep', ['-f', '-a', dir]);
    return stdout
      .trim()
      .split('\n')
      .filter((l) => l !== '');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function startSecondControlPlane(): Promise<{ dataDir: string; pid: number; apiserverUrl: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'weka-cp-second-'));
  const child = spawn(process.execPath, ['--import', 'tsx', cli, '--data-dir', dataDir, '--nodes', '1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const apiserverUrl = await eventually(
    'the second control plane to start',
    async () => {
      if (child.exitCode !== null) throw new Error(`control plane exited early:\n${output}`);
      return /apiserver:\s+(https:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    },
    120_000,
  );
  return { dataDir, pid: child.pid!, apiserverUrl };
}

describe('control plane lifecycle', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    // Longer than the start-up wait below, so that a slow start fails with the control plane's output.
    it(
      `runs beside the shared control plane and leaves no process behind after ${signal}`,
      { timeout: 200_000 },
      async () => {
        const second = await startSecondControlPlane();
        expect(second.apiserverUrl).not.toBe(kubeConfig().getCurrentCluster()?.server);
        const servers = await processesUsing(second.dataDir);
        // etcd, the Kubernetes servers, temporal and the node's kwok, each under its supervisor.
        for (const name of [
          'etcd',
          'kube-apiserver',
          'kube-scheduler',
          'kube-controller-manager',
          'temporal',
          'kwok',
        ]) {
          expect(
            servers.some((line) => line.includes(`/${name} `) || line.includes(`/${name}-`)),
            `${name} is running`,
          ).toBe(true);
        }

        process.kill(second.pid, signal);
        const left = await eventually(
          `every server of the second control plane to exit after ${signal}`,
          async () => {
            const remaining = await processesUsing(second.dataDir);
            return remaining.length === 0 ? remaining : undefined;
          },
          30_000,
        );
        expect(left).toEqual([]);
      },
    );
  }
});
