// The simulated weka-sign-drive: signing physical devices (sign-physical.ts), device headers,
// virtual drive signatures. Handlers work on the node's in-memory device headers; the runner
// persists what they changed.
import { integerArg, parseArgs, positionals, required } from './args.js';
import { describeShape } from './device-header.js';
import { ioError } from './failed-drives.js';
import type { DeviceHeader, DriveType } from './node-records.js';
import { findDevice, uuidOption, type NodeView } from './node-view.js';
import { SimRefusal, UsageError, type ToolOutput } from './outcome.js';
import { signPhysical } from './sign-physical.js';

export const SIGN_DRIVE_USAGE = `usage:
  weka-sign-drive [FLAGS] -- DEVICE                 (sign for exclusive use)
  weka-sign-drive sign proxy [FLAGS] [--] DEVICE    (sign for drive sharing)
    FLAGS: --allow-erase-weka-partitions --allow-erase-non-weka-partitions
           --allow-non-empty-device --skip-trim-format
  weka-sign-drive list [-j|--json]
  weka-sign-drive show DEVICE [--json]
  weka-sign-drive virtual add PHYSICAL_UUID --size GB --owner-cluster-guid GUID --virtual-uuid UUID
  weka-sign-drive virtual remove PHYSICAL_UUID --virtual-uuid UUID`;

/** Bytes per GiB: a header's capacity is kept in GiB, the tool prints bytes. */
const GIB = 2 ** 30;

/** The indirection-unit size each type's drives report (TLC below 16 KiB, QLC from it). */
const IU_SIZE: Readonly<Record<DriveType, number>> = { TLC: 4096, QLC: 16384 };

export function runSignDrive(args: readonly string[], node: NodeView, newUUID: () => string): ToolOutput {
  const [group, action, ...rest] = args;
  if (group === 'sign' && action === 'proxy') return signPhysical(rest, node, newUUID, 'proxy');
  // No subcommand: flags, or "--", then the device.
  if (group?.startsWith('-')) return signPhysical(args, node, newUUID, 'exclusive');
  if (group === 'list') return list(args.slice(1), node);
  if (group === 'show') return show(args.slice(1), node);
  if (group === 'virtual' && action === 'add') return virtualAdd(rest, node);
  if (group === 'virtual' && action === 'remove') return virtualRemove(rest, node);
  throw new UsageError(`unknown command ${JSON.stringify(args.slice(0, 2).join(' '))}\n${SIGN_DRIVE_USAGE}`);
}

/**
 * Every device the caller sees, at the path it sees it: a pod given block volumes sees those
 * devices only, at the paths its spec names; the node (a proxy pod) sees all of them.
 */
function visibleDevices(node: NodeView): [string, DeviceHeader][] {
  if (node.aliases && node.aliases.size > 0)
    return [...node.aliases].flatMap(([alias, path]) => {
      const device = node.devices.get(path);
      return device ? [[alias, device] as [string, DeviceHeader]] : [];
    });
  return [...node.devices.values()].map((d) => [d.devicePath, d]);
}

/** The layout of docs/weka-interface.md, `weka-sign-drive list -j`. */
function list(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'], aliases: { '-j': '--json' } });
  positionals(parsed, []);
  const devices = visibleDevices(node).sort(([a], [b]) => a.localeCompare(b));
  if (!parsed.flags.has('--json')) {
    const rows = devices.map(([path, d]) =>
      [d.physicalUUID ?? '-', path, `${d.capacityGiB} GiB`, String(d.virtualDrives.length), statusOf(d)].join('  '),
    );
    return { stdout: `${['PHYSICAL UUID  DEVICE  CAPACITY  NUM VIDS  STATUS', ...rows].join('\n')}\n`, changes: [] };
  }
  const report = {
    command: 'list',
    timestamp: new Date().toISOString(),
    devices: devices.map(([path, d]) => ({
      path,
      status: statusOf(d),
      physical_uuid: d.physicalUUID ?? '',
      hardware: hardwareOf(d),
      weka_info:
        d.signature === 'none'
          ? null
          : {
              cluster_guid: d.signature === 'exclusive' ? d.clusterGUID : null,
              is_proxy: d.signature === 'proxy',
              ...(d.signature === 'proxy'
                ? {
                    virtual_drives: d.virtualDrives.map((vd) => ({
                      virtual_uuid: vd.virtualUUID,
                      cluster_uuid: vd.ownerClusterGUID,
                      size_gb: vd.sizeGiB,
                    })),
                  }
                : {}),
            },
    })),
  };
  return { stdout: `${JSON.stringify(report, null, 2)}\n`, changes: [] };
}

