// The records of one simulated node's state, as plain types: its devices' headers (what a real
// device carries in its signature and partition table) and where its state directory keeps them.

export type DriveType = 'TLC' | 'QLC';

/** 'exclusive': signed for one Weka cluster's own use (no subcommand); 'proxy': for drive sharing. */
export type DeviceSignature = 'none' | 'proxy' | 'exclusive';

/** A partition that is not Weka's, as a node admin left it (`weka-sim device --partition`). */
export interface PartitionRecord {
  /** The partition's device path, e.g. /dev/nvme0n1p1 or /dev/sda1. */
  name: string;
  fstype: string | null;
  mountpoint: string | null;
}

/**
 * A block device built on the whole disk, which holds it: a device-mapper device (an LVM volume,
 * dm-crypt, multipath; for example the volume behind a block-mode PersistentVolume a pod uses) or
 * an md RAID array (`weka-sim device --holder`). The kernel lists it in /sys/block/<disk>/holders,
 * and lsblk among the disk's children.
 */
export interface HolderRecord {
  /** As `lsblk --paths` names it: /dev/mapper/<dm name>, or /dev/md<N>. */
  name: string;
  /** lsblk's TYPE: lvm, crypt, mpath or dm for device-mapper; raid0, raid1, ..., linear for md. */
  type: string;
}

export interface VirtualDriveRecord {
  virtualUUID: string;
  ownerClusterGUID: string;
  sizeGiB: number;
}

/** The header the simulator keeps for one physical device (what the real tool writes on disk). */
export interface DeviceHeader {
  devicePath: string;
  serial: string;
  capacityGiB: number;
  type: DriveType;
  /** lsblk's MODEL and VENDOR. */
  model: string;
  vendor: string;
  /** Non-Weka partitions; signing for Weka replaces them with its one partition. */
  partitions: PartitionRecord[];
  /** A filesystem directly on the disk (no partition table), and where it is mounted. */
  fstype: string | null;
  mountpoint: string | null;
  /** Devices built on the disk; while there is one, signing the disk is refused (sign-physical.ts). */
  holders: HolderRecord[];
  /** Non-zero content with no recognised signature (no partition table, filesystem or Weka header). */
  dataPresent: boolean;
  signature: DeviceSignature;
  /** Assigned by signing, proxy or exclusive. */
  physicalUUID: string | null;
  /** An exclusive drive's claiming cluster; null: signed but unclaimed (always null unless exclusive). */
  clusterGUID: string | null;
  virtualDrives: VirtualDriveRecord[];
}

export interface SimPaths {
  readonly stateDir: string;
  /** The node's name: the state directory's base name. */
  readonly nodeName: string;
  readonly devicesDir: string;
  readonly faultsFile: string;
  /** One file per tool command sleeping out its injected latency (faults.ts). */
  readonly latencyWaitsDir: string;
  /** The over-commit mode (overcommit.ts); absent: refuse. */
  readonly overcommitFile: string;
  readonly nodeLock: string;
  readonly logFile: string;
  /** A command's device writes and log line while they are being made (see commitCommand). */
  readonly journalFile: string;
  readonly clustersDir: string;
  readonly clustersFile: string;
  readonly clustersLock: string;
}

/** What a node does with a `virtual add` beyond a device's free capacity (overcommit.ts). */
export const OVERCOMMIT_MODES = ['refuse', 'record'] as const;
export type OvercommitMode = (typeof OVERCOMMIT_MODES)[number];

/**
 * A test's stand-in for a cluster in trouble (`weka-sim cluster-health`, cluster-health.ts): the
 * simulator moves no data and loses no copies, so what `weka status` says of them is set by hand.
 * Each field left out reads as a healthy cluster's.
 */
export interface ClusterHealthOverride {
  /** The cluster's status instead of OK (REBUILDING, PARTIALLY_PROTECTED, ...). */
  status?: string;
  /** A rebuild is moving data. */
  movingData?: true;
  /** How far the rebuild is, in percent. */
  progressPercent?: number;
  /** This percentage of the data has lost numFailures of its copies (the rest none). */
  protection?: { numFailures: number; percent: number };
}
