// What a teardown says while Weka phases a deactivated drive's data out onto the cluster's other
// drives before the drive can be removed. It never forces the removal (that would lose the data
// of a cluster short of redundancy); past a limit it warns once, so that a person looks.

/** How long a phase-out may take before the teardown warns (an Event) that it is slow. */
export const PHASE_OUT_WARN_AFTER_MS = 30 * 60_000;

export interface PhaseOutReport {
  /** For the DrivesPhasingOut condition. */
  message: string;
  /** True once, when the wait first passes PHASE_OUT_WARN_AFTER_MS. */
  warn: boolean;
}

/** `startedMs`: when the teardown first found a drive phasing out; `warned`: whether it warned already. */
export function phaseOutReport(o: { what: string; startedMs: number; nowMs: number; warned: boolean }): PhaseOutReport {
  const waitedMs = Math.max(0, o.nowMs - o.startedMs);
  const minutes = Math.floor(waitedMs / 60_000);
  const since = minutes < 1 ? 'less than a minute' : `${minutes} min`;
  const message =
    `Weka is moving the data of a deactivated drive to the cluster's other drives before the drive ` +
    `can be removed (${o.what}); waiting for ${since}, never forcing it`;
  return { message, warn: !o.warned && waitedMs >= PHASE_OUT_WARN_AFTER_MS };
}
