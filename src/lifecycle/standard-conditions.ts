// The conditions every kind carries for tools that judge health without knowing the kind: kstatus
// (sigs.k8s.io/cli-utils, which Flux, Argo CD, kpt and `kubectl apply --wait` build on) reads an
// object as InProgress while Reconciling is True, Failed while Stalled is True, and Current
// otherwise; `kubectl wait --for=condition=Ready` reads Ready. They are derived from where the
// lifecycle stands, so each kind states them the same way.
import type { Condition } from '../api/index.js';
import { setCondition } from './conditions.js';

/** The conditions derived here on every status (Ready too, when the lifecycle set none of its own). */
export const STANDARD_CONDITION_TYPES: ReadonlySet<string> = new Set(['Reconciling', 'Stalled']);

/** Where a lifecycle stands. */
export type Progress =
  /** Nothing is left to do for the spec as it is. */
  | { readonly kind: 'settled' }
  /** Working toward the spec, or waiting for something that comes without a person (capacity, a pod). */
  | { readonly kind: 'working'; readonly reason: string; readonly message: string }
  /** Cannot go on until a person changes something (the spec, an allow-list, another object). */
  | { readonly kind: 'stalled'; readonly reason: string; readonly message: string };

/**
 * Failures no retry fixes without a person: an image the operator may not run, an exec the
 * apiserver forbids (RBAC, an admission policy), an object the operator cannot read as valid, Weka
 * state that belongs to someone else.
 */
const PERSON_NEEDED = new Set(['ImageNotAllowed', 'ExecForbidden', 'InvalidObject', 'WekaStateConflict']);

export function needsAPerson(errorType: string | undefined): boolean {
  return errorType !== undefined && PERSON_NEEDED.has(errorType);
}

/** The reason of Ready=True and Reconciling=False once nothing is left to do. */
const SETTLED_REASON = 'Reconciled';

/** Phases in which a lifecycle has nothing left to do, unless it says otherwise. */
const SETTLED_PHASES = new Set(['Ready', 'Succeeded', 'Deleted']);
/** Phases that wait for a person. */
const STALLED_PHASES = new Set(['Refused', 'Failed']);

/**
 * How a lifecycle in `phase` at `step` stands when its workflow did not say: refused and failed
 * phases wait for a person (with the reason of the Stalled condition they already show, if any),
 * Ready, Succeeded and Deleted have nothing left to do, every other phase is at work.
 */
export function progressOfPhase(phase: string, step: string, conditions: readonly Condition[]): Progress {
  if (STALLED_PHASES.has(phase)) {
    const shown = conditions.find((c) => c.type === 'Stalled' && c.status === 'True');
    return { kind: 'stalled', reason: shown?.reason ?? phase, message: shown?.message ?? step };
  }
  if (SETTLED_PHASES.has(phase)) return { kind: 'settled' };
  return { kind: 'working', reason: phase, message: step };
}

/**
 * The progress a new run resumes from: what the conditions it restores say (a Ready container
 * whose growth waits shows Reconciling, a refused one Stalled), so that the new run's first apply
 * does not flip them before it reaches the same wait again.
 */
export function progressOfConditions(phase: string, step: string, conditions: readonly Condition[]): Progress {
  const stalled = conditions.find((c) => c.type === 'Stalled' && c.status === 'True');
  if (stalled) return { kind: 'stalled', reason: stalled.reason, message: stalled.message };
  const working = conditions.find((c) => c.type === 'Reconciling' && c.status === 'True');
  if (working && SETTLED_PHASES.has(phase))
    return { kind: 'working', reason: working.reason, message: working.message };
  return progressOfPhase(phase, step, conditions);
}

/**
 * Whether `conditions`' Ready was derived here rather than set by the lifecycle: True with the
 * settled reason, or False with the reason and message of the True Reconciling or Stalled beside it.
 * Such a Ready is derived afresh at each apply.
 */
export function readyIsDerived(conditions: readonly Condition[]): boolean {
  const ready = conditions.find((c) => c.type === 'Ready');
  if (!ready) return false;
  if (ready.status === 'True') return ready.reason === SETTLED_REASON;
  return conditions.some(
    (c) =>
      (c.type === 'Reconciling' || c.type === 'Stalled') &&
      c.status === 'True' &&
      c.reason === ready.reason &&
      c.message === ready.message,
  );
}

/**
 * `conditions` with Reconciling and Stalled set from `progress`, and Ready derived when the
 * lifecycle set none of its own: True once settled, else False saying what it works on or waits for.
 */
export function withStandardConditions(
  conditions: readonly Condition[],
  progress: Progress,
  o: { phase: string; observedGeneration: number; nowIso: string },
): Condition[] {
  const at = (list: Condition[], type: string, status: 'True' | 'False', reason: string, message: string) =>
    setCondition(list, { type, status, reason, message, observedGeneration: o.observedGeneration }, o.nowIso);
  const hasOwnReady = conditions.some((c) => c.type === 'Ready') && !readyIsDerived(conditions);
  let out = [...conditions];
  if (progress.kind === 'working') out = at(out, 'Reconciling', 'True', progress.reason, progress.message);
  else {
    const why = progress.kind === 'stalled' ? 'waits for a person' : 'nothing left to do';
    out = at(out, 'Reconciling', 'False', progress.kind === 'stalled' ? 'Stalled' : SETTLED_REASON, why);
  }
  if (progress.kind === 'stalled') out = at(out, 'Stalled', 'True', progress.reason, progress.message);
  else out = at(out, 'Stalled', 'False', 'NotStalled', 'nothing waits for a person');
  if (!hasOwnReady) {
    if (progress.kind === 'settled') out = at(out, 'Ready', 'True', SETTLED_REASON, `${o.phase}: nothing left to do`);
    else out = at(out, 'Ready', 'False', progress.reason, progress.message);
  }
  return out;
}
