// Which of a node's devices a sign-drives operation chooses, and whether each may be signed.
// Signing writes a Weka header over the whole device, so a device is signed only when nothing on
// it would be lost, or the operation said in so many words that losing it is meant; anything else
// is skipped with the reason, and the other devices are still signed.
import type { SignOptions } from '../api/schemas/wekamanualoperation.js';
import { foreignContentOf, holdersOf, mountsOf, type BlockDevice } from '../weka/block-devices.js';
import type { DriveInfo, SignFlag } from '../weka/sign-drive.js';
import type { SigningType } from './sign-drives-request.js';

export type SigningMode = 'proxy' | 'exclusive';

/**
 * lsblk's MODEL of the local NVMe drives of each cloud: the Weka operator picks the same drives by
 * their PCI ids (Amazon 1d0f:cd01, Google 1ae0:001f), which report these models. EBS volumes
 * ("Amazon Elastic Block Store") and persistent disks ("nvme_card-pd") are never chosen.
 */
export const CLOUD_LOCAL_NVME_MODELS: Readonly<Record<'aws-all' | 'gcp-all', string>> = {
  'aws-all': 'Amazon EC2 NVMe Instance Storage',
  'gcp-all': 'nvme_card',
};

export type SkipReason =
  | 'NotFound'
  | 'NotADisk'
  | 'RootDisk'
  | 'Mounted'
  | 'Held'
  | 'HasPartitions'
  | 'NotEmpty'
  | 'SignedForOtherUse'
  | 'InUse'
  | 'Refused';

export interface SkippedDevice {
  readonly devicePath: string;
  readonly reason: SkipReason;
  readonly message: string;
}

export interface DeviceChoice {
  /** The devices the method chose, to be checked and signed one by one. */
  readonly chosen: string[];
  /** Devices named or matched that cannot be signed whatever their state says. */
  readonly skipped: SkippedDevice[];
}

const holdsRoot = (d: BlockDevice): boolean => mountsOf(d).includes('/');

/** The devices a signing type chooses on a node, from its lsblk listing. */
export function chooseDevices(
  type: SigningType,
  devicePaths: readonly string[],
  devices: readonly BlockDevice[],
): DeviceChoice {
  const disks = devices.filter((d) => d.type === 'disk');
  if (type === 'device-paths') {
    const chosen: string[] = [];
    const skipped: SkippedDevice[] = [];
    const partitions = devices.flatMap((d) => d.children);
    for (const path of devicePaths) {
      if (disks.some((d) => d.path === path)) chosen.push(path);
      else if (devices.some((d) => d.path === path) || partitions.some((p) => p.path === path))
        skipped.push({
          devicePath: path,
          reason: 'NotADisk',
          message: `${path} is not a whole disk; list the disk it belongs to`,
        });
      else
        skipped.push({
          devicePath: path,
          reason: 'NotFound',
          message: `${path} is not a block device on this node (its disks: ${disks.map((d) => d.path).join(', ') || 'none'})`,
        });
    }
    return { chosen, skipped };
  }
  if (type === 'all-not-root') return { chosen: disks.filter((d) => !holdsRoot(d)).map((d) => d.path), skipped: [] };
  const model = CLOUD_LOCAL_NVME_MODELS[type];
  return { chosen: disks.filter((d) => d.model === model).map((d) => d.path), skipped: [] };
}

/** Why a signing type found nothing on a node, for the node's result. */
export function nothingChosenMessage(type: SigningType, devices: readonly BlockDevice[]): string {
  const disks = devices.filter((d) => d.type === 'disk');
  const seen = disks.map((d) => `${d.path}${d.model ? ` (${d.model})` : ''}`).join(', ') || 'none';
  if (type === 'all-not-root') return `all-not-root found no disk on the node besides the root disk (disks: ${seen})`;
  if (type === 'device-paths') return 'none of the devicePaths is a disk on the node';
  return `${type} found no disk of model "${CLOUD_LOCAL_NVME_MODELS[type]}" on the node (disks: ${seen}): is it running on that cloud's instances with local NVMe drives?`;
}

