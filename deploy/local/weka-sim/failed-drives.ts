// A test switch, not a Weka command: `weka-sim --state DIR fail-drive SERIAL|PHYSICAL_UUID` makes a
// physical drive of the node fail as a dying NVMe does, `--clear` heals it. What a failure changes
// follows what Weka's tools show (docs/weka-simulator.md, "A drive that fails"): the cluster drives
// on it list INACTIVE and count as not active in `weka status`, and weka-sign-drive's writes to it
// end in an I/O error. The failure is kept in the shared cluster state so that `weka` on any node
// sees it; like every write of that state it is made under the node lock, then the cluster lock.
import { mkdirSync } from 'node:fs';
import { isUUID } from '../../../src/weka/validate.js';
import { parseArgs, positionals } from './args.js';
import {
  loadClusters,
  saveClusters,
  type ClusterState,
  type DriveRecord,
  type FailedDeviceRecord,
} from './cluster-state.js';
import { withLock } from './lock.js';
import type { DeviceHeader, SimPaths } from './node-records.js';
import { loadDevices } from './node-state.js';
import { EXIT_IOERR, SimRefusal, ToolExit, type ToolOutput } from './outcome.js';

/**
 * The `fail-drive` subcommand. Failing a failed drive, or healing a healthy one, changes nothing;
 * a drive the node does not have is refused. Call under the node lock.
 */
export async function runFailDriveCommand(args: readonly string[], paths: SimPaths): Promise<ToolOutput> {
  const parsed = parseArgs(args, { flags: ['--clear'] });
  const [id] = positionals(parsed, ['SERIAL|PHYSICAL_UUID']);
  const device = deviceNamed([...loadDevices(paths).values()], id!, paths.nodeName);
  const at: FailedDeviceRecord = { node: paths.nodeName, serial: device.serial };
  const heal = parsed.flags.has('--clear');
  const named = `${device.devicePath} (serial ${device.serial})`;
  mkdirSync(paths.clustersDir, { recursive: true });
  return withLock(paths.clustersLock, () => {
    const clusters = loadClusters(paths);
    const failed = clusters.failedDevices ?? [];
    const others = failed.filter((f) => !(f.node === at.node && f.serial === at.serial));
    const hadFailed = others.length < failed.length;
    if (heal !== hadFailed)
      return { stdout: `${named} ${heal ? 'has not failed' : 'has failed already'}\n`, changes: [] };
    const next = heal ? others : [...failed, at];
    if (next.length > 0) clusters.failedDevices = next;
    else delete clusters.failedDevices;
    saveClusters(paths, clusters);
    return {
      stdout: `${named} ${heal ? 'healed' : 'failed'}\n`,
      changes: [{ kind: heal ? 'device-heal' : 'device-fail', device: device.devicePath, serial: device.serial }],
    };
  });
}

/** The device of that serial, or of that physical UUID (in either case). */
function deviceNamed(devices: readonly DeviceHeader[], id: string, node: string): DeviceHeader {
  const uuid = isUUID(id) ? id.toLowerCase() : undefined;
  const device = devices.find((d) => d.serial === id || (uuid !== undefined && d.physicalUUID === uuid));
  if (!device) throw new SimRefusal(`no drive with serial or physical UUID ${id} on node ${node}`);
  return device;
}

function onFailedDevice(clusters: ClusterState, at: FailedDeviceRecord): boolean {
  return (clusters.failedDevices ?? []).some((f) => f.node === at.node && f.serial === at.serial);
}

/**
 * A drive's status as `weka cluster drive` lists it: INACTIVE while its device has failed, as
 * Weka's own cloud functions read a failed drive (weka/go-cloud-lib, scale_down/scale_down.go:
 * an INACTIVE drive still meant to be active is an unhealthy one); its own status otherwise, so a
 * healed drive that was never deactivated is ACTIVE again.
 */
export function listedStatus(drive: DriveRecord, clusters: ClusterState): DriveRecord['status'] {
  return onFailedDevice(clusters, drive) ? 'INACTIVE' : drive.status;
}

/**
 * Whether a device of the node has failed, for weka-sign-drive. It reads the cluster state only
 * when first asked (a write is about to be made), so reads of the devices never pay for it; the
 * node lock the caller holds keeps this node's failures from changing meanwhile.
 */
export function failedDeviceCheck(paths: SimPaths): (device: DeviceHeader) => boolean {
  let clusters: ClusterState | undefined;
  return (device) =>
    onFailedDevice((clusters ??= loadClusters(paths)), { node: paths.nodeName, serial: device.serial });
}

/** What a write to a failed device ends in: EIO, named by the device, as perror(3) prints it. */
export function ioError(path: string): ToolExit {
  return new ToolExit(EXIT_IOERR, `weka-sign-drive: ${path}: Input/output error\n`);
}
