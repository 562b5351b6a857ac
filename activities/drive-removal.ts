// Taking one drive, or a container, out of its Weka cluster the way Weka asks for it: deactivate
// it (Weka phases its data out onto the rest of the cluster), wait until it is INACTIVE, then
// remove it. Each pass reads it first, so a retry after a lost answer carries on from where it is;
// a drive or container the cluster no longer has is done.
import {
  containerDeactivateCall,
  containerRemoveCall,
  containerStatusCall,
  hostNotFound,
  nextContainerRemovalStep,
  DRIVE_PHASING_OUT,
  driveDeactivateCall,
  driveDoesNotExist,
  driveRemoveCall,
  driveShowCall,
  nextDriveRemovalStep,
  type WekaCall,
} from '../src/weka/index.js';
import { ApplicationFailure } from '@temporalio/common';
import type { ExecTargetRef } from './types.js';
import type { WekaCli } from './weka-cli.js';

/** Raised while Weka still moves a deactivated drive's data: the teardown waits and asks again. */
export class DrivePhasingOut extends Error {
  override readonly name = DRIVE_PHASING_OUT;
}

export async function takeDriveOut(run: WekaCli, target: ExecTargetRef, uuid: string): Promise<void> {
  // Deactivating, then (the drive read again) removing: two passes when nothing is in the way.
  for (let pass = 0; pass < 2; pass++) {
    const step = nextDriveRemovalStep(await run(target, driveShowCall(uuid)), uuid);
    if (step === 'already-done') return;
    if (typeof step === 'object')
      throw new DrivePhasingOut(`drive ${uuid} is ${step.wait}: Weka is still phasing its data out`);
    const call = step === 'deactivate' ? driveDeactivateCall(uuid) : driveRemoveCall(uuid);
    if ((await runUnlessGone(run, target, call, driveDoesNotExist(uuid))) === 'gone' || step === 'remove') return;
  }
  throw new DrivePhasingOut(`drive ${uuid} was deactivated and is not INACTIVE yet`);
}

/**
 * Takes a container out of its cluster: deactivated first, removed once INACTIVE; while Weka
 * still takes its data away (DEACTIVATING), DrivePhasingOut, and the teardown waits. A container
 * of another name under the ID is a WekaStateConflict.
 */
export async function takeContainerOut(
  run: WekaCli,
  target: ExecTargetRef,
  request: { containerId: number; name?: string },
): Promise<void> {
  const { containerId } = request;
  const gone = hostNotFound(containerId);
  for (let pass = 0; pass < 2; pass++) {
    const step = nextContainerRemovalStep(await run(target, containerStatusCall(containerId)), request);
    if (step === 'already-done') return;
    if (typeof step === 'object' && 'conflict' in step)
      throw ApplicationFailure.nonRetryable(
        `removing container ${containerId} from its cluster: ${step.conflict}`,
        'WekaStateConflict',
      );
    if (typeof step === 'object')
      throw new DrivePhasingOut(`container ${containerId} is ${step.wait}: Weka is still phasing its data out`);
    const call = step === 'deactivate' ? containerDeactivateCall(containerId) : containerRemoveCall(containerId);
    if ((await runUnlessGone(run, target, call, gone)) === 'gone' || step === 'remove') return;
  }
  throw new DrivePhasingOut(`container ${containerId} was deactivated and is not INACTIVE yet`);
}

/** Runs a deactivate or remove; the drive or container gone meanwhile (another attempt removed it) is done. */
async function runUnlessGone(
  run: WekaCli,
  target: ExecTargetRef,
  call: WekaCall<void>,
  gone: RegExp,
): Promise<'ran' | 'gone'> {
  try {
    await run(target, call);
    return 'ran';
  } catch (err) {
    if (gone.test(stderrOf(err))) return 'gone';
    throw err;
  }
}

/** What a failed Weka call printed on stderr (WekaCommandRefused and WekaCommandFailed carry it unquoted). */
export function stderrOf(err: unknown): string {
  const stderr = (err as { stderr?: unknown } | null)?.stderr;
  if (typeof stderr === 'string') return stderr;
  return err instanceof Error ? err.message : String(err);
}
