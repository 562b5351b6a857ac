// The drive-sharing invariants, checked from outside the operator: from the apiserver (every
// WekaContainer's status.allocations and addedVirtualDrives, the proxies, the pods) and from the
// Weka simulator (every device header, the Weka cluster's drives, every node's commands.log), and
// every node's allocation ledger, which must agree with both.
// `observe` gathers; `steadyStateViolations` and `allDeletedViolations` are pure and return
// what is wrong, one line each, so a test asserts `toEqual([])` and a failure reads as a list.
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import {
  ALLOCATIONS_ANNOTATION,
  decodeLedger,
  sameAllocation,
  type AllocationLedger,
} from '../../src/node/allocation-ledger.js';
import { proxyName } from '../../src/api/names.js';

/** A Weka container of a cluster, as the simulator's state holds it. */
type WekaContainerInfo = { containerId: number; name: string; hostname: string; clusterGUID: string };
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { parseDriveList, driveAt, parseSignDriveList, DRIVE_POOLS, type DriveInfo } from '../../src/weka/index.js';
import { readSimulatedClusters, SIMULATED_BACKEND_PREFIX } from '../../deploy/local/shared-drives.js';
import { mapLimit } from './async.js';
import { listContainers, listWekaClusters } from './containers.js';
import { simRetryingFaultsAt, simulatorLogAt, type SimLogEntry } from './sim-access.js';

/** What one chaos test owns: its nodes (and their device paths), Weka clusters and namespaces. */
export interface InvariantScope {
  nodes: readonly string[];
  devices: readonly string[];
  clusterGUIDs: readonly string[];
  /**
   * The Weka clusters the test's WekaClusters formed: checked like clusterGUIDs while they live,
   * and none may be left once everything is deleted (the last member destroys its cluster).
   */
  formedClusterGUIDs?: readonly string[];
  /** The namespaces holding the test's drive containers. */
  namespaces: readonly string[];
  /** The operator's namespace, where it keeps the per-node ssdproxy containers and pods. */
  operatorNamespace: string;
}

/** Where to look: the apiserver, and the root of the fake nodes' Weka simulator state. */
export interface ObservedWorld {
  kubeConfig: KubeConfig;
  simulatorRoot: string;
}

/** A drive of a cluster member, as `weka cluster drive --container ID` lists it, with what the checker knows of it. */
export interface ClusterDrive {
  driveUUID: string;
  /** The virtual UUID it was added by; null for a whole drive. */
  virtualUUID: string | null;
  devicePath: string | null;
  containerId: number;
  status: string;
}

export interface ObservedState {
  /** Every WekaContainer in the scope's namespaces. */
  containers: WekaContainer[];
  /** Every WekaContainer in the operator's namespace (the ssdproxies). */
  proxies: WekaContainer[];
  /** Every pod in the scope's namespaces and the operator's, as namespace/name. */
  pods: string[];
  /** Those of them that run (phase Running, not being deleted). */
  runningPods: string[];
  devices: Array<{ node: string; info: DriveInfo }>;
  /** The WekaClusters in the scope's namespaces, and the GUIDs of every Weka cluster the simulator lists. */
  wekaClusters: WekaCluster[];
  listedClusterGUIDs: string[];
  /** scope.formedClusterGUIDs when observed. */
  formedClusterGUIDs: string[];
  /**
   * The members of the scope's Weka clusters, and every drive they hold; but those the operator
   * recorded on a node as left behind (a WekaContainerLeftBehind Event: torn down without its pod
   * and with no other member's pod to reach the cluster), which are in `leftBehind`.
   */
  clusterMembers: WekaContainerInfo[];
  clusterDrives: ClusterDrive[];
  /** The Weka containers and virtual drives the operator recorded as left in their clusters. */
  leftBehind: { containers: WekaContainerInfo[]; virtualUUIDs: Set<string> };
  logs: Array<{ node: string; entries: SimLogEntry[] }>;
  /** Each node's allocation ledger (its annotation), or why it cannot be read. */
  ledgers: Array<{ node: string; ledger: AllocationLedger } | { node: string; unreadable: string }>;
}