export type SigningVerdict =
  | { readonly action: 'sign'; readonly flags: SignFlag[]; readonly erases: string[] }
  | { readonly action: 'already-signed' }
  | { readonly action: 'skip'; readonly reason: SkipReason; readonly message: string };

export interface SigningInput {
  readonly mode: SigningMode;
  readonly device: BlockDevice;
  /** What weka-sign-drive reads from the device's header. */
  readonly info: DriveInfo;
  readonly options: SignOptions;
  /** Serials a container on the node holds (exclusive drives, or the drive under a virtual drive). */
  readonly heldSerials: ReadonlySet<string>;
}

const skip = (reason: SkipReason, message: string): SigningVerdict => ({ action: 'skip', reason, message });

export function signingVerdict({ mode, device, info, options, heldSerials }: SigningInput): SigningVerdict {
  const path = device.path;
  const mounts = mountsOf(device);
  if (mounts.includes('/')) return skip('RootDisk', `${path} holds the root filesystem; it is never signed`);
  if (mounts.length > 0)
    return skip(
      'Mounted',
      `${path} is mounted at ${mounts.join(', ')}; a mounted device is never signed: unmount it first`,
    );
  // Used raw, as a block-mode PersistentVolume's LVM volume is, a holder has no mountpoint: the
  // mounts alone (all the Weka operator looks at before it signs: sign_not_mounted() and
  // find_disks() in its charts/weka-operator/resources/weka_runtime.py) would call it free.
  const holders = holdersOf(device);
  if (holders.length > 0)
    return skip(
      'Held',
      `${path} is held by ${holders.map((h) => `${h.path} (${h.type})`).join(', ')}: a device that another block device is built on (an LVM volume, dm-crypt, multipath or md RAID, such as the volume of a block-mode PersistentVolume) is never signed, whatever the options; remove that device first`,
    );
  if (info.signature === mode) return { action: 'already-signed' };
  const flags: SignFlag[] = [];
  const erases: string[] = [];
  if (info.signature !== 'none') {
    const was = info.signature === 'other' ? 'Weka (another kind)' : `${info.signature} use`;
    if (info.virtualDrives.length > 0)
      return skip('InUse', `${path} is signed for proxy use and carries ${info.virtualDrives.length} virtual drives`);
    if (info.clusterGUID) return skip('InUse', `${path} is added to Weka cluster ${info.clusterGUID}`);
    if (heldSerials.has(info.serial))
      return skip('InUse', `${path} (serial ${info.serial}) is allocated to a drive container on this node`);
    if (!options.allowEraseWekaPartitions)
      return skip(
        'SignedForOtherUse',
        `${path} is signed for ${was}, not ${mode} use: a drive is given to the proxy or used exclusively, never both; set options.allowEraseWekaPartitions to sign it again for ${mode} use`,
      );
    flags.push('--allow-erase-weka-partitions');
    erases.push(`its Weka signature for ${was}`);
  }
  const foreign = foreignContentOf(device);
  if (foreign.length > 0) {
    if (!options.allowEraseNonWekaPartitions)
      return skip(
        'HasPartitions',
        `${path} has ${foreign.join(' and ')}; set options.allowEraseNonWekaPartitions to erase them and sign it`,
      );
    flags.push('--allow-erase-non-weka-partitions');
    erases.push(...foreign);
  }
  // Only the tool can tell whether the content is empty: it refuses, and says so, unless allowed.
  if (options.allowNonEmptyDevice) flags.push('--allow-non-empty-device');
  if (options.skipTrimFormat) flags.push('--skip-trim-format');
  return { action: 'sign', flags, erases };
}

/** A refusal of weka-sign-drive, as a skipped device. */
export function refusalSkip(devicePath: string, message: string): SkippedDevice {
  if (/not empty/i.test(message))
    return { devicePath, reason: 'NotEmpty', message: `${message}; set options.allowNonEmptyDevice to overwrite it` };
  if (/busy|mounted/i.test(message)) return { devicePath, reason: 'Mounted', message };
  return { devicePath, reason: 'Refused', message };
}
