// Whether any of a container's virtual drives is still signed on its node's devices, asked of the
// node's ssdproxy pod: a release of a container whose teardown did not run in its own pod (it
// finished without the pod, or its object vanished mid-teardown) frees the capacity of what the
// devices no longer hold, and keeps counting what they still do.
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/index.js';
import type { ContainerAllocation } from '../src/allocation/types.js';
import { proxyName, WEKA_POD_CONTAINER } from '../src/api/names.js';
import { driveAt, listDrivesCall } from '../src/weka/index.js';
import type { V1Node } from '@kubernetes/client-node';
import type { ActivityDeps } from './deps.js';
import { wekaCli } from './weka-cli.js';

/** Reads of the devices before what cannot be told is counted as left. */
const READ_ATTEMPTS = 3;

export function createSignedOnDevices(deps: ActivityDeps) {
  const run = wekaCli(deps.exec);
  /**
   * True when a device still holds one of the allocation's virtual drives, or when that cannot be
   * told (a node not Ready, no proxy to ask, a device not listed, a command that failed): what is not known to be
   * gone stays counted. Whole drives are never asked about: they stay counted until signed again.
   */
  return async function stillSigned(node: V1Node, alloc: ContainerAllocation): Promise<boolean> {
    if (alloc.drives?.length) return true;
    // A node that is not Ready would keep the node's mutex waiting on an exec that cannot answer.
    if (!node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return true;
    const decoded = decodeSharedDrivesAnnotation(node.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
    if (!decoded.ok) return true;
    const name = node.metadata?.name ?? '';
    const target = { namespace: deps.operatorNamespace, pod: proxyName(name), container: WEKA_POD_CONTAINER };
    const paths = new Set<string>();
    for (const drive of alloc.virtualDrives) {
      const path = decoded.drives.find((d) => d.physicalUUID === drive.physicalUUID)?.devicePath;
      if (!path) return true;
      paths.add(path);
    }
    const wanted = new Set(alloc.virtualDrives.map((d) => d.virtualUUID));
    // A failed read is asked again (a tool's passing failure): an answer counted as "left" keeps
    // the GiB taken until the node's devices are read again.
    for (let attempt = 1; ; attempt++) {
      try {
        const listed = await run(target, listDrivesCall());
        return [...paths].some((path) => driveAt(listed, path).virtualDrives.some((v) => wanted.has(v.virtualUUID)));
      } catch (err) {
        if (attempt < READ_ATTEMPTS) continue;
        deps.logger.warn(
          { node: name, err, attempts: attempt },
          'could not ask the devices whether a released container left drives: counted as left',
        );
        return true;
      }
    }
  };
}
