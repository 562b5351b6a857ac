// The workflow of a WekaManualOperation (`weka-operation/<uid>`): it runs the operation its action
// names (sign-drives, clean-stale-virtual-drives, rotate-ssdproxy, block-drives, unblock-drives,
// migrate-to-drive-sharing) once, from the spec it read at the start, says
// how it ended on the object, and waits for the object's deletion, which only removes the
// finalizer: nothing an operation did is reverted.
import { upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { WekaPhase, type ObjectWorkflowInput } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { blockDrives } from '../block-drives/index.js';
import { cleanStaleVirtualDrives } from '../clean-stale/index.js';
import { objectState } from '../lifecycle.js';
import { rotateSsdProxy } from '../rotate-proxy/index.js';
import { migrateToDriveSharing } from '../sharing-migration/index.js';
import { signDrives } from '../sign-drives/index.js';
import { letGo } from './end.js';
import { startRun } from './run.js';

const CLEAN_STALE_VIRTUAL_DRIVES = 'clean-stale-virtual-drives';
const ROTATE_SSDPROXY = 'rotate-ssdproxy';
const BLOCK_DRIVES = 'block-drives';
const UNBLOCK_DRIVES = 'unblock-drives';
const MIGRATE_TO_DRIVE_SHARING = 'migrate-to-drive-sharing';

export async function manualOperationWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const run = startRun(input);
  const { ref, status } = run;

  const op = await kubeLocal.readOperation(ref);
  if (!op || op.uid !== input.uid) return; // deleted before we started, or another object now
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaPhase, value: status.phase }]);
  status.observedGeneration = op.generation;
  status.conditions = [...op.status.conditions];

  await run.life.run({
    deleting: op.deleting,
    // Any other action is refused by sign-drives' check of the spec, saying which actions run here.
    bringUp: () => {
      if (op.spec.action === CLEAN_STALE_VIRTUAL_DRIVES) return cleanStaleVirtualDrives(run, op);
      if (op.spec.action === ROTATE_SSDPROXY) return rotateSsdProxy(run, op);
      if (op.spec.action === BLOCK_DRIVES || op.spec.action === UNBLOCK_DRIVES)
        return blockDrives(run, op, op.spec.action === UNBLOCK_DRIVES);
      if (op.spec.action === MIGRATE_TO_DRIVE_SHARING) return migrateToDriveSharing(run, op);
      return signDrives(run, op);
    },
    objectState: async () => objectState(await kubeLocal.readOperation(ref), input.uid),
    teardown: () => letGo(run),
  });
}
