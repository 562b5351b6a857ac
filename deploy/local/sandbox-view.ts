// The sandbox's live progress view, as a pure function of what the apiserver shows: drive
// containers by phase, and per node the GiB given out of the GiB signed, per drive type, and the
// whole drives given out of those signed for exclusive use. ViewPrinter shows the snapshots: on a
// terminal redrawn under the addresses, in a log each change once with a heartbeat between.

export interface ViewContainer {
  namespace: string;
  name: string;
  node: string;
  phase: string;
  /** The WekaCluster it is a member of, if any. */
  cluster?: string | undefined;
  virtualDrives: { capacityGiB: number; type: string; physicalUUID: string }[];
  /** Serials of the whole drives it was given for its exclusive use. */
  wholeDrives?: string[] | undefined;
}

export interface ViewNode {
  name: string;
  drives: { physicalUUID: string; capacityGiB: number; type?: string | undefined }[];
  /** Serials of the node's drives signed for exclusive use. */
  wholeDrives?: string[] | undefined;
  /** Physical UUIDs of its shared drives that are blocked (block-drives): they offer nothing. */
  blocked?: string[] | undefined;
}

export interface ViewCluster {
  namespace: string;
  name: string;
  phase: string;
  guid?: string | undefined;
  /** spec.dynamicTemplate.driveContainers, and the capacity each member asks for. */
  driveContainers?: number | undefined;
  capacity?: string | undefined;
}

export interface SandboxSnapshot {
  clusters: ViewCluster[];
  containers: ViewContainer[];
  nodes: ViewNode[];
  elapsedMs: number;
  stage: string;
}

const pad = (text: string, width: number): string =>
  text.length >= width ? text : text + ' '.repeat(width - text.length);

