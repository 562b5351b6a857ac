// The ports of the simulated Weka containers. A Weka container listens on a block of
// WEKA_PORT_BLOCK_SIZE ports from its base port, and its agent on one more port, all on its host:
// two containers on one host whose ports overlap cannot both run, so the second is refused. A
// container whose pod is gone (processes.ts) runs nowhere and holds none.
import type { ContainerRecord } from './cluster-state.js';

/** Ports a Weka container takes from its base port (Weka's default; some versions can use 60). */
const WEKA_PORT_BLOCK_SIZE = 100;

export interface ContainerPortArgs {
  basePort: number;
  agentPort: number;
}

const blockText = (base: number): string => `${base}-${base + WEKA_PORT_BLOCK_SIZE - 1}`;
const inBlock = (port: number, base: number): boolean => port >= base && port < base + WEKA_PORT_BLOCK_SIZE;
const blocksOverlap = (a: number, b: number): boolean => Math.abs(a - b) < WEKA_PORT_BLOCK_SIZE;

/**
 * Why `ports` cannot be used by a new container on `hostname`, or undefined when they can: its agent
 * port inside its own block, or any overlap with the ports of a container listed on the same host
 * (of any cluster, active or not: an inactive container still runs until it is removed), unless
 * its process is gone with its pod.
 */
export function portClash(
  containers: readonly ContainerRecord[],
  hostname: string,
  ports: ContainerPortArgs,
): string | undefined {
  const { basePort, agentPort } = ports;
  if (inBlock(agentPort, basePort)) return `agent port ${agentPort} is inside its own ports ${blockText(basePort)}`;
  for (const other of containers) {
    if (other.hostname !== hostname || other.basePort === undefined || other.agentPort === undefined) continue;
    if (other.processGone) continue;
    const who = `container ${other.name} of cluster ${other.clusterGUID} (ID ${other.containerId}) uses ports ${blockText(other.basePort)} and agent port ${other.agentPort} there`;
    if (blocksOverlap(basePort, other.basePort) || inBlock(other.agentPort, basePort))
      return `ports ${blockText(basePort)} overlap: ${who}`;
    if (agentPort === other.agentPort || inBlock(agentPort, other.basePort))
      return `agent port ${agentPort} is taken: ${who}`;
  }
  return undefined;
}
