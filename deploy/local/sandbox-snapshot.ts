// What the sandbox's live view shows, read from the apiserver: the WekaClusters, their drive
// containers with what each was given, the sign-drives operations' phases and the nodes' signed drives.
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import {
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import type { WekaCluster, WekaContainer, WekaManualOperation } from '../../src/api/index.js';
import { SANDBOX_OPERATION, SANDBOX_WHOLE_OPERATION } from './sandbox-manifests.js';
import { memberTemplate } from '../../src/lifecycle/cluster-layout.js';
import { templateCapacity, type SandboxSnapshot } from './sandbox-view.js';
import { blockedDrivesOf, blockedSharedUUIDs } from '../../src/node/blocked-drives.js';

export async function readSandboxSnapshot(
  custom: CustomObjectsApi,
  core: CoreV1Api,
  elapsedMs: number,
): Promise<SandboxSnapshot> {
  const list = async <T>(plural: string) =>
    ((await custom.listClusterCustomObject({ group: 'weka.weka.io', version: 'v1alpha1', plural })) as { items: T[] })
      .items;
  const [clusters, containers, operations, nodes] = await Promise.all([
    list<WekaCluster>('wekaclusters'),
    list<WekaContainer>('wekacontainers'),
    list<WekaManualOperation>('wekamanualoperations'),
    core.listNode({ labelSelector: 'weka.weka.io/sandbox=true' }),
  ]);
  const phaseOf = (name: string) => operations.find((o) => o.metadata.name === name)?.status?.phase ?? 'Pending';
  return {
    stage: `sign-drives shared ${phaseOf(SANDBOX_OPERATION.metadata.name)}, exclusive ${phaseOf(SANDBOX_WHOLE_OPERATION.metadata.name)}`,
    elapsedMs,
    clusters: clusters.map((c) => ({
      namespace: c.metadata.namespace!,
      name: c.metadata.name!,
      phase: c.status?.phase ?? 'Pending',
      guid: c.status?.clusterGUID,
      driveContainers: c.spec.dynamicTemplate?.driveContainers,
      capacity: templateCapacity(memberTemplate(c.spec.dynamicTemplate, c.status?.driveSharing)),
    })),
    containers: containers
      .filter((c) => c.spec.mode === 'drive')
      .map((c) => ({
        namespace: c.metadata.namespace!,
        name: c.metadata.name!,
        node: c.spec.nodeName ?? '',
        phase: c.status?.phase ?? 'Pending',
        cluster: c.spec.cluster,
        virtualDrives: (c.status?.allocations?.virtualDrives ?? []).map((v) => ({
          capacityGiB: v.capacityGiB,
          type: v.type ?? '',
          physicalUUID: v.physicalUUID,
        })),
        wholeDrives: c.status?.allocations?.drives ?? [],
      })),
    nodes: nodes.items.map((n) => {
      const decoded = decodeSharedDrivesAnnotation(n.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
      const whole = decodeSerialsAnnotation(
        EXCLUSIVE_DRIVES_ANNOTATION,
        n.metadata?.annotations?.[EXCLUSIVE_DRIVES_ANNOTATION],
      );
      const blocked = blockedDrivesOf(n.metadata?.annotations ?? {});
      const drives = decoded.ok ? [...decoded.drives] : [];
      return {
        name: n.metadata!.name!,
        drives,
        wholeDrives: whole.ok ? whole.serials : [],
        blocked: blocked.ok ? [...blockedSharedUUIDs(drives, blocked.blocked)] : [],
      };
    }),
  };
}