export function phaseCounts(containers: ViewContainer[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of containers) counts.set(c.phase, (counts.get(c.phase) ?? 0) + 1);
  return new Map([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** GiB given out and GiB offered (signed and not blocked), and GiB blocked, per node and drive type. */
export function nodeUsage(
  node: ViewNode,
  containers: ViewContainer[],
): { type: string; usedGiB: number; totalGiB: number; blockedGiB: number }[] {
  const types = [...new Set(node.drives.map((d) => d.type ?? 'untyped'))].sort();
  const blocked = new Set(node.blocked ?? []);
  const offered = node.drives.filter((d) => !blocked.has(d.physicalUUID));
  const onNode = new Set(offered.map((d) => d.physicalUUID));
  const ofType = (drives: ViewNode['drives'], type: string) =>
    drives.filter((d) => (d.type ?? 'untyped') === type).reduce((s, d) => s + d.capacityGiB, 0);
  return types.map((type) => {
    const usedGiB = containers
      .flatMap((c) => c.virtualDrives)
      .filter((v) => onNode.has(v.physicalUUID) && v.type === type)
      .reduce((s, v) => s + v.capacityGiB, 0);
    const blockedGiB = ofType(
      node.drives.filter((d) => blocked.has(d.physicalUUID)),
      type,
    );
    return { type, usedGiB, totalGiB: ofType(offered, type), blockedGiB };
  });
}

function bar(used: number, total: number, width = 20): string {
  const filled = total === 0 ? 0 : Math.round((used / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

export function renderSnapshot(s: SandboxSnapshot): string {
  const lines: string[] = [];
  lines.push(`weka-drives sandbox — ${s.stage} (${Math.round(s.elapsedMs / 1000)} s)`);
  lines.push('');
  lines.push('Clusters:');
  if (s.clusters.length === 0) lines.push('  (none yet)');
  for (const c of s.clusters) {
    const members = s.containers.filter((m) => m.namespace === c.namespace && m.cluster === c.name);
    const ready = members.filter((m) => m.phase === 'Ready').length;
    const size = c.driveContainers === undefined ? '' : `${ready}/${c.driveContainers} Ready`;
    lines.push(
      `  ${pad(`${c.namespace}/${c.name}`, 28)} ${pad(c.phase, 10)} ${pad(size, 10)} ${pad(c.capacity ?? '', 22)} ${c.guid ?? ''}`,
    );
  }
  lines.push('');
  const counts = phaseCounts(s.containers);
  lines.push(
    `Drive containers: ${s.containers.length}${counts.size ? ` (${[...counts].map(([p, n]) => `${p} ${n}`).join(', ')})` : ''}`,
  );
  for (const c of [...s.containers].sort((x, y) =>
    `${x.namespace}/${x.name}`.localeCompare(`${y.namespace}/${y.name}`),
  )) {
    const gib = c.virtualDrives.reduce((sum, v) => sum + v.capacityGiB, 0);
    const holds = c.wholeDrives?.length
      ? `${c.wholeDrives.length} whole drives`
      : `${c.virtualDrives.length} virtual drives, ${gib} GiB`;
    lines.push(`  ${pad(`${c.namespace}/${c.name}`, 28)} ${pad(c.node, 14)} ${pad(c.phase, 18)} ${holds}`);
  }
  lines.push('');
  lines.push('Nodes (GiB given out of GiB signed and not blocked):');
  for (const n of [...s.nodes].sort((x, y) => x.name.localeCompare(y.name))) {
    const usage = nodeUsage(n, s.containers);
    const whole = n.wholeDrives ?? [];
    if (usage.length === 0 && whole.length === 0) lines.push(`  ${pad(n.name, 14)} no signed drives yet`);
    for (const u of usage) {
      const blocked = u.blockedGiB > 0 ? ` (${u.blockedGiB} GiB blocked)` : '';
      lines.push(
        `  ${pad(n.name, 14)} ${pad(u.type, 4)} ${bar(u.usedGiB, u.totalGiB)} ${u.usedGiB} / ${u.totalGiB}${blocked}`,
      );
    }
    if (whole.length > 0) {
      const given = s.containers.flatMap((c) => c.wholeDrives ?? []).filter((serial) => whole.includes(serial)).length;
      lines.push(
        `  ${pad(n.name, 14)} ${pad('excl', 4)} ${bar(given, whole.length)} ${given} / ${whole.length} whole drives`,
      );
    }
  }
  return lines.join('\n');
}

/** What each member of a cluster asks for, from its template: "12000 GiB" or "4 x 1000 GiB". */
export function templateCapacity(
  t: { containerCapacity?: number; numDrives?: number; driveCapacity?: number } | undefined,
): string | undefined {
  if (t?.containerCapacity !== undefined) return `${t.containerCapacity} GiB each`;
  if (t?.numDrives !== undefined && t.driveCapacity !== undefined)
    return `${t.numDrives} x ${t.driveCapacity} GiB each`;
  if (t?.numDrives !== undefined) return `${t.numDrives} whole drives each`;
  return undefined;
}

/** How often a log (no terminal) hears that the sandbox still runs while nothing changes. */
export const HEARTBEAT_MS = 30_000;

export function heartbeatLine(s: SandboxSnapshot): string {
  const expected = s.clusters.reduce((sum, c) => sum + (c.driveContainers ?? 0), 0);
  const ready = s.containers.filter((c) => c.phase === 'Ready').length;
  return `… ${Math.round(s.elapsedMs / 1000)} s: no change; ${ready} of ${expected} drive containers Ready (${s.stage})`;
}

export interface ViewPrinterOptions {
  /** A terminal gets the view redrawn in place; a log gets each change once. */
  terminal: boolean;
  /** Printed above the view on every redraw (the addresses), so that a redraw never wipes it. */
  header: string;
  write: (text: string) => void;
  heartbeatMs?: number;
}

/** Shows a sequence of snapshots: on a terminal as one screen, redrawn; in a log, each change once. */
export class ViewPrinter {
  private lastShown = '';
  private lastChange = '';
  private lastWriteMs = 0;

  constructor(private readonly options: ViewPrinterOptions) {}

  show(s: SandboxSnapshot, nowMs: number): void {
    const text = renderSnapshot(s);
    if (this.options.terminal) {
      if (text !== this.lastShown) this.options.write(`\x1b[H\x1b[2J${this.options.header}\n${text}\n`);
      this.lastShown = text;
      return;
    }
    // The elapsed seconds alone are no change.
    const change = renderSnapshot({ ...s, elapsedMs: 0 });
    if (change !== this.lastChange) {
      this.options.write(`${text}\n\n`);
      this.lastChange = change;
      this.lastWriteMs = nowMs;
    } else if (nowMs - this.lastWriteMs >= (this.options.heartbeatMs ?? HEARTBEAT_MS)) {
      this.options.write(`${heartbeatLine(s)}\n`);
      this.lastWriteMs = nowMs;
    }
  }
}
