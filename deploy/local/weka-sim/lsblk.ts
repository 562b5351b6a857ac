// The simulated lsblk, JSON output only: the node's devices as disks, with their partitions as
// children. A device signed for Weka shows the one partition signing wrote (Weka's partition type
// GUID, no filesystem) and nothing else. The devices built on a disk (its holders: LVM volumes,
// dm-crypt, multipath, md arrays) are children too, after the partitions, as util-linux lists
// them: its lsblk reads /sys/block/<disk>/holders into the tree after the disk's partitions
// (process_dependencies() in lsblk-cmd/lsblk.c), names a device-mapper device /dev/mapper/<name>
// with --paths, and types it by its DM UUID's prefix (lvm, crypt, mpath; "dm" without one) or an
// md array by its RAID level (get_type()). Read-only.
import { basename } from 'node:path';
import { partitionPath, WEKA_PARTITION_TYPE } from './device-header.js';
import type { DeviceHeader } from './node-records.js';
import { ToolExit, UsageError, type ToolOutput } from './outcome.js';
import type { NodeView } from './node-view.js';

export const LSBLK_COLUMNS = ['NAME', 'TYPE', 'SIZE', 'SERIAL', 'MODEL', 'VENDOR', 'FSTYPE', 'PARTTYPE', 'MOUNTPOINT'];
/** Real lsblk's default columns, minus those the simulator does not have (MAJ:MIN, RM, RO). */
export const LSBLK_DEFAULT_COLUMNS = ['NAME', 'SIZE', 'TYPE', 'MOUNTPOINT'];
/** Partition type GUIDs lsblk shows for a node admin's partitions. */
const LINUX_FILESYSTEM_TYPE = '0fc63daf-8483-4772-8e79-3d69d8477de4';
const LINUX_SWAP_TYPE = '0657fd6d-a4ab-43c4-84e5-0933c84b4f4f';
const EFI_SYSTEM_TYPE = 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b';
const MiB = 2 ** 20;
/** lsblk's exit codes: no device argument found; some found, some not. */
const EXIT_NONE_FOUND = 32;
const EXIT_SOME_FOUND = 64;

const SHORT_FLAGS: Record<string, string> = { J: '--json', b: '--bytes', p: '--paths', d: '--nodeps' };
const SUPPORTED = 'the simulated lsblk supports -J/--json, -b/--bytes, -p/--paths, -d/--nodeps and -o/--output';

interface LsblkOptions {
  readonly flags: Set<string>;
  columns: string[];
  readonly devices: string[];
}

interface Row {
  readonly path: string;
  /** disk, part, or a holder's type (lvm, crypt, mpath, dm, raid1, ...). */
  readonly type: string;
  readonly bytes: number;
  readonly values: Partial<Record<string, string | null>>;
  readonly children: Row[];
}

/**
 * Whose mounts lsblk reads (/proc/self/mountinfo): the host's, or a pod's own, where none of the
 * host's filesystems are mounted. The bind mounts a kubelet gives a pod (/etc/hosts and the like)
 * would show a host disk mounted somewhere in the pod; they are not modelled: a pod sees no mounts.
 */
export interface MountView {
  readonly hostMounts: boolean;
}

export function runLsblk(args: readonly string[], node: NodeView, view: MountView): ToolOutput {
  const o = parseLsblkArgs(args);
  if (!o.flags.has('--json')) throw new UsageError(`only JSON output is simulated: pass -J (--json); ${SUPPORTED}`);
  const disks = [...node.devices.values()].map((d) => diskRow(view.hostMounts ? d : withoutMounts(d)));
  let rows = disks;
  let missing: string[] = [];
  if (o.devices.length > 0) {
    const byPath = new Map(disks.flatMap((d) => [d, ...d.children]).map((row) => [row.path, row]));
    rows = o.devices.flatMap((path) => byPath.get(path) ?? []);
    missing = o.devices.filter((path) => !byPath.has(path));
  }
  const stderr = missing.map((path) => `lsblk: ${path}: not a block device\n`).join('');
  if (o.devices.length > 0 && rows.length === 0) throw new ToolExit(EXIT_NONE_FOUND, stderr);
  const shown = rows.map((row) => formatRow(render(row, o), 6));
  const stdout = `{\n   "blockdevices": [\n${shown.join(',\n')}${shown.length ? '\n' : ''}   ]\n}\n`;
  return { stdout, changes: [], ...(missing.length > 0 ? { exitCode: EXIT_SOME_FOUND, stderr } : {}) };
}

function parseLsblkArgs(args: readonly string[]): LsblkOptions {
  const o: LsblkOptions = { flags: new Set(), columns: LSBLK_DEFAULT_COLUMNS, devices: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      o.devices.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg : arg.slice(0, eq);
      if (name === '--output') {
        const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
        if (value === undefined) throw new UsageError(`option '--output' requires an argument`);
        o.columns = parseColumns(value);
      } else if (Object.values(SHORT_FLAGS).includes(name)) {
        if (eq !== -1) throw new UsageError(`option '${name}' doesn't allow an argument`);
        o.flags.add(name);
      } else throw new UsageError(`unsupported option '${arg}'; ${SUPPORTED}`);
    } else if (arg.startsWith('-') && arg.length > 1) {
      // Short options cluster ("-bJp"); -o takes the rest of the word or the next argument.
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j]!;
        if (letter === 'o') {
          const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
          if (value === undefined) throw new UsageError(`option requires an argument -- 'o'`);
          o.columns = parseColumns(value);
          break;
        }
        const flag = SHORT_FLAGS[letter];
        if (!flag) throw new UsageError(`unsupported option -- '${letter}'; ${SUPPORTED}`);
        o.flags.add(flag);
      }
    } else o.devices.push(arg);
  }
  return o;
}

