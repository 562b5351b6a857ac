// One kwok per fake node: it makes the node Ready, runs its pods, and answers exec into them by
// running the command locally with the Weka tools pointed at this node's simulator state.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { startServer, waitUntilReady, type ServerProcess } from './processes.js';

const stagesConfig = fileURLToPath(new URL('./kwok/stages.yaml', import.meta.url));

export interface KwokOptions {
  binary: string;
  nodeName: string;
  kubeconfigPath: string;
  port: number;
  tlsCert: string;
  tlsKey: string;
  /** Pod IPs are bookkeeping only; nothing dials them. */
  podCidr: string;
  /** Directory holding the simulator shims (SHIMMED_TOOLS), put first on the exec PATH. */
  shimDir: string;
  /** The node's simulator state directory, passed to the shims. */
  simulatorState: string;
  logDir: string;
  deadlineMs: number;
}

/**
 * Whether a kwok that failed to start is worth starting again: its port was taken by another
 * socket between choosing and binding it, or it crashed in its own start-up (kwok 0.8 initialises
 * its stages' CEL environments from several goroutines at once, which can end in a Go runtime
 * fault). A Go panic or runtime fault exits with status 2, and its first lines are often above the
 * tail an error quotes, so the status is what tells it apart from a refused flag (status 1).
 */
export function kwokStartRetryable(message: string): boolean {
  return /address already in use|exited during start-up \(exit 2\)|concurrent map|panic:|fatal error:/.test(message);
}

export async function startKwok(o: KwokOptions): Promise<ServerProcess> {
  const proc = startServer({
    name: `kwok(${o.nodeName})`,
    command: o.binary,
    args: [
      `--config=${stagesConfig}`,
      // Per-pod Exec objects map a pod's block volumes to the node's simulated devices (block-volumes.ts).
      '--enable-crds=Exec',
      `--kubeconfig=${o.kubeconfigPath}`,
      `--manage-single-node=${o.nodeName}`,
      '--node-ip=127.0.0.1',
      `--node-port=${o.port}`,
      `--server-address=127.0.0.1:${o.port}`,
      `--tls-cert-file=${o.tlsCert}`,
      `--tls-private-key-file=${o.tlsKey}`,
      `--cidr=${o.podCidr}`,
      // The node lifecycle controller, which watches node leases, does not run here (see CONTROLLERS):
      // skip the renewal traffic.
      '--node-lease-duration-seconds=0',
    ],
    logPath: join(o.logDir, `kwok-${o.nodeName}.log`),
    // kwok resolves an exec'd command on its own PATH, so the shims go there.
    env: { ...process.env, PATH: `${o.shimDir}:${process.env.PATH ?? ''}`, WEKA_SIM_STATE: o.simulatorState },
  });
  await waitUntilReady(
    proc,
    async () => {
      // kwok serves plain HTTP and TLS on the same port; the health check needs no certificate.
      const res = await fetch(`http://127.0.0.1:${o.port}/healthz`);
      return res.ok;
    },
    o.deadlineMs,
  );
  return proc;
}
