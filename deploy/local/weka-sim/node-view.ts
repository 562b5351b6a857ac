// What a command handler sees of its node: the device headers in memory, and the lookups every
// tool shares.
import { isDevicePath, isUUID } from '../../../src/weka/validate.js';
import type { DeviceHeader } from './node-records.js';
import type { OvercommitMode } from './node-records.js';
import { SimRefusal, UsageError } from './outcome.js';

export interface NodeView {
  readonly nodeName: string;
  readonly devices: Map<string, DeviceHeader>;
  /** What `virtual add` does beyond a device's free capacity (overcommit.ts); absent: refuse. */
  readonly overcommit?: OvercommitMode;
  /** Paths a pod sees some of the node's devices at (its block volumes), to their paths on the node. */
  readonly aliases?: ReadonlyMap<string, string>;
  /** Whether the device failed (`weka-sim fail-drive`): a write to it is an I/O error. Absent: none has. */
  readonly failed?: (device: DeviceHeader) => boolean;
}

export function findDevice(node: NodeView, path: string): DeviceHeader {
  if (!isDevicePath(path)) throw new UsageError(`invalid device path ${JSON.stringify(path)}`);
  // A device reached through an alias reports its path on the node, as lsblk on the node shows it.
  const device = node.devices.get(node.aliases?.get(path) ?? path);
  if (!device) throw new SimRefusal(`${path}: no such device on node ${node.nodeName}`);
  return device;
}

/** UUIDs are stored lower-case; the tool accepts either case. */
export function uuidOption(value: string, option: string): string {
  if (!isUUID(value)) throw new UsageError(`${option} must be a UUID, got ${JSON.stringify(value)}`);
  return value.toLowerCase();
}