/** "NAME,TYPE" or "+SERIAL" (the defaults and more); names in any case, as real lsblk takes them. */
function parseColumns(list: string): string[] {
  const extra = list.startsWith('+');
  const columns = (extra ? list.slice(1) : list).split(',').map((name) => {
    const column = name.toUpperCase();
    if (!LSBLK_COLUMNS.includes(column)) throw new ToolExit(1, `lsblk: unknown column: ${name}\n`);
    return column;
  });
  return [...new Set([...(extra ? LSBLK_DEFAULT_COLUMNS : []), ...columns])];
}

function withoutMounts(d: DeviceHeader): DeviceHeader {
  return { ...d, mountpoint: null, partitions: d.partitions.map((p) => ({ ...p, mountpoint: null })) };
}

function diskRow(d: DeviceHeader): Row {
  const bytes = d.capacityGiB * 2 ** 30;
  const children: Row[] =
    d.signature !== 'none'
      ? [partRow(partitionPath(d.devicePath, 1), bytes - MiB, null, WEKA_PARTITION_TYPE, null)]
      : d.partitions.map((p) => {
          // Sizes are not modelled: the partitions share the disk past its first MiB equally.
          const size = Math.floor((bytes - MiB) / d.partitions.length / MiB) * MiB;
          return partRow(p.name, size, p.fstype, adminPartitionType(p.fstype, p.mountpoint), p.mountpoint);
        });
  // Sizes are not modelled here either: a holder spans the disk past its first MiB.
  const holders = d.holders.map((h) => holderRow(h.name, h.type, bytes - MiB));
  const values = {
    SERIAL: d.serial,
    MODEL: d.model,
    VENDOR: d.vendor,
    FSTYPE: d.fstype,
    PARTTYPE: null,
    MOUNTPOINT: d.mountpoint,
  };
  return { path: d.devicePath, type: 'disk', bytes, values, children: [...children, ...holders] };
}

/** A device built on the disk: no serial, model or vendor of its own, and raw (not mounted) here. */
function holderRow(path: string, type: string, bytes: number): Row {
  const values = { SERIAL: null, MODEL: null, VENDOR: null, FSTYPE: null, PARTTYPE: null, MOUNTPOINT: null };
  return { path, type, bytes, values, children: [] };
}

function partRow(path: string, bytes: number, fstype: string | null, parttype: string, mountpoint: string | null): Row {
  const values = {
    SERIAL: null,
    MODEL: null,
    VENDOR: null,
    FSTYPE: fstype,
    PARTTYPE: parttype,
    MOUNTPOINT: mountpoint,
  };
  return { path, type: 'part', bytes, values, children: [] };
}

function adminPartitionType(fstype: string | null, mountpoint: string | null): string {
  if (fstype === 'swap') return LINUX_SWAP_TYPE;
  if (fstype === 'vfat' && mountpoint?.startsWith('/boot')) return EFI_SYSTEM_TYPE;
  return LINUX_FILESYSTEM_TYPE;
}

interface Rendered {
  readonly fields: Record<string, string | number | null>;
  readonly children: Rendered[];
}

function render(row: Row, o: LsblkOptions): Rendered {
  const fields: Record<string, string | number | null> = {};
  for (const column of o.columns) {
    let value: string | number | null;
    if (column === 'NAME') value = o.flags.has('--paths') ? row.path : basename(row.path);
    else if (column === 'TYPE') value = row.type;
    else if (column === 'SIZE') value = o.flags.has('--bytes') ? row.bytes : humanSize(row.bytes);
    else value = row.values[column] || null;
    fields[column.toLowerCase()] = value;
  }
  const children = o.flags.has('--nodeps') ? [] : row.children.map((child) => render(child, o));
  return { fields, children };
}

/** As libsmartcols prints JSON: one line per device, its children indented below it. */
function formatRow(row: Rendered, indent: number): string {
  const pad = ' '.repeat(indent);
  const fields = Object.entries(row.fields)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join(', ');
  if (row.children.length === 0) return `${pad}{${fields}}`;
  const children = row.children.map((child) => formatRow(child, indent + 6)).join(',\n');
  return `${pad}{${fields},\n${pad}   "children": [\n${children}\n${pad}   ]\n${pad}}`;
}

/** util-linux's size_to_human_string: powers of 1024, one decimal rounded, "7.5T", "480G". */
export function humanSize(bytes: number): string {
  let exp = 0;
  while (exp < 60 && bytes >= 2 ** (exp + 10)) exp += 10;
  let whole = Math.floor(bytes / 2 ** exp);
  let tenths = 0;
  const frac = bytes - whole * 2 ** exp;
  if (exp > 0 && frac > 0) {
    tenths = Math.floor((Math.floor(frac / 2 ** (exp - 10)) + 50) / 100);
    if (tenths === 10) {
      whole += 1;
      tenths = 0;
    }
  }
  return `${whole}${tenths ? `.${tenths}` : ''}${'BKMGTPE'[exp / 10]}`;
}
