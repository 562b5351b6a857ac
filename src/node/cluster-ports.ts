// The cluster-ports mutex's decision, as a pure function over one read: a cluster's port range
// (its spec.ports override, checked against every other cluster's range, or the first free gap
// from 35000) and its singleton ports (LB, LB admin, S3), which avoid every port any container
// holds on any node: they are cluster-wide, so they must be free on every node a container of
// the cluster may run on (the hybrid port allocation design, "global range allocation").
import {
  allocateClusterPortRange,
  allocateSingletonPorts,
  CLUSTER_PORT_RANGE_SIZE,
  containerPortBlocks,
  overlappingRange,
  rangeText,
  type PortBlock,
  type PortRange,
} from '../allocation/index.js';
import type { ClusterPortsStatus, WekaCluster } from '../api/index.js';
import type { AllocationLedger } from './allocation-ledger.js';

export interface ClusterPortsInput {
  cluster: WekaCluster;
  /** Every WekaCluster, in every namespace (the asking one included or not). */
  clusters: readonly WekaCluster[];
  /** Every port any container holds, on any node, as the nodes' ledgers record them. */
  containerPorts: readonly PortBlock[];
}

export type ClusterPortsDecision =
  | { ok: true; ports: Required<ClusterPortsStatus>; write: boolean }
  | { ok: false; error: { type: string; message: string }; waitForCapacity: boolean };

const nameOf = (c: WekaCluster): string => `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;

/** The range a cluster's status records, if it records one. */
export function statusRange(c: WekaCluster): PortRange | undefined {
  const p = c.status?.ports;
  return p?.basePort !== undefined && p.portRange !== undefined
    ? { basePort: p.basePort, size: p.portRange }
    : undefined;
}

/** Every cluster's allocated range. */
export function clusterRangesOf(clusters: readonly WekaCluster[]): PortRange[] {
  return clusters.flatMap((c) => statusRange(c) ?? []);
}

export function decideClusterPorts({ cluster, clusters, containerPorts }: ClusterPortsInput): ClusterPortsDecision {
  const current = cluster.status?.ports;
  const others = clusters
    .filter((c) => c.metadata.uid !== cluster.metadata.uid)
    .flatMap((c) => {
      const range = statusRange(c);
      return range ? [{ name: nameOf(c), range }] : [];
    });
  let range = statusRange(cluster);
  if (!range) {
    const override = cluster.spec.ports;
    if (override?.basePort !== undefined) {
      range = { basePort: override.basePort, size: override.portRange ?? CLUSTER_PORT_RANGE_SIZE };
      const other = overlappingRange(range, others);
      if (other) {
        const message = `spec.ports asks for ports ${rangeText(range)}, which overlap ports ${rangeText(other.range)} of WekaCluster ${other.name}; choose a basePort outside every other cluster's range, or leave it unset`;
        return { ok: false, error: { type: 'PortRangeTaken', message }, waitForCapacity: true };
      }
    } else {
      const found = allocateClusterPortRange(
        others.map((o) => o.range),
        override?.portRange ?? CLUSTER_PORT_RANGE_SIZE,
      );
      if (!found.ok) return { ok: false, error: { ...found.error }, waitForCapacity: true };
      range = found.range;
    }
  }
  const singles = allocateSingletonPorts(range, containerPorts, current ?? {});
  if (!singles.ok) return { ok: false, error: { ...singles.error }, waitForCapacity: false };
  const ports = { basePort: range.basePort, portRange: range.size, ...singles.ports, range: rangeText(range) };
  const write = (Object.keys(ports) as (keyof typeof ports)[]).some((k) => current?.[k] !== ports[k]);
  return { ok: true, ports, write };
}

/** The ports a node's ledger gives its containers. */
export function ledgerPortBlocks(ledger: AllocationLedger): PortBlock[] {
  return Object.values(ledger.containers).flatMap(({ allocation: a }) =>
    a.wekaPort !== undefined && a.agentPort !== undefined
      ? containerPortBlocks({ wekaPort: a.wekaPort, agentPort: a.agentPort })
      : [],
  );
}
