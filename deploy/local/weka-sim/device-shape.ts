// `device`: an admin command (like init-node, not a Weka tool) that shapes a device as a node admin
// would: its model and vendor, its partitions with their filesystems and mounts, a filesystem on
// the whole disk, leftover data, the device-mapper or md devices built on it (its holders). Signing then has to reckon with what is there (sign-physical.ts),
// and lsblk shows it. The command refuses a shape no real disk can have.
import { isDevicePath } from '../../../src/weka/validate.js';
import { optional, parseArgs, positionals, type ParsedArgs } from './args.js';
import { describeShape, mountpointsOf, partitionNumber, partitionPath } from './device-header.js';
import type { DeviceHeader, HolderRecord, PartitionRecord } from './node-records.js';
import { SimRefusal, UsageError, type ToolOutput } from './outcome.js';
import { findDevice, uuidOption, type NodeView } from './node-view.js';

export const DEVICE_USAGE = `usage: weka-sim --state DIR device PATH [--model M] [--vendor V]
    [--partition NAME[:FSTYPE[:MOUNTPOINT]]]... [--clear-partitions] [--fstype F|--no-fstype]
    [--mountpoint M|--no-mountpoint] [--data|--no-data] [--cluster-guid GUID|--no-cluster-guid]
    [--holder NAME:TYPE]... [--clear-holders]`;

/** What a node admin may have done to a device; every field optional (fake-nodes' SimulatedDevice). */
export interface DeviceShapeSpec {
  readonly path: string;
  readonly model?: string;
  readonly vendor?: string;
  readonly partitions?: readonly { name: string; fstype?: string | null; mountpoint?: string | null }[];
  readonly fstype?: string | null;
  readonly mountpoint?: string | null;
  readonly dataPresent?: boolean;
  /** Devices built on the disk, e.g. { name: '/dev/mapper/vg0-pvc--1', type: 'lvm' }. */
  readonly holders?: readonly HolderRecord[];
}

type Shape = Pick<
  DeviceHeader,
  'model' | 'vendor' | 'partitions' | 'fstype' | 'mountpoint' | 'holders' | 'dataPresent'
> & {
  clusterGUID: string | null;
};

const SWAP = '[SWAP]';
/**
 * What lsblk names and types a holder as (util-linux lsblk.c: NAME is /dev/mapper/<dm/name> for a
 * device-mapper device, /dev/<kernel name> otherwise; TYPE is the DM UUID's prefix lower-cased, or
 * "dm" without one, and an md array's md/level).
 */
const DM_HOLDER = /^\/dev\/mapper\/[A-Za-z0-9#+.:=@_-]{1,127}$/;
const DM_TYPES = ['lvm', 'crypt', 'mpath', 'dm'];
const MD_HOLDER = /^\/dev\/md\d{1,3}$/;
const MD_TYPES = ['raid0', 'raid1', 'raid4', 'raid5', 'raid6', 'raid10', 'linear'];
const TEXT = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;
const FSTYPE = /^[A-Za-z0-9_.-]{1,32}$/;

/** The `device` arguments that give a new device this shape; undefined when it has none to give. */
export function deviceShapeArgs(spec: DeviceShapeSpec): string[] | undefined {
  const args = [
    ...(spec.model === undefined ? [] : ['--model', spec.model]),
    ...(spec.vendor === undefined ? [] : ['--vendor', spec.vendor]),
    ...(spec.partitions ?? []).flatMap((p) => {
      const fields = [p.name, p.fstype ?? '', p.mountpoint ?? ''];
      while (fields.length > 1 && fields.at(-1) === '') fields.pop();
      return ['--partition', fields.join(':')];
    }),
    ...(spec.fstype ? ['--fstype', spec.fstype] : []),
    ...(spec.mountpoint ? ['--mountpoint', spec.mountpoint] : []),
    ...(spec.dataPresent ? ['--data'] : []),
    ...(spec.holders ?? []).flatMap((h) => ['--holder', `${h.name}:${h.type}`]),
  ];
  return args.length > 0 ? [spec.path, ...args] : undefined;
}

export function runDeviceCommand(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, {
    values: ['--model', '--vendor', '--partition', '--fstype', '--mountpoint', '--cluster-guid', '--holder'],
    flags: [
      '--clear-partitions',
      '--no-fstype',
      '--no-mountpoint',
      '--data',
      '--no-data',
      '--no-cluster-guid',
      '--clear-holders',
    ],
  });
  const [path] = positionals(parsed, ['PATH']);
  if (parsed.values.size === 0 && parsed.flags.size === 0) throw new UsageError(`nothing to change\n${DEVICE_USAGE}`);
  const device = findDevice(node, path!);
  const shape = newShape(parsed, device);
  checkShape(device, shape, node);
  const current: Shape = { ...pickShape(device), clusterGUID: device.clusterGUID };
  if (JSON.stringify(shape) === JSON.stringify(current))
    return { stdout: `${device.devicePath}: unchanged (${describeShape(device)})\n`, changes: [] };
  Object.assign(device, shape);
  return {
    stdout: `${device.devicePath}: ${describeShape(device)}\n`,
    changes: [{ kind: 'device-shape', device: device.devicePath, ...shape }],
  };
}

