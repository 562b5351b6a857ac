// The operator as a separate process (deploy/operator/main.ts under tsx), so tests can SIGKILL
// and restart it like a crashed pod.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { eventually, temporalAddress, temporalNamespace } from '../harness.js';

const main = fileURLToPath(new URL('../../../deploy/operator/main.ts', import.meta.url));

export interface OperatorProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startOperatorProcess(env: Record<string, string>): Promise<OperatorProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: {
      ...process.env,
      KUBECONFIG: inject('kubeconfigPath'),
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_NAMESPACE: temporalNamespace(),
      LOG_LEVEL: 'info',
      WEKA_HTTP_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await eventually(
    'the operator process to run its worker',
    async () => {
      if (child.exitCode !== null) throw new Error(`operator exited early:\n${out}`);
      return out.includes('worker running') ? true : undefined;
    },
    60_000,
  );
  return {
    child,
    output: () => out,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
