// How a WekaCluster lays out its drive containers: `driveContainers` of them, spread round robin
// over the nodes its selector matches (sorted by name), each carrying the template's capacity
// fields so that `kubectl get wekacontainers` shows what each one asks for.
import type { WekaClusterSpec, WekaContainerSpec } from '../api/index.js';

export function clusterContainerName(cluster: string, index: number): string {
  return `${cluster}-drive-${index}`;
}

export function clusterContainerSpec(spec: WekaClusterSpec, cluster: string, node: string): WekaContainerSpec {
  const t = spec.dynamicTemplate ?? {};
  return {
    mode: 'drive',
    nodeName: node,
    cluster,
    image: spec.image,
    ...(spec.imagePullSecret !== undefined ? { imagePullSecret: spec.imagePullSecret } : {}),
    ...(t.driveCores !== undefined ? { driveCores: t.driveCores } : {}),
    ...(t.numDrives !== undefined ? { numDrives: t.numDrives } : {}),
    ...(t.driveCapacity !== undefined ? { driveCapacity: t.driveCapacity } : {}),
    ...(t.containerCapacity !== undefined ? { containerCapacity: t.containerCapacity } : {}),
    ...(t.driveTypesRatio !== undefined ? { driveTypesRatio: t.driveTypesRatio } : {}),
  } as WekaContainerSpec;
}