function pickShape(d: DeviceHeader): Omit<Shape, 'clusterGUID'> {
  const { model, vendor, partitions, fstype, mountpoint, holders, dataPresent } = d;
  return { model, vendor, partitions, fstype, mountpoint, holders, dataPresent };
}

/** The device's shape with the options applied; the options are checked one by one, the result not yet. */
function newShape(parsed: ParsedArgs, device: DeviceHeader): Shape {
  const text = (option: string, fallback: string) => {
    const value = optional(parsed, option);
    if (value !== undefined && !TEXT.test(value))
      throw new UsageError(`${option} must be 1 to 64 printable ASCII characters, got ${JSON.stringify(value)}`);
    return value ?? fallback;
  };
  const partitions = parsed.flags.has('--clear-partitions') ? [] : [...device.partitions];
  const given = (parsed.values.get('--partition') ?? []).map((spec) => parsePartition(spec, device.devicePath));
  for (const p of given) {
    if (given.filter((q) => q.name === p.name).length > 1) throw new UsageError(`partition ${p.name} given twice`);
    const at = partitions.findIndex((q) => q.name === p.name);
    if (at === -1) partitions.push(p);
    else partitions[at] = p;
  }
  partitions.sort((a, b) => partitionNumber(device.devicePath, a.name)! - partitionNumber(device.devicePath, b.name)!);
  const clusterGUID = either(parsed, '--cluster-guid', '--no-cluster-guid', device.clusterGUID);
  const fstype = either(parsed, '--fstype', '--no-fstype', device.fstype);
  if (fstype !== null && !FSTYPE.test(fstype))
    throw new UsageError(`invalid filesystem type ${JSON.stringify(fstype)}`);
  const mountpoint = either(parsed, '--mountpoint', '--no-mountpoint', device.mountpoint);
  if (mountpoint !== null) checkMountpoint(mountpoint);
  const holders = parsed.flags.has('--clear-holders') ? [] : [...device.holders];
  const givenHolders = (parsed.values.get('--holder') ?? []).map(parseHolder);
  for (const h of givenHolders) {
    if (givenHolders.filter((g) => g.name === h.name).length > 1) throw new UsageError(`holder ${h.name} given twice`);
    const at = holders.findIndex((g) => g.name === h.name);
    if (at === -1) holders.push(h);
    else holders[at] = h;
  }
  if (parsed.flags.has('--data') && parsed.flags.has('--no-data'))
    throw new UsageError('--data and --no-data contradict each other');
  return {
    model: text('--model', device.model),
    vendor: text('--vendor', device.vendor),
    partitions,
    fstype,
    mountpoint,
    holders,
    dataPresent: parsed.flags.has('--data') ? true : parsed.flags.has('--no-data') ? false : device.dataPresent,
    clusterGUID: clusterGUID === null ? null : uuidOption(clusterGUID, '--cluster-guid'),
  };
}

/** `--x VALUE` sets, `--no-x` clears, neither keeps `current`; both is a usage error. */
function either(parsed: ParsedArgs, set: string, clear: string, current: string | null): string | null {
  const value = optional(parsed, set);
  if (value !== undefined && parsed.flags.has(clear)) throw new UsageError(`${set} and ${clear} contradict each other`);
  return parsed.flags.has(clear) ? null : (value ?? current);
}

