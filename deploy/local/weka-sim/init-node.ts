// `init-node`: creates a node's (unsigned) devices. Re-running it is idempotent: a device that
// already exists with the same capacity, type and serial is left alone (even if signed since),
// new devices are added (a drive was plugged in), and a device whose spec differs is refused
// rather than silently rewritten, since that would drop its signatures.
import { isDevicePath } from '../../../src/weka/validate.js';
import { integerArg, parseArgs, positionals } from './args.js';
import { blankDevice } from './device-header.js';
import type { DriveType } from './node-records.js';
import { SimRefusal, UsageError, type Change, type ToolOutput } from './outcome.js';
import type { NodeView } from './node-view.js';

export const INIT_NODE_USAGE =
  'usage: weka-sim --state DIR init-node --device PATH:GIB:TLC|QLC[:SERIAL] [--device ...]';

interface DeviceSpec {
  readonly devicePath: string;
  readonly capacityGiB: number;
  readonly type: DriveType;
  readonly serial: string;
}

export function runInitNode(args: readonly string[], node: NodeView): ToolOutput {
  const parsed = parseArgs(args, { values: ['--device'] });
  positionals(parsed, []);
  const specs = (parsed.values.get('--device') ?? []).map((text) => parseDeviceSpec(text, node.nodeName));
  if (specs.length === 0) throw new UsageError(`no --device given\n${INIT_NODE_USAGE}`);
  const paths = specs.map((s) => s.devicePath);
  const duplicate = paths.find((p, i) => paths.indexOf(p) !== i);
  if (duplicate) throw new UsageError(`device ${duplicate} given twice`);

  // Check every device before touching any, so a refusal leaves the node as it was.
  for (const spec of specs) {
    const existing = node.devices.get(spec.devicePath);
    if (
      existing &&
      (existing.capacityGiB !== spec.capacityGiB || existing.type !== spec.type || existing.serial !== spec.serial)
    ) {
      throw new SimRefusal(
        `${spec.devicePath} already exists as ${existing.capacityGiB} GiB ${existing.type} serial ${existing.serial}; refusing to redefine it as ${spec.capacityGiB} GiB ${spec.type} serial ${spec.serial}`,
      );
    }
  }
  const changes: Change[] = [];
  const lines: string[] = [];
  for (const spec of specs) {
    if (node.devices.has(spec.devicePath)) {
      lines.push(`${spec.devicePath}: unchanged`);
      continue;
    }
    node.devices.set(spec.devicePath, blankDevice(spec.devicePath, spec.capacityGiB, spec.type, spec.serial));
    changes.push({
      kind: 'device-init',
      device: spec.devicePath,
      capacityGiB: spec.capacityGiB,
      type: spec.type,
      serial: spec.serial,
    });
    lines.push(`${spec.devicePath}: created (${spec.capacityGiB} GiB ${spec.type}, serial ${spec.serial})`);
  }
  return { stdout: `${lines.join('\n')}\n`, changes };
}

/** The devices init-node's output says it created now (not those it left unchanged). */
export function createdDevices(stdout: string): string[] {
  return stdout.split('\n').flatMap((line) => /^(\/dev\/\S+): created \(/.exec(line)?.[1] ?? []);
}

function parseDeviceSpec(text: string, nodeName: string): DeviceSpec {
  const [devicePath, size, type, serial, ...extra] = text.split(':');
  if (devicePath === undefined || size === undefined || type === undefined || extra.length > 0) {
    throw new UsageError(`bad --device ${JSON.stringify(text)}\n${INIT_NODE_USAGE}`);
  }
  if (!isDevicePath(devicePath)) throw new UsageError(`invalid device path ${JSON.stringify(devicePath)}`);
  if (type !== 'TLC' && type !== 'QLC')
    throw new UsageError(`device type must be TLC or QLC, got ${JSON.stringify(type)}`);
  if (serial !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(serial))
    throw new UsageError(`invalid serial ${JSON.stringify(serial)}`);
  return {
    devicePath,
    capacityGiB: integerArg('device capacity (GiB)', size, 1),
    type,
    serial: serial ?? defaultSerial(nodeName, devicePath),
  };
}

/** Deterministic, so re-running init-node without serials is idempotent. */
export function defaultSerial(nodeName: string, devicePath: string): string {
  return `SIM${process.getBuiltinModule('node:crypto').createHash('sha256').update(`${nodeName}\0${devicePath}`).digest('hex').slice(0, 14).toUpperCase()}`;
}
