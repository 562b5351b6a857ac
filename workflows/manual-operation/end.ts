// How an operation ends: Refused or Failed with why, or, once it is deleted, let go of.
import { kubeLocal } from '../activities.js';
import type { OperationRun } from './run.js';

/** Ends the operation Failed: Succeeded=False and Stalled=True with why, until a person deletes it. */
export async function fail(run: OperationRun, reason: string, message: string, step: string): Promise<void> {
  await run.status.condition('Succeeded', 'False', reason, message, 'Warning');
  await run.status.enter('Failed', step, { kind: 'stalled', reason, message });
}

/** Ends the operation Refused: Accepted=False and Stalled=True with why, until a person deletes it. */
export async function refuse(run: OperationRun, reason: string, message: string): Promise<void> {
  run.status.stage('Accepted', 'False', reason, message, 'Warning');
  await run.status.enter('Refused', `refused: ${message}`, { kind: 'stalled', reason, message });
}

/** Nothing an operation did is reverted: a deleted operation only lets go of its finalizer. */
export async function letGo(run: OperationRun): Promise<void> {
  const current = await kubeLocal.readOperation(run.ref);
  if (!current || current.uid !== run.uid) return;
  run.status.step = 'deleted: nothing to undo (an operation is not reverted); removing the finalizer';
  await kubeLocal.removeFinalizer({ kind: 'WekaManualOperation', ref: run.ref, uid: run.uid });
}
