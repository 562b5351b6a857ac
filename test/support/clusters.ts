// WekaClusters for integration tests (startWekaCluster in ./operator.ts creates one and starts its
// workflow; createWekaClusterObject in ./containers.ts creates one as a user does): the label
// their nodes carry, the members' usual shape, and a read by name.
import type { WekaCluster } from '../../src/api/index.js';
import { readObject, WEKA_CLUSTERS } from './containers.js';
import { kubeConfig } from './harness.js';

export { WEKA_CLUSTERS };

/** The label the tests' clusters select their nodes by. */
export const POOL_LABEL = 'weka.weka.io/pool';

/** A member of 2200 GiB, 1:1 TLC:QLC, on one core. */
export const SMALL_MEMBER = { driveCores: 1, containerCapacity: 2200, driveTypesRatio: { tlc: 1, qlc: 1 } };

export async function readCluster(namespace: string, name: string): Promise<WekaCluster | null> {
  return readObject<WekaCluster>(kubeConfig(), WEKA_CLUSTERS, { namespace, name });
}
