// Where a drive container's Weka container joins its cluster through: the management IP and Weka
// port of containers already in it. A WekaCluster's member joins through its fellow members that
// have joined (their pods' IPs, their allocated ports); a standalone container through the
// addresses its spec lists (spec.joinIps), as the reference's JOIN_IPS.
import { API_GROUP, API_VERSION, WEKA_CONTAINER_PLURAL, type WekaContainer } from '../src/api/index.js';
import type { ObjectRef } from '../src/api/names.js';
import { OWNER_UID_LABEL } from '../src/manifests/pods.js';
import { parseHostAddress, type WekaHostAddress } from '../src/weka/index.js';
import { orIfMissing } from './kube/errors.js';
import type { WekaApi } from './kube/weka-api.js';

/** Addresses given at most, as the reference gives a random choice of its members' (96). */
const MAX_JOIN_ADDRESSES = 16;

/** The IP of the member's own pod (of its uid) while it runs and has one; undefined otherwise. */
export async function runningPodIP(
  api: WekaApi,
  namespace: string,
  member: { name: string; uid: string },
): Promise<string | undefined> {
  const pod = await orIfMissing(api.core.readNamespacedPod({ namespace, name: member.name }), null);
  const ip = pod?.status?.podIP;
  if (pod?.status?.phase !== 'Running' || pod.metadata?.labels?.[OWNER_UID_LABEL] !== member.uid) return undefined;
  return ip || undefined;
}

export type JoinAddresses = { joinIps: WekaHostAddress[] } | { missing: string };

export async function joinAddressesOf(api: WekaApi, ref: ObjectRef, uid: string): Promise<JoinAddresses> {
  const self = await api.getContainer(ref);
  if (!self || self.metadata.uid !== uid) return { missing: `the WekaContainer of uid ${uid} is gone` };
  if (!self.spec.cluster) {
    const listed = self.spec.joinIps ?? [];
    const joinIps = listed.flatMap((text) => {
      const address = parseHostAddress(text);
      return address ? [address] : [];
    });
    if (joinIps.length === 0)
      return { missing: 'spec.joinIps lists no address of a container of the Weka cluster to join' };
    return { joinIps };
  }
  const members = (await api.custom.listNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: WEKA_CONTAINER_PLURAL,
    namespace: ref.namespace,
    fieldSelector: `spec.cluster=${self.spec.cluster}`,
  })) as { items: WekaContainer[] };
  const joinIps: WekaHostAddress[] = [];
  for (const m of members.items) {
    if (joinIps.length >= MAX_JOIN_ADDRESSES) break;
    const port = m.status?.allocations?.wekaPort;
    if (m.metadata.uid === uid || m.status?.containerID === undefined || port === undefined) continue;
    const ip = await runningPodIP(api, ref.namespace, { name: m.metadata.name!, uid: m.metadata.uid ?? '' });
    if (ip) joinIps.push({ ip, port });
  }
  if (joinIps.length === 0)
    return { missing: `no member of WekaCluster ${self.spec.cluster} is in the Weka cluster with a running pod yet` };
  return { joinIps };
}
