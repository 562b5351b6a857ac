// A fake node's drives made ready for drive sharing directly through its Weka simulator, without
// the operator: every device signed for proxy, then the node's weka.io/shared-drives annotation
// written (what a sign-drives WekaManualOperation leaves behind, minus the extended resources).
// For scripts such as the benchmarks, which start a ControlPlane themselves and need many nodes
// ready quickly; the integration tests do the same through the harness.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { PhysicalDrive } from '../../src/allocation/index.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { driveAt, parseSignDriveList } from '../../src/weka/index.js';
import type { SimulatedDevice } from './fake-nodes.js';
import { simulatorArgs, simulatorFiles } from './weka-sim/bundle.js';

const run = promisify(execFile);

/**
 * Runs the simulator against one node's state (`<simulatorRoot>/nodes/<node>`), from the bundle
 * the control plane built beside its shims (`<simulatorRoot>/bin`) when it added its first node.
 */
export async function simulate(simulatorRoot: string, node: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [
    ...simulatorArgs(simulatorFiles(join(simulatorRoot, 'bin'))),
    '--state',
    join(simulatorRoot, 'nodes', node),
    ...args,
  ]);
  return stdout;
}

/** Signs every device of the node for proxy and publishes them in the node's annotation. */
export async function signSharedDrives(o: {
  kubeConfig: KubeConfig;
  simulatorRoot: string;
  node: string;
  devices: readonly SimulatedDevice[];
}): Promise<PhysicalDrive[]> {
  const drives: PhysicalDrive[] = [];
  for (const d of o.devices) {
    await simulate(o.simulatorRoot, o.node, '--', 'weka-sign-drive', 'sign', 'proxy', d.path);
    const info = driveAt(
      parseSignDriveList(await simulate(o.simulatorRoot, o.node, '--', 'weka-sign-drive', 'list', '-j')),
      d.path,
    );
    drives.push({
      physicalUUID: info.physicalUUID!,
      serial: info.serial,
      capacityGiB: info.capacityGiB,
      type: info.type,
      devicePath: d.path,
    });
  }
  await o.kubeConfig.makeApiClient(CoreV1Api).patchNode(
    {
      name: o.node,
      body: { metadata: { annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return drives;
}

/** Creates a Weka cluster in the simulator (clusters are shared by every node) and returns its GUID. */
export async function createSimulatedCluster(simulatorRoot: string, node: string, name: string): Promise<string> {
  return (
    JSON.parse(await simulate(simulatorRoot, node, '--', 'weka', 'cluster', 'create', name, '--json')) as {
      guid: string;
    }
  ).guid;
}