/** NAME[:FSTYPE[:MOUNTPOINT]]; the mountpoint is the rest, so it may hold colons. */
function parsePartition(spec: string, disk: string): PartitionRecord {
  const [name = '', fstype = '', ...rest] = spec.split(':');
  const mountpoint = rest.join(':');
  if (!isDevicePath(name)) throw new UsageError(`--partition ${JSON.stringify(spec)}: invalid partition path`);
  if (partitionNumber(disk, name) === undefined) {
    throw new UsageError(
      `${name} is not a partition name of ${disk} (expected ${partitionPath(disk, 1)}, ${partitionPath(disk, 2)}, ...)`,
    );
  }
  if (fstype !== '' && !FSTYPE.test(fstype))
    throw new UsageError(`--partition ${JSON.stringify(spec)}: invalid filesystem type ${JSON.stringify(fstype)}`);
  if (mountpoint !== '') checkMountpoint(mountpoint);
  return { name, fstype: fstype || null, mountpoint: mountpoint || null };
}

/** NAME:TYPE, the name as lsblk --paths prints it; TYPE after the last colon (a dm name may hold colons). */
function parseHolder(spec: string): HolderRecord {
  const at = spec.lastIndexOf(':');
  const [name, type] = at === -1 ? [spec, ''] : [spec.slice(0, at), spec.slice(at + 1)];
  if (DM_HOLDER.test(name)) {
    if (!DM_TYPES.includes(type))
      throw new UsageError(
        `--holder ${JSON.stringify(spec)}: a device-mapper holder's type is one of ${DM_TYPES.join(', ')}`,
      );
  } else if (MD_HOLDER.test(name)) {
    if (!MD_TYPES.includes(type))
      throw new UsageError(`--holder ${JSON.stringify(spec)}: an md holder's type is one of ${MD_TYPES.join(', ')}`);
  } else throw new UsageError(`--holder ${JSON.stringify(spec)}: a holder is /dev/mapper/NAME or /dev/mdN, then :TYPE`);
  return { name, type };
}

function checkMountpoint(mountpoint: string): void {
  // eslint-disable-next-line no-control-regex
  const ok = mountpoint === SWAP || (/^\/[^\x00-\x1f]*$/.test(mountpoint) && mountpoint.length <= 4096);
  if (!ok) throw new UsageError(`a mountpoint is an absolute path or ${SWAP}, got ${JSON.stringify(mountpoint)}`);
}

/** Refuses what no disk can look like, and a mountpoint another device of the node already has. */
function checkShape(device: DeviceHeader, shape: Shape, node: NodeView): void {
  const path = device.devicePath;
  const layout = shape.partitions.length > 0 || shape.fstype !== null || shape.dataPresent;
  if (device.signature !== 'none' && layout) {
    throw new SimRefusal(
      `${path} carries a Weka partition (${device.signature}); it cannot also have partitions, a filesystem or data`,
    );
  }
  if (shape.fstype !== null && shape.partitions.length > 0)
    throw new SimRefusal(`${path} cannot have both a filesystem on the disk (${shape.fstype}) and partitions`);
  if (shape.dataPresent && (shape.fstype !== null || shape.partitions.length > 0))
    throw new SimRefusal(
      `${path}: --data means content with no recognised signature, but it has partitions or a filesystem`,
    );
  if (shape.clusterGUID !== null && device.signature !== 'exclusive')
    throw new SimRefusal(`${path} is not signed exclusive; only an exclusive drive is claimed by a cluster`);
  for (const p of [{ name: path, fstype: shape.fstype, mountpoint: shape.mountpoint }, ...shape.partitions]) {
    if (p.mountpoint === null) continue;
    if (p.fstype === null) throw new SimRefusal(`cannot mount ${p.name} at ${p.mountpoint}: it has no filesystem`);
    if ((p.fstype === 'swap') !== (p.mountpoint === SWAP))
      throw new SimRefusal(`${p.name}: only a swap filesystem is used as ${SWAP}, and swap is never mounted at a path`);
  }
  const mine = mountpointsOf({ ...device, ...shape }).filter((m) => m !== SWAP);
  const twice = mine.find((m, i) => mine.indexOf(m) !== i);
  if (twice) throw new SimRefusal(`${twice} would be mounted twice on ${path}`);
  for (const other of node.devices.values()) {
    if (other.devicePath === path) continue;
    const clash = shape.partitions.find((p) => p.name === other.devicePath);
    if (clash) throw new SimRefusal(`${clash.name} is a device of node ${node.nodeName}, not a partition of ${path}`);
    const named = shape.holders.find((h) => h.name === other.devicePath);
    if (named) throw new SimRefusal(`${named.name} is a device of node ${node.nodeName}, not a holder of ${path}`);
    const taken = mountpointsOf(other).find((m) => mine.includes(m));
    if (taken) throw new SimRefusal(`${taken} is already mounted from ${other.devicePath}`);
  }
}
