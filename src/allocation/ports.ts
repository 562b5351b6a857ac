import {
  type InvalidAllocationRequestError,
  invalidRequest,
  type PortPurpose,
  type PortsExhaustedError,
} from './errors.js';
import { lowestFreeStart, MAX_PORT, type PortBlock } from './port-blocks.js';
import { MAX_CLUSTER_PORT_RANGE } from './constants.js';

// The hybrid port allocation design: each cluster owns a range of ports. Inside it, [base, base + 300) holds the containers'
// weka port blocks and [base + 300, base + size) single ports: the cluster's singletons (LB, LB
// admin, S3) and every container's agent port, which is why they must avoid each other.

export const CLUSTER_PORT_RANGE_START = 35000;
export const CLUSTER_PORT_RANGE_SIZE = 500;
export const SINGLE_PORTS_OFFSET = 300;
export const WEKA_PORT_BLOCK_SIZE = 100;

export interface PortRange {
  readonly basePort: number;
  readonly size: number;
}

export interface SingletonPorts {
  readonly lbPort: number;
  readonly lbAdminPort: number;
  readonly s3Port: number;
}

export type PartialSingletonPorts = { readonly [K in keyof SingletonPorts]?: number | undefined };

export interface ContainerPorts {
  /** First of a block of WEKA_PORT_BLOCK_SIZE ports. */
  readonly wekaPort: number;
  readonly agentPort: number;
}

type PortError = PortsExhaustedError | InvalidAllocationRequestError;

function exhausted(
  purpose: PortPurpose,
  fromPort: number,
  toPort: number,
  size: number,
  what: string,
): PortsExhaustedError {
  return {
    type: 'PortsExhausted',
    message: `no free ${what}: every ${size === 1 ? 'port' : `block of ${size} ports`} in ${fromPort}-${toPort} is taken`,
    purpose,
    fromPort,
    toPort,
    size,
  };
}

/** The blocks a container's ports occupy, to feed back into the allocators. */
export function containerPortBlocks(ports: ContainerPorts): PortBlock[] {
  return [
    { port: ports.wekaPort, count: WEKA_PORT_BLOCK_SIZE },
    { port: ports.agentPort, count: 1 },
  ];
}

/** A cluster's range: the first free gap of `size` ports from 35000, never past 65535. */
export function allocateClusterPortRange(
  existing: readonly PortRange[],
  size: number = CLUSTER_PORT_RANGE_SIZE,
): { readonly ok: true; readonly range: PortRange } | { readonly ok: false; readonly error: PortError } {
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_CLUSTER_PORT_RANGE)
    return {
      ok: false,
      error: invalidRequest(
        'size',
        `a port range size must be a whole number from 1 to ${MAX_CLUSTER_PORT_RANGE}, got ${size}`,
      ),
    };
  const taken = existing.map((range) => ({ port: range.basePort, count: range.size }));
  const basePort = lowestFreeStart(taken, CLUSTER_PORT_RANGE_START, MAX_PORT, size);
  if (basePort === undefined)
    return {
      ok: false,
      error: exhausted('cluster-range', CLUSTER_PORT_RANGE_START, MAX_PORT, size, 'cluster port range'),
    };
  return { ok: true, range: { basePort, size } };
}

function validateRange(range: PortRange): InvalidAllocationRequestError | undefined {
  const { basePort, size } = range;
  if (
    !Number.isSafeInteger(basePort) ||
    basePort < 1 ||
    !Number.isSafeInteger(size) ||
    size <= SINGLE_PORTS_OFFSET ||
    size > MAX_CLUSTER_PORT_RANGE ||
    basePort + size - 1 > MAX_PORT
  ) {
    return invalidRequest(
      'range',
      `port range ${basePort}+${size} is not usable: it needs a whole base port above 0, more than ${SINGLE_PORTS_OFFSET} and at most ${MAX_CLUSTER_PORT_RANGE} ports, and to end by ${MAX_PORT}`,
    );
  }
  return undefined;
}

const SINGLETON_NAMES: readonly (keyof SingletonPorts)[] = ['lbPort', 'lbAdminPort', 's3Port'];

/**
 * The cluster's LB, LB admin and S3 ports, one each from base + 300. Ports the cluster already has
 * are kept; new ones avoid them, each other, and `containerPorts`: every per-container port of the
 * cluster on every node.
 */
export function allocateSingletonPorts(
  range: PortRange,
  containerPorts: readonly PortBlock[],
  current: PartialSingletonPorts = {},
): { readonly ok: true; readonly ports: SingletonPorts } | { readonly ok: false; readonly error: PortError } {
  const invalid = validateRange(range);
  if (invalid !== undefined) return { ok: false, error: invalid };
  const fromPort = range.basePort + SINGLE_PORTS_OFFSET;
  const toPort = range.basePort + range.size - 1;
  const taken: PortBlock[] = [...containerPorts];
  for (const name of SINGLETON_NAMES) {
    const port = current[name];
    if (port !== undefined) taken.push({ port, count: 1 });
  }
  const chosen: Partial<Record<keyof SingletonPorts, number>> = {};
  for (const name of SINGLETON_NAMES) {
    const port = current[name] ?? lowestFreeStart(taken, fromPort, toPort, 1);
    if (port === undefined)
      return { ok: false, error: exhausted('singleton', fromPort, toPort, 1, `port for ${name}`) };
    if (current[name] === undefined) taken.push({ port, count: 1 });
    chosen[name] = port;
  }
  const { lbPort, lbAdminPort, s3Port } = chosen;
  if (lbPort === undefined || lbAdminPort === undefined || s3Port === undefined)
    throw new Error('every singleton port was chosen');
  return { ok: true, ports: { lbPort, lbAdminPort, s3Port } };
}

/**
 * A container's weka port block (from base + 0) and agent port (from base + 300), avoiding every
 * port allocated on the node (`nodePorts`, any cluster) and the cluster's singletons.
 */
export function allocateContainerPorts(
  range: PortRange,
  nodePorts: readonly PortBlock[],
  singletons: PartialSingletonPorts = {},
): { readonly ok: true; readonly ports: ContainerPorts } | { readonly ok: false; readonly error: PortError } {
  const invalid = validateRange(range);
  if (invalid !== undefined) return { ok: false, error: invalid };
  const taken: PortBlock[] = [...nodePorts];
  for (const name of SINGLETON_NAMES) {
    const port = singletons[name];
    if (port !== undefined) taken.push({ port, count: 1 });
  }
  const wekaTo = range.basePort + SINGLE_PORTS_OFFSET - 1;
  const wekaPort = lowestFreeStart(taken, range.basePort, wekaTo, WEKA_PORT_BLOCK_SIZE);
  if (wekaPort === undefined)
    return {
      ok: false,
      error: exhausted('weka-port', range.basePort, wekaTo, WEKA_PORT_BLOCK_SIZE, 'weka port block'),
    };
  const agentFrom = range.basePort + SINGLE_PORTS_OFFSET;
  const agentTo = range.basePort + range.size - 1;
  const agentPort = lowestFreeStart(taken, agentFrom, agentTo, 1);
  if (agentPort === undefined)
    return { ok: false, error: exhausted('agent-port', agentFrom, agentTo, 1, 'agent port') };
  return { ok: true, ports: { wekaPort, agentPort } };
}