/** Signed for Weka, either way: `weka_formatted`; anything else shows as the one other status a source shows. */
function statusOf(d: DeviceHeader): string {
  return d.signature === 'none' ? 'excluded' : 'weka_formatted';
}

function hardwareOf(d: DeviceHeader) {
  return { serial_number: d.serial, model: d.model, size_bytes: d.capacityGiB * GIB, iu_size: IU_SIZE[d.type] };
}

/** The header as the reference reads it (`partitions[0].header`, `hardware`); the human form adds the rest. */
function show(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [path] = positionals(parsed, ['DEVICE']);
  const device = findDevice(node, path!);
  const signed = device.signature !== 'none';
  if (parsed.flags.has('--json')) {
    const partitions = signed
      ? [
          {
            size: device.capacityGiB * GIB,
            header: { physical_uuid: device.physicalUUID, is_proxy: device.signature === 'proxy' },
          },
        ]
      : [];
    return { stdout: `${JSON.stringify({ partitions, hardware: hardwareOf(device) }, null, 2)}\n`, changes: [] };
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

/** The proxy drive with this physical UUID, wherever the node has it. */
function proxyDrive(node: NodeView, physicalUUID: string): DeviceHeader {
  const device = [...node.devices.values()].find((d) => d.physicalUUID === physicalUUID);
  if (!device) throw new SimRefusal(`no drive with physical UUID ${physicalUUID} on node ${node.nodeName}`);
  if (device.signature !== 'proxy') throw new SimRefusal(`${device.devicePath} is not signed for proxy use`);
  return device;
}

function virtualAdd(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { values: ['--virtual-uuid', '--owner-cluster-guid', '--size'] });
  const [physical] = positionals(parsed, ['PHYSICAL_UUID']);
  // The real tool makes up a virtual UUID and serves every cluster when these are left out; the
  // operator always names both, and the simulator models only that.
  const virtualUUID = uuidOption(required(parsed, '--virtual-uuid'), '--virtual-uuid');
  const ownerClusterGUID = uuidOption(required(parsed, '--owner-cluster-guid'), '--owner-cluster-guid');
  const sizeGiB = integerArg('--size', required(parsed, '--size'), 1);
  const device = proxyDrive(node, uuidOption(physical!, 'PHYSICAL_UUID'));
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
  // Everything above is read from the proxy's records; signing writes to the drive, which a failed one refuses.
  if (node.failed?.(device)) throw ioError(device.devicePath);
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

/**
 * Works on a failed drive too: the tool makes the change through the proxy, which keeps the
 * virtual drives' records (drives-sharing), and the reference unsigns a failed drive's virtual
 * drive once Weka has let go of it (weka/weka-operator, removeDriveFromWeka).
 */
function virtualRemove(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { values: ['--virtual-uuid'] });
  const [physical] = positionals(parsed, ['PHYSICAL_UUID']);
  const virtualUUID = uuidOption(required(parsed, '--virtual-uuid'), '--virtual-uuid');
  const device = proxyDrive(node, uuidOption(physical!, 'PHYSICAL_UUID'));
  const index = device.virtualDrives.findIndex((vd) => vd.virtualUUID === virtualUUID);
  const existing = device.virtualDrives[index];
  if (!existing) throw new SimRefusal(`virtual UUID ${virtualUUID} is not signed on ${device.devicePath}`);
  device.virtualDrives.splice(index, 1);
  return {
    stdout: `Removed virtual drive ${virtualUUID} from ${device.devicePath}\n`,
    changes: [
      { kind: 'virtual-remove', device: device.devicePath, virtualUUID, ownerClusterGUID: existing.ownerClusterGUID },
    ],
  };
}
