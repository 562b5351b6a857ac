// How a simulated command ends. Exit codes follow sysexits.h and match REFUSAL_EXIT_CODES in
// src/weka/call.ts, which is how the operator tells a refusal from a transient failure.
import type {
  ClusterHealthOverride,
  DeviceHeader,
  HolderRecord,
  OvercommitMode,
  PartitionRecord,
} from './node-records.js';

export const EXIT_OK = 0;
/** Bad argv: unknown command, missing or malformed option. Refusal. */
export const EXIT_USAGE = 64;
/** The request conflicts with the device or cluster state. Refusal. */
export const EXIT_REFUSED = 65;
/** A bug or a corrupt state file. Transient as far as the operator can tell. */
export const EXIT_INTERNAL = 70;
/**
 * EX_IOERR: a write to a device that failed (`weka-sim fail-drive`), as a dying NVMe answers it.
 * Any code but 64, 65 and 78 is transient to the operator, as a real tool's would be.
 */
export const EXIT_IOERR = 74;
/** EX_UNAVAILABLE: a shim found no simulator server to answer. Transient, as a tool that cannot start. */
export const EXIT_UNAVAILABLE = 69;
/** Injected fault, or the state lock could not be taken in time. Transient. */
export const EXIT_TEMPFAIL = 75;
/** The simulator is not set up (e.g. the shim has no WEKA_SIM_STATE). Refusal. */
export const EXIT_CONFIG = 78;

/** What the real tool would refuse; reported on stderr with exit 65. */
export class SimRefusal extends Error {}

/** Malformed arguments; reported on stderr with exit 64. */
export class UsageError extends Error {}

/**
 * A tool that fails with its own exit code and stderr, as the real one does (lsblk's 1 and 32):
 * `stderr` is written as it is, program name included.
 */
export class ToolExit extends Error {
  constructor(
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(stderr.trimEnd());
  }
}

export interface SimResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One state change, recorded in commands.log so tests can count what really happened. */
export type Change =
  | {
      readonly kind: 'device-init';
      readonly device: string;
      readonly capacityGiB: number;
      readonly type: string;
      readonly serial: string;
    }
  | {
      readonly kind: 'device-shape';
      readonly device: string;
      readonly model: string;
      readonly vendor: string;
      readonly partitions: readonly PartitionRecord[];
      readonly fstype: string | null;
      readonly mountpoint: string | null;
      readonly holders: readonly HolderRecord[];
      readonly dataPresent: boolean;
      readonly clusterGUID: string | null;
    }
  | {
      readonly kind: 'sign-proxy' | 'sign-exclusive';
      readonly device: string;
      readonly physicalUUID: string;
      /** What signing destroyed, when an --allow-* flag let it: one description each. */
      readonly erased?: readonly string[];
    }
  | {
      readonly kind: 'virtual-add';
      readonly device: string;
      readonly virtualUUID: string;
      readonly ownerClusterGUID: string;
      readonly sizeGiB: number;
      /** Only in recording mode, on an add beyond the free capacity: GiB signed after it minus the capacity. */
      readonly overcommitGiB?: number;
    }
  | {
      readonly kind: 'virtual-remove';
      readonly device: string;
      readonly virtualUUID: string;
      readonly ownerClusterGUID: string;
    }
  | { readonly kind: 'cluster-create'; readonly guid: string; readonly hosts: readonly string[] }
  | { readonly kind: 'cluster-name'; readonly guid: string; readonly name: string }
  /** Its last container was removed: Weka has no cluster without containers. */
  | { readonly kind: 'cluster-gone'; readonly name: string; readonly guid: string }
  | { readonly kind: 'join-ips'; readonly name: string; readonly hostname: string; readonly joinIps: readonly string[] }
  | {
      readonly kind: 'container-add';
      readonly containerId: number;
      readonly clusterGUID: string;
      readonly name: string;
      readonly hostname: string;
      readonly basePort?: number;
      readonly agentPort?: number;
    }
  | {
      readonly kind: 'container-deactivate';
      readonly containerId: number;
      readonly clusterGUID: string;
      readonly name: string;
    }
  | {
      readonly kind: 'container-remove';
      readonly containerId: number;
      readonly clusterGUID: string;
      readonly name: string;
      readonly hostname: string;
    }
  | DriveChange
  | { readonly kind: 'faults-set'; readonly faults: unknown }
  | { readonly kind: 'faults-clear' }
  | { readonly kind: 'overcommit-set'; readonly mode: OvercommitMode }
  /** A test's health override of a cluster (`weka-sim cluster-health`), set or cleared. */
  | { readonly kind: 'cluster-health-set'; readonly guid: string; readonly health: ClusterHealthOverride }
  | { readonly kind: 'cluster-health-clear'; readonly guid: string }
  | { readonly kind: 'process-gone' | 'process-running'; readonly containerId: number; readonly name: string }
  /** A test made a physical drive of the node fail (`weka-sim fail-drive`), or healed it (`--clear`). */
  | { readonly kind: 'device-fail' | 'device-heal'; readonly device: string; readonly serial: string };

/** A drive added to, deactivated in or removed from a cluster: a virtual drive by its UUID, a whole drive by its device. */
export type DriveChange = {
  readonly kind: 'drive-add' | 'drive-deactivate' | 'drive-remove';
  readonly driveUUID: string;
  readonly containerId: number;
  /** The pool `drive add` was given, null when none was. */
  readonly pool: string | null;
} & (
  | { readonly virtualUUID: string }
  | {
      readonly devicePath: string;
      readonly serial: string;
    }
);

/** What a command handler produced: its stdout and the changes it made to the in-memory state. */
export interface ToolOutput {
  readonly stdout: string;
  readonly changes: readonly Change[];
  /** A tool that succeeds only in part (lsblk given some unknown devices): its exit code and stderr. */
  readonly exitCode?: number;
  readonly stderr?: string;
  /** The device headers the command changed, written with its log line (commitCommand). */
  readonly deviceWrites?: readonly DeviceHeader[];
}
