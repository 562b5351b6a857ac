// The simulated weka-sign-drive: signing physical devices (sign-physical.ts), device headers,
// virtual drive signatures. Handlers work on the node's in-memory device headers; the runner
// persists what they changed.
import { integerArg, parseArgs, positionals, required } from './args.js';
import { describeShape } from './device-header.js';
import type { DeviceHeader } from './node-state.js';
import { findDevice, uuidOption, type NodeView } from './node-view.js';
import { SimRefusal, UsageError, type ToolOutput } from './outcome.js';
import { signPhysical } from './sign-physical.js';

export const SIGN_DRIVE_USAGE = `usage:
  weka-sign-drive [FLAGS] -- DEVICE                 (sign for exclusive use)
  weka-sign-drive sign proxy [FLAGS] [--] DEVICE    (sign for drive sharing)
    FLAGS: --allow-erase-weka-partitions --allow-erase-non-weka-partitions
           --allow-non-empty-device --skip-trim-format
  weka-sign-drive show [--json] DEVICE
  weka-sign-drive virtual add DEVICE --virtual-uuid UUID --owner-cluster-guid GUID --size GIB
  weka-sign-drive virtual remove DEVICE --virtual-uuid UUID --owner-cluster-guid GUID`;

export function runSignDrive(args: readonly string[], node: NodeView, newUUID: () => string): ToolOutput {
  const [group, action, ...rest] = args;
  if (group === 'sign' && action === 'proxy') return signPhysical(rest, node, newUUID, 'proxy');
  // No subcommand: flags, or "--", then the device.
  if (group?.startsWith('-')) return signPhysical(args, node, newUUID, 'exclusive');
  if (group === 'show') return show(args.slice(1), node);
  if (group === 'virtual' && action === 'add') return virtualAdd(rest, node);
  if (group === 'virtual' && action === 'remove') return virtualRemove(rest, node);
  throw new UsageError(`unknown command ${JSON.stringify(args.slice(0, 2).join(' '))}\n${SIGN_DRIVE_USAGE}`);
}

function show(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [path] = positionals(parsed, ['DEVICE']);
  const device = findDevice(node, path!);
  const signed = device.signature !== 'none';
  if (parsed.flags.has('--json')) {
    // An unsigned device has no physical UUID yet: the field is left out, "signed" is false.
    const report = {
      devicePath: device.devicePath,
      serial: device.serial,
      capacityGiB: device.capacityGiB,
      type: device.type,
      signed,
      signature: device.signature,
      ...(signed ? { physicalUUID: device.physicalUUID } : {}),
      ...(device.signature === 'exclusive' ? { clusterGUID: device.clusterGUID } : {}),
      virtualDrives: device.virtualDrives,
    };
    return { stdout: `${JSON.stringify(report, null, 2)}\n`, changes: [] };
  }
  const lines = [
    `device: ${device.devicePath}`,
    `serial: ${device.serial}`,
    `capacity: ${device.capacityGiB} GiB ${device.type}`,
    `layout: ${describeShape(device)}`,
    `signature: ${device.signature}${signed ? ` (physical UUID ${device.physicalUUID}${claim(device)})` : ''}`,
    ...device.virtualDrives.map((vd) => `virtual: ${vd.virtualUUID} owner ${vd.ownerClusterGUID} ${vd.sizeGiB} GiB`),
  ];
  return { stdout: `${lines.join('\n')}\n`, changes: [] };
}

/** ", cluster GUID G" or ", unclaimed" for an exclusive drive; nothing otherwise. */
function claim(device: DeviceHeader): string {
  if (device.signature !== 'exclusive') return '';
  return device.clusterGUID ? `, cluster GUID ${device.clusterGUID}` : ', unclaimed';
}

function virtualAdd(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { values: ['--virtual-uuid', '--owner-cluster-guid', '--size'] });
  const [path] = positionals(parsed, ['DEVICE']);
  const virtualUUID = uuidOption(required(parsed, '--virtual-uuid'), '--virtual-uuid');
  const ownerClusterGUID = uuidOption(required(parsed, '--owner-cluster-guid'), '--owner-cluster-guid');
  const sizeGiB = integerArg('--size', required(parsed, '--size'), 1);
  const device = findDevice(node, path!);
  if (device.signature !== 'proxy') throw new SimRefusal(`${device.devicePath} is not signed for proxy use`);
  // Virtual UUIDs are unique per node: the proxy serves all of the node's devices.
  for (const other of node.devices.values()) {
    if (other.virtualDrives.some((vd) => vd.virtualUUID === virtualUUID)) {
      throw new SimRefusal(`virtual UUID ${virtualUUID} is already signed on ${other.devicePath}`);
    }
  }
  const free = device.capacityGiB - device.virtualDrives.reduce((sum, vd) => sum + vd.sizeGiB, 0);
  // In recording mode an over-commit is signed, and the change says by how much: the checker must catch it.
  const overcommitGiB = sizeGiB > free ? sizeGiB - free : 0;
  if (overcommitGiB > 0 && node.overcommit !== 'record')
    throw new SimRefusal(`${device.devicePath} has ${free} GiB left; cannot sign ${sizeGiB} GiB`);
  device.virtualDrives.push({ virtualUUID, ownerClusterGUID, sizeGiB });
  return {
    stdout: `Signed virtual drive ${virtualUUID} (${sizeGiB} GiB, cluster ${ownerClusterGUID}) on ${device.devicePath}\n`,
    changes: [
      {
        kind: 'virtual-add',
        device: device.devicePath,
        virtualUUID,
        ownerClusterGUID,
        sizeGiB,
        ...(overcommitGiB > 0 ? { overcommitGiB } : {}),
      },
    ],
  };
}

function virtualRemove(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { values: ['--virtual-uuid', '--owner-cluster-guid'] });
  const [path] = positionals(parsed, ['DEVICE']);
  const virtualUUID = uuidOption(required(parsed, '--virtual-uuid'), '--virtual-uuid');
  const ownerClusterGUID = uuidOption(required(parsed, '--owner-cluster-guid'), '--owner-cluster-guid');
  const device = findDevice(node, path!);
  const index = device.virtualDrives.findIndex((vd) => vd.virtualUUID === virtualUUID);
  const existing = device.virtualDrives[index];
  if (!existing) throw new SimRefusal(`virtual UUID ${virtualUUID} is not signed on ${device.devicePath}`);
  if (existing.ownerClusterGUID !== ownerClusterGUID) {
    throw new SimRefusal(
      `virtual drive ${virtualUUID} on ${device.devicePath} belongs to cluster ${existing.ownerClusterGUID}, not ${ownerClusterGUID}`,
    );
  }
  device.virtualDrives.splice(index, 1);
  return {
    stdout: `Removed virtual drive ${virtualUUID} from ${device.devicePath}\n`,
    changes: [{ kind: 'virtual-remove', device: device.devicePath, virtualUUID, ownerClusterGUID }],
  };
}
