// Ports outside every cluster: a standalone drive container's, and the check that keeps one
// cluster's range out of another's.
import type { PortsExhaustedError } from './errors.js';
import { lowestFreeStart, MAX_PORT, type PortBlock } from './port-blocks.js';
import { WEKA_PORT_BLOCK_SIZE, type ContainerPorts, type PortRange } from './ports.js';

/**
 * Where standalone containers' ports start: Weka's own default base port, so the first one on a
 * node gets what a Weka container set up by hand would (a block at 14000, its agent at 14100).
 * Cluster ranges start at 35000, so the two only meet when a basePort override puts a range lower.
 */
export const STANDALONE_PORTS_START = 14000;

const rangeBlock = (r: PortRange): PortBlock => ({ port: r.basePort, count: r.size });

/**
 * A standalone container's weka port block and agent port: the lowest free ones from
 * STANDALONE_PORTS_START that overlap neither a port taken on the node (`nodePorts`, any
 * container's) nor any cluster's range (`clusterRanges`), so that no cluster ever hands out a
 * port a standalone container holds, nor its singletons collide with one.
 */
export function allocateStandalonePorts(
  nodePorts: readonly PortBlock[],
  clusterRanges: readonly PortRange[],
): { readonly ok: true; readonly ports: ContainerPorts } | { readonly ok: false; readonly error: PortsExhaustedError } {
  const taken = [...nodePorts, ...clusterRanges.map(rangeBlock)];
  const wekaPort = lowestFreeStart(taken, STANDALONE_PORTS_START, MAX_PORT, WEKA_PORT_BLOCK_SIZE);
  if (wekaPort === undefined) return { ok: false, error: exhausted('weka-port', WEKA_PORT_BLOCK_SIZE) };
  taken.push({ port: wekaPort, count: WEKA_PORT_BLOCK_SIZE });
  const agentPort = lowestFreeStart(taken, STANDALONE_PORTS_START, MAX_PORT, 1);
  if (agentPort === undefined) return { ok: false, error: exhausted('agent-port', 1) };
  return { ok: true, ports: { wekaPort, agentPort } };
}

function exhausted(purpose: 'weka-port' | 'agent-port', size: number): PortsExhaustedError {
  const what = size === 1 ? 'agent port' : `block of ${size} ports`;
  return {
    type: 'PortsExhausted',
    message: `no free ${what} for a standalone container in ${STANDALONE_PORTS_START}-${MAX_PORT}: the node's containers and the clusters' ranges take them all`,
    purpose,
    fromPort: STANDALONE_PORTS_START,
    toPort: MAX_PORT,
    size,
  };
}

/** The first of `others` whose range overlaps `range`, if any. */
export function overlappingRange<T extends { readonly range: PortRange }>(
  range: PortRange,
  others: readonly T[],
): T | undefined {
  return others.find(
    (o) => range.basePort < o.range.basePort + o.range.size && o.range.basePort < range.basePort + range.size,
  );
}

/** "35000-35499". */
export const rangeText = (r: PortRange): string => `${r.basePort}-${r.basePort + r.size - 1}`;
