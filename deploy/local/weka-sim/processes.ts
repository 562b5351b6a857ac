// Whether a listed Weka container's process runs. A drive container's Weka container runs in its
// pod: when the kubelet deletes the pod (or the pod ends), the process is gone and its ports on the
// host are free, while its cluster still lists it until someone removes it. The local control
// plane tells the simulator so from the pods it watches (deploy/local/pod-processes.ts), as the
// kubelet's killing the process would. Under the node lock and the cluster lock.
import { mkdirSync } from 'node:fs';
import { loadClusters, saveClusters } from './cluster-state.js';
import { withLock } from './lock.js';
import type { SimPaths } from './node-records.js';
import { UsageError, type ToolOutput } from './outcome.js';

export const PROCESS_USAGE = `usage:
  weka-sim --state DIR process --name NAME gone|running`;

/** The `process` subcommand: marks the node's containers of that name as stopped or running. */
export async function runProcessCommand(args: readonly string[], paths: SimPaths): Promise<ToolOutput> {
  const [flag, name, state] = args;
  if (args.length !== 3 || flag !== '--name' || !name || (state !== 'gone' && state !== 'running'))
    throw new UsageError(`process takes --name NAME gone|running, got ${JSON.stringify(args)}\n${PROCESS_USAGE}`);
  mkdirSync(paths.clustersDir, { recursive: true });
  return withLock(paths.clustersLock, () => {
    const clusters = loadClusters(paths);
    const here = clusters.containers.filter((c) => c.name === name && c.hostname === paths.nodeName);
    for (const c of here) {
      if (state === 'gone') c.processGone = true;
      else delete c.processGone;
    }
    if (here.length > 0) saveClusters(paths, clusters);
    return {
      stdout: `${here.length} container(s) named ${name} on ${paths.nodeName}: process ${state}\n`,
      changes: here.map((c) => ({ kind: `process-${state}` as const, containerId: c.containerId, name })),
    };
  });
}
