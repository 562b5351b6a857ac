// Signing a physical device for Weka, as the reference operator runs it: exclusive with no
// subcommand (`weka-sign-drive [FLAGS] -- DEVICE`), for drive sharing with `sign proxy [FLAGS] --
// DEVICE`. Signing writes one Weka partition over whatever was there, so it refuses what it would
// destroy unless the matching flag allows it, and a mounted device or one another block device is
// built on (a device-mapper or md holder) whatever the flags: opening a block device exclusively
// fails with EBUSY while a filesystem or a holder has claimed it (open(2), O_EXCL).
import { parseArgs, positionals } from './args.js';
import { mountpointsOf, partitionPath } from './device-header.js';
import { ioError } from './failed-drives.js';
import type { DeviceHeader } from './node-records.js';
import { SimRefusal, type ToolOutput } from './outcome.js';
import { findDevice, type NodeView } from './node-view.js';

export const ERASE_WEKA = '--allow-erase-weka-partitions';
export const ERASE_NON_WEKA = '--allow-erase-non-weka-partitions';
export const NON_EMPTY = '--allow-non-empty-device';
/** Accepted and without effect: the simulator has nothing to trim. */
export const SKIP_TRIM = '--skip-trim-format';
export const SIGN_FLAGS = [ERASE_WEKA, ERASE_NON_WEKA, NON_EMPTY, SKIP_TRIM] as const;

export function signPhysical(
  args: readonly string[],
  node: NodeView,
  newUUID: () => string,
  signature: 'proxy' | 'exclusive',
): ToolOutput {
  const parsed = parseArgs(args, { flags: SIGN_FLAGS });
  const [path] = positionals(parsed, ['DEVICE']);
  const device = findDevice(node, path!);
  const erased = whatSigningErases(device, (flag) => parsed.flags.has(flag));
  // The refusals above come from reading the device; writing the partition is what a failed one refuses.
  if (node.failed?.(device)) throw ioError(path!);
  Object.assign(device, {
    partitions: [],
    fstype: null,
    mountpoint: null,
    dataPresent: false,
    signature,
    physicalUUID: newUUID(),
    clusterGUID: null,
  } satisfies Partial<DeviceHeader>);
  const physicalUUID = device.physicalUUID!;
  return {
    stdout: [
      `Signed ${device.devicePath} for ${signature} use; physical UUID ${physicalUUID}`,
      ...erased.map((e) => `erased ${e}`),
    ]
      .map((line) => `${line}\n`)
      .join(''),
    changes: [
      {
        kind: signature === 'proxy' ? 'sign-proxy' : 'sign-exclusive',
        device: device.devicePath,
        physicalUUID,
        ...(erased.length > 0 ? { erased } : {}),
      },
    ],
  };
}

/** What signing would destroy, each allowed by its flag; the first thing not allowed is refused. */
function whatSigningErases(device: DeviceHeader, allowed: (flag: string) => boolean): string[] {
  const path = device.devicePath;
  const mounts = mountpointsOf(device);
  if (mounts.length > 0) throw new SimRefusal(`${path}: device or resource busy (mounted at ${mounts.join(', ')})`);
  if (device.holders.length > 0)
    throw new SimRefusal(`${path}: device or resource busy (held by ${device.holders.map((h) => h.name).join(', ')})`);
  const erased: string[] = [];
  if (device.signature !== 'none') {
    const claimed = device.clusterGUID ? `, cluster GUID ${device.clusterGUID}` : '';
    const part = partitionPath(path, 1);
    const details = `${device.signature}, physical UUID ${device.physicalUUID}${claimed}`;
    if (!allowed(ERASE_WEKA))
      throw new SimRefusal(`${path}: ${part} is already a Weka partition (${details}); pass ${ERASE_WEKA} to erase it`);
    const n = device.virtualDrives.length;
    if (n > 0) throw new SimRefusal(`${path} carries ${n} virtual drive${n === 1 ? '' : 's'}; remove them first`);
    erased.push(`Weka partition ${part} (${details})`);
  }
  if (device.partitions.length > 0) {
    const list = device.partitions.map((p) => (p.fstype ? `${p.name} ${p.fstype}` : p.name)).join(', ');
    if (!allowed(ERASE_NON_WEKA))
      throw new SimRefusal(`${path} has non-Weka partitions (${list}); pass ${ERASE_NON_WEKA} to erase them`);
    erased.push(`partitions ${list}`);
  }
  if (device.fstype !== null) {
    if (!allowed(ERASE_NON_WEKA))
      throw new SimRefusal(`${path} has a filesystem (${device.fstype}); pass ${ERASE_NON_WEKA} to erase it`);
    erased.push(`filesystem ${device.fstype}`);
  }
  if (device.dataPresent) {
    if (!allowed(NON_EMPTY)) throw new SimRefusal(`${path} is not empty; pass ${NON_EMPTY} to overwrite it`);
    erased.push('data');
  }
  return erased;
}