export async function observe(scope: InvariantScope, world: ObservedWorld): Promise<ObservedState> {
  const kc = world.kubeConfig;
  const simRetryingFaults = (node: string, ...argv: string[]) =>
    simRetryingFaultsAt(world.simulatorRoot, node, ...argv);
  const core = kc.makeApiClient(CoreV1Api);
  const containers = (await Promise.all(scope.namespaces.map((namespace) => listContainers(kc, namespace)))).flat();
  const proxies = await listContainers(kc, scope.operatorNamespace);
  const podObjects = (
    await Promise.all(
      [...scope.namespaces, scope.operatorNamespace].map(
        async (namespace) => (await core.listNamespacedPod({ namespace })).items,
      ),
    )
  ).flat();
  const podName = (p: V1Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const pods = podObjects.map(podName);
  const runningPods = podObjects
    .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
    .map(podName);

  const devices = await mapLimit(
    scope.nodes.flatMap((node) => scope.devices.map((path) => ({ node, path }))),
    4,
    async ({ node, path }) => ({
      node,
      info: driveAt(parseSignDriveList(await simRetryingFaults(node, 'weka-sign-drive', 'list', '-j')), path),
    }),
  );
  // Cluster state is shared by all nodes: any node can answer for it.
  const anyNode = scope.nodes[0]!;
  const wekaClusters = (await Promise.all(scope.namespaces.map((namespace) => listWekaClusters(kc, namespace)))).flat();
  // Read from the simulator's state: a Weka CLI answers only for the cluster of the pod it runs in.
  const simulated = await readSimulatedClusters(world.simulatorRoot);
  const listedClusterGUIDs = simulated.clusters.map((c) => c.guid);
  const guids = new Set([
    ...scope.clusterGUIDs,
    ...(scope.formedClusterGUIDs ?? []),
    ...wekaClusters.flatMap((c) => (c.status?.clusterGUID ? [c.status.clusterGUID] : [])),
  ]);
  // The operator's containers: not the backend a simulated cluster was made of.
  const listedMembers: WekaContainerInfo[] = simulated.containers.filter(
    (m) =>
      guids.has(m.clusterGUID) &&
      listedClusterGUIDs.includes(m.clusterGUID) &&
      !m.name.startsWith(SIMULATED_BACKEND_PREFIX),
  );
  // What the operator said it left behind is what it promised: recorded, not removed.
  const recorded = (
    await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=WekaContainerLeftBehind' })
  ).items
    .filter((e) => scope.nodes.includes(e.involvedObject.name ?? ''))
    .map((e) => e.message ?? '');
  const isLeft = (m: WekaContainerInfo) =>
    recorded.some(
      (text) =>
        text.includes(`container ${m.name} and its drives`) ||
        text.includes(`container ${m.containerId} and its drives`),
    );
  const leftMembers = listedMembers.filter(isLeft);
  const clusterMembers = listedMembers.filter((m) => !isLeft(m));
  const leftUUIDs = new Set(recorded.flatMap((text) => text.match(UUID) ?? []));
  // Weka names a virtual drive by its virtual UUID: any UUID signed on a device or allocated to a
  // container is one; the rest are whole drives.
  const virtualUUIDs = new Set(
    [
      ...devices.flatMap((d) => d.info.virtualDrives.map((v) => v.virtualUUID)),
      ...containers.flatMap((c) => claimedBy(c).map((v) => v.virtualUUID)),
    ].map((u) => u.toLowerCase()),
  );
  const clusterDrives = (
    await mapLimit(clusterMembers, 4, async (m) =>
      parseDriveList(
        await simRetryingFaults(anyNode, 'weka', 'cluster', 'drive', '--container', String(m.containerId), '--json'),
      ).map((d): ClusterDrive => ({
        driveUUID: d.uuid,
        virtualUUID: virtualUUIDs.has(d.uuid.toLowerCase()) ? d.uuid : null,
        devicePath: d.devicePath,
        containerId: m.containerId,
        status: d.status,
      })),
    )
  ).flat();
  const logs = await Promise.all(
    scope.nodes.map(async (node) => ({ node, entries: await simulatorLogAt(world.simulatorRoot, node) })),
  );
  const ledgers = await Promise.all(
    scope.nodes.map(async (node) => {
      const text = (await core.readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION];
      const decoded = decodeLedger(text);
      return decoded.ok ? { node, ledger: decoded.ledger } : { node, unreadable: decoded.message };
    }),
  );
  return {
    ledgers,
    containers,
    runningPods,
    proxies,
    pods,
    devices,
    wekaClusters,
    listedClusterGUIDs,
    formedClusterGUIDs: [...(scope.formedClusterGUIDs ?? [])],
    clusterMembers,
    clusterDrives,
    leftBehind: { containers: leftMembers, virtualUUIDs: leftUUIDs },
    logs,
  };
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

type Change = { kind: string; [k: string]: unknown };

function changesOf(state: ObservedState, kind: string): Array<Change & { node: string }> {
  return state.logs.flatMap(({ node, entries }) =>
    entries.flatMap((e) => e.changes.filter((c) => c.kind === kind).map((c) => ({ ...c, node }))),
  );
}

const nameOf = (c: WekaContainer) => `${c.metadata.namespace}/${c.metadata.name}`;

/** The Weka cluster a container's drives belong to: its own status's, or its WekaCluster's. */
function clusterGUIDOf(state: ObservedState, c: WekaContainer): string | undefined {
  if (!c.spec.cluster) return c.status?.clusterGUID;
  const owner = state.wekaClusters.find(
    (w) => w.metadata.namespace === c.metadata.namespace && w.metadata.name === c.spec.cluster,
  );
  return owner?.status?.clusterGUID ?? c.status?.clusterGUID;
}

/**
 * Nothing in the simulator's logs happened twice: no device signed for proxy twice, no container
 * joined a cluster twice without leaving it in between (a name may join again once its earlier
 * container was removed), no virtual drive signed, added, removed from the cluster or unsigned
 * twice. (A virtual UUID could legitimately be signed again after its removal; nothing in these
 * tests does that, so at most once is the rule here.)
 */
function logViolations(state: ObservedState): string[] {
  const rules: Array<[kind: string, subject: (c: Change & { node: string }) => string]> = [
    ['sign-proxy', (c) => `${c.node} ${String(c['device'])}`],
    ['container-add', (c) => `${String(c['clusterGUID'])} ${String(c['name'])}`],
    ['virtual-add', (c) => String(c['virtualUUID'])],
    // A whole drive may be added again (by the next container given it): once per Weka drive UUID.
    ['drive-add', (c) => String(c['virtualUUID'] ?? `${c.node} ${String(c['devicePath'])} ${String(c['driveUUID'])}`)],
    [
      'drive-remove',
      (c) => String(c['virtualUUID'] ?? `${c.node} ${String(c['devicePath'])} ${String(c['driveUUID'])}`),
    ],
    ['virtual-remove', (c) => String(c['virtualUUID'])],
  ];
  const out: string[] = [];
  const removed = countBy(changesOf(state, 'container-remove'), rules[1]![1]);
  for (const [kind, subject] of rules) {
    for (const [s, n] of countBy(changesOf(state, kind), subject)) {
      const again = kind === 'container-add' ? n - (removed.get(s) ?? 0) : n;
      if (again > 1) out.push(`log: ${kind} of ${s} happened ${n} times`);
    }
  }
  return [...out, ...poolViolations(state)];
}

/** Every virtual drive joins the pool of its device's type (iu4k TLC, iubig QLC); a whole drive joins none. */
function poolViolations(state: ObservedState): string[] {
  const typeOf = new Map(state.devices.map(({ node, info }) => [`${node} ${info.devicePath}`, info.type]));
  const signedOn = new Map(
    changesOf(state, 'virtual-add').map((c) => [String(c['virtualUUID']), `${c.node} ${String(c['device'])}`]),
  );
  const out: string[] = [];
  for (const c of changesOf(state, 'drive-add')) {
    const pool = c['pool'] ?? null;
    if (c['virtualUUID'] === undefined) {
      if (pool !== null)
        out.push(`log: whole drive ${String(c['devicePath'])} on ${c.node} added to pool ${String(pool)}`);
      continue;
    }
    const type = typeOf.get(signedOn.get(String(c['virtualUUID'])) ?? '');
    const want = type ? [DRIVE_POOLS[type]] : Object.values(DRIVE_POOLS);
    if (!want.includes(pool as string))
      out.push(
        `log: virtual drive ${String(c['virtualUUID'])} added to pool ${String(pool)}, not ${want.join(' or ')}`,
      );
  }
  return out;
}

/**
 * The invariants of a system at rest (no container half-way, e.g. after convergence):
 * - no physical drive is over-committed, neither on the device nor by the statuses' allocations;
 * - every virtual drive a status lists as added is signed on its device (on the container's node,
 *   found by physical UUID) exactly once, with the container's cluster GUID and the allocated
 *   size, and is in the Weka cluster exactly once, as a drive of the container's containerID;
 * - a Ready container has added exactly the virtual drives it was allocated;
 * - nothing is signed or in the cluster that no container holds;
 * - nothing in the simulator's logs happened twice.
 */
/**
 * The virtual drives a container's status claims: those it holds, and those it replaced (block-drives)
 * and has not removed from the device and its cluster yet.
 */
function claimedBy(c: WekaContainer) {
  const a = c.status?.allocations;
  return [...(a?.virtualDrives ?? []), ...(a?.replacedVirtualDrives ?? [])];
}

export function steadyStateViolations(state: ObservedState): string[] {
  const out: string[] = [];
  for (const { node, info } of state.devices) {
    const used = info.virtualDrives.reduce((sum, v) => sum + v.sizeGiB, 0);
    if (used > info.capacityGiB)
      out.push(`device ${node} ${info.devicePath}: ${used} GiB signed on ${info.capacityGiB} GiB`);
  }

  const allocated = state.containers.flatMap((c) => claimedBy(c).map((vd) => ({ container: c, vd })));
  for (const [uuid, n] of countBy(allocated, (a) => a.vd.virtualUUID))
    if (n > 1) out.push(`virtual drive ${uuid} is allocated to ${n} containers`);
  const deviceOf = (node: string, physicalUUID: string) =>
    state.devices.find((d) => d.node === node && d.info.physicalUUID === physicalUUID)?.info;
  const claimedPerDevice = new Map<string, number>();
  for (const { container, vd } of allocated) {
    const key = `${container.spec.nodeName} ${vd.physicalUUID}`;
    claimedPerDevice.set(key, (claimedPerDevice.get(key) ?? 0) + vd.capacityGiB);
  }
  for (const [key, gib] of claimedPerDevice) {
    const [node, physicalUUID] = key.split(' ') as [string, string];
    const device = deviceOf(node, physicalUUID);
    if (!device) out.push(`statuses allocate from physical drive ${physicalUUID}, which node ${node} does not have`);
    else if (gib > device.capacityGiB)
      out.push(`statuses allocate ${gib} GiB of ${node} ${device.devicePath}, which has ${device.capacityGiB} GiB`);
  }

  const signatures = state.devices.flatMap(({ node, info }) =>
    info.virtualDrives.map((v) => ({ node, device: info, v })),
  );
  for (const c of state.containers) {
    const node = c.spec.nodeName ?? '';
    const drives = claimedBy(c);
    const added = c.status?.addedVirtualDrives ?? [];
    for (const uuid of added) {
      const vd = drives.find((d) => d.virtualUUID === uuid);
      if (!vd) {
        out.push(`${nameOf(c)}: added virtual drive ${uuid} is not in its allocations`);
        continue;
      }
      const signed = signatures.filter((s) => s.v.virtualUUID === uuid);
      const onItsDevice = signed.filter((s) => s.node === node && s.device.physicalUUID === vd.physicalUUID);
      if (signed.length !== 1 || onItsDevice.length !== 1) {
        out.push(
          `${nameOf(c)}: virtual drive ${uuid} is signed ${signed.length} times, ${onItsDevice.length} on its device ${vd.physicalUUID} of ${node}`,
        );
      } else {
        const { v } = onItsDevice[0]!;
        const guid = clusterGUIDOf(state, c);
        if (v.ownerClusterGUID !== guid)
          out.push(`${nameOf(c)}: virtual drive ${uuid} is signed for cluster ${v.ownerClusterGUID}, not ${guid}`);
        if (v.sizeGiB !== vd.capacityGiB)
          out.push(`${nameOf(c)}: virtual drive ${uuid} is signed with ${v.sizeGiB} GiB, allocated ${vd.capacityGiB}`);
      }
      const inCluster = state.clusterDrives.filter((d) => d.virtualUUID === uuid);
      if (inCluster.length !== 1)
        out.push(`${nameOf(c)}: virtual drive ${uuid} is in the Weka cluster ${inCluster.length} times`);
      else if (inCluster[0]!.containerId !== c.status?.containerID) {
        out.push(
          `${nameOf(c)}: virtual drive ${uuid} is a drive of Weka container ${inCluster[0]!.containerId}, not ${c.status?.containerID}`,
        );
      }
    }
    if (c.status?.phase === 'Ready') {
      if (!state.runningPods.includes(nameOf(c))) out.push(`${nameOf(c)}: Ready but its pod does not run`);
      const proxy = `/${proxyName(node)}`;
      if (drives.length > 0 && !state.runningPods.some((p) => p.endsWith(proxy)))
        out.push(`${nameOf(c)}: Ready but its node's ssdproxy pod ${proxyName(node)} does not run`);
      const want = drives.map((d) => d.virtualUUID).sort();
      if (want.length === 0) out.push(`${nameOf(c)}: Ready with no virtual drive allocated`);
      if (JSON.stringify([...added].sort()) !== JSON.stringify(want))
        out.push(`${nameOf(c)}: Ready but added [${added.join(', ')}] of allocated [${want.join(', ')}]`);
      if (c.status.containerID === undefined) out.push(`${nameOf(c)}: Ready without a Weka containerID`);
    }
  }

  const holderOf = new Map(allocated.map((a) => [a.vd.virtualUUID, a]));
  for (const s of signatures) {
    const holder = holderOf.get(s.v.virtualUUID);
    if (!holder || holder.container.spec.nodeName !== s.node || holder.vd.physicalUUID !== s.device.physicalUUID) {
      out.push(
        `virtual drive ${s.v.virtualUUID} is signed on ${s.node} ${s.device.devicePath} but no container there holds it`,
      );
    }
  }
  const addedBy = new Map(
    state.containers.flatMap((c) => (c.status?.addedVirtualDrives ?? []).map((uuid) => [uuid, c] as const)),
  );
  for (const d of state.clusterDrives) {
    // A whole drive is checked by the containers' addedDrives serials.
    if (d.virtualUUID === null) {
      const owner = state.containers.find((c) => (c.status?.addedDrives ?? []).some((a) => a.uuid === d.driveUUID));
      if (!owner || owner.status?.containerID !== d.containerId)
        out.push(
          `Weka drive ${d.driveUUID} (whole drive ${d.devicePath ?? ''}, container ${d.containerId}) is in the cluster but no status lists it as added`,
        );
      continue;
    }
    const holder = addedBy.get(d.virtualUUID);
    if (!holder || holder.status?.containerID !== d.containerId)
      out.push(
        `Weka drive ${d.driveUUID} (virtual ${d.virtualUUID}, container ${d.containerId}) is in the cluster but no status lists it as added`,
      );
  }
  return [...out, ...ledgerViolations(state), ...logViolations(state)];
}

/**
 * Every node's ledger agrees with the statuses and the devices: each container that is not being
 * deleted holds in its node's ledger exactly what its status shows; the ledger holds nothing for a
 * container that does not exist, and counts as found only virtual drives a device holds (a
 * release that forgot either would keep its GiB taken for ever).
 */
function ledgerViolations(state: ObservedState): string[] {
  const out: string[] = [];
  const byUid = new Map(state.containers.map((c) => [c.metadata.uid ?? '', c]));
  for (const l of state.ledgers) {
    if ('unreadable' in l) {
      out.push(`ledger of ${l.node} cannot be read: ${l.unreadable}`);
      continue;
    }
    for (const [uid, entry] of Object.entries(l.ledger.containers))
      if (!byUid.has(uid)) out.push(`ledger of ${l.node} still holds ${entry.container} (uid ${uid}), which is gone`);
  }
  for (const c of state.containers) {
    const shown = c.status?.allocations;
    if (
      c.metadata.deletionTimestamp ||
      !shown ||
      (shown.virtualDrives?.length ?? 0) + (shown.drives?.length ?? 0) === 0
    )
      continue;
    const l = state.ledgers.find((x) => x.node === c.spec.nodeName);
    if (!l || 'unreadable' in l) continue;
    const held = l.ledger.containers[c.metadata.uid ?? '']?.allocation ?? null;
    if (!sameAllocation(shown, held))
      out.push(
        `${nameOf(c)}: its status shows an allocation that the ledger of ${l.node} ${held ? 'holds otherwise' : 'does not hold'}`,
      );
  }
  return [...out, ...staleFoundViolations(state)];
}

/** Found virtual drives a ledger counts that no device holds: GiB that nothing will give back. */
function staleFoundViolations(state: ObservedState): string[] {
  const signed = new Set(state.devices.flatMap((d) => d.info.virtualDrives.map((v) => v.virtualUUID)));
  return state.ledgers.flatMap((l) =>
    'unreadable' in l
      ? []
      : l.ledger.found
          .filter((f) => !signed.has(f.virtualUUID))
          .map(
            (f) =>
              `ledger of ${l.node} still counts found virtual drive ${f.virtualUUID} (${f.capacityGiB} GiB), which no device holds`,
          ),
  );
}

/**
 * After every drive container was deleted: no WekaContainer left in the test's namespaces (so no
 * finalizer and no allocation), no proxy container or pod, no virtual drive on any device and
 * none in the Weka cluster, no member left in the Weka clusters; every virtual drive signed and
 * added was removed exactly once.
 */
export function allDeletedViolations(state: ObservedState): string[] {
  const out: string[] = [];
  for (const c of state.containers) {
    out.push(
      `${nameOf(c)} is left (finalizers [${(c.metadata.finalizers ?? []).join(', ')}], ${c.status?.allocations?.virtualDrives?.length ?? 0} virtual drives allocated, phase ${c.status?.phase})`,
    );
  }
  for (const c of state.wekaClusters)
    out.push(`WekaCluster ${c.metadata.namespace}/${c.metadata.name} is left (phase ${c.status?.phase})`);
  for (const guid of state.formedClusterGUIDs)
    if (state.listedClusterGUIDs.includes(guid)) out.push(`Weka cluster ${guid} is left: no member destroyed it`);
  for (const p of state.proxies) out.push(`proxy container ${nameOf(p)} is left`);
  for (const p of state.pods) out.push(`pod ${p} is left`);
  for (const { node, info } of state.devices) {
    for (const v of info.virtualDrives)
      out.push(`virtual drive ${v.virtualUUID} is left signed on ${node} ${info.devicePath}`);
  }
  for (const d of state.clusterDrives)
    out.push(`Weka drive ${d.driveUUID} (virtual ${d.virtualUUID}) is left in container ${d.containerId}`);
  // A teardown takes its container out of the Weka cluster too, so its name can join again.
  for (const m of state.clusterMembers)
    out.push(`Weka container ${m.name} (${m.containerId}) is left in cluster ${m.clusterGUID} on ${m.hostname}`);
  const removedOnce = (addKind: string, removeKind: string) => {
    const removed = countBy(changesOf(state, removeKind), (c) => String(c['virtualUUID']));
    for (const c of changesOf(state, addKind)) {
      const uuid = String(c['virtualUUID']);
      if (state.leftBehind.virtualUUIDs.has(uuid)) continue;
      if (removed.get(uuid) !== 1)
        out.push(`log: ${addKind} of ${uuid} was followed by ${removed.get(uuid) ?? 0} ${removeKind}`);
    }
  };
  removedOnce('virtual-add', 'virtual-remove');
  removedOnce('drive-add', 'drive-remove');
  // Nothing is left to hold anything: a ledger that still counts GiB has lost them for good.
  for (const l of state.ledgers)
    if (!('unreadable' in l))
      for (const [uid, entry] of Object.entries(l.ledger.containers))
        out.push(`ledger of ${l.node} still holds ${entry.container} (uid ${uid}), which is gone`);
  out.push(...staleFoundViolations(state));
  return [...out, ...logViolations(state)];
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * For a failure message: who held each virtual drive a violation names (in `earlier`, e.g. the
 * steady state before deleting, and now) and every simulator command that touched it.
 */
export function explain(violations: readonly string[], state: ObservedState, earlier?: ObservedState): string[] {
  const uuids = new Set(violations.flatMap((v) => v.match(UUID) ?? []));
  const out: string[] = [];
  for (const uuid of uuids) {
    const holders = (s: ObservedState | undefined) =>
      (s?.containers ?? [])
        .filter((c) => claimedBy(c).some((d) => d.virtualUUID === uuid))
        .map((c) => `${nameOf(c)} (uid ${c.metadata.uid}, phase ${c.status?.phase})`);
    const commands = state.logs.flatMap(({ node, entries }) =>
      entries
        .filter(
          (e) => e.argv.some((a) => a.toLowerCase() === uuid) || e.changes.some((c) => Object.values(c).includes(uuid)),
        )
        .map((e) => {
          const { time, fault } = e as { time?: string; fault?: string };
          return `    ${time} ${node}: ${e.argv.join(' ')} -> exit ${e.exitCode}${fault ? ` (${fault})` : ''}${e.changes.length > 0 ? ` [${e.changes.map((c) => c.kind).join(', ')}]` : ''}`;
        }),
    );
    if (commands.length === 0 && holders(earlier).length === 0 && holders(state).length === 0) continue;
    out.push(
      `${uuid}: held by [${holders(earlier).join(', ')}] before, [${holders(state).join(', ')}] now; simulator commands:`,
      ...commands,
    );
  }
  return out;
}

/** The steady-state violations, each followed by what explains it, or [] when there is none. */
export async function checkSteadyState(
  scope: InvariantScope,
  world: ObservedWorld,
): Promise<{ violations: string[]; state: ObservedState }> {
  const state = await observe(scope, world);
  const violations = steadyStateViolations(state);
  return { violations: violations.length > 0 ? [...violations, ...explain(violations, state)] : [], state };
}

/** The all-deleted violations, each followed by what explains it (with who held what in `earlier`), or []. */
export async function checkAllDeleted(
  scope: InvariantScope,
  world: ObservedWorld,
  earlier?: ObservedState,
): Promise<{ violations: string[]; state: ObservedState }> {
  const state = await observe(scope, world);
  const violations = allDeletedViolations(state);
  return { violations: violations.length > 0 ? [...violations, ...explain(violations, state, earlier)] : [], state };
}
