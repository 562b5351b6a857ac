// The Warning Events of a node's signing that are not its result: the devices it skipped, and what
// reading the devices showed that the node did not say.
import type { NodeDrivesPublished } from '../../activities/types.js';
import type { SkippedDevice } from '../../src/node/device-signing.js';
import type { OperationRun } from '../manual-operation/run.js';

export async function reportSkipped(run: OperationRun, node: string, skipped: readonly SkippedDevice[]): Promise<void> {
  if (skipped.length === 0) return;
  const what = skipped.map((s) => `${s.devicePath} (${s.reason}): ${s.message}`).join('; ');
  await run.status.event('Warning', 'DevicesSkipped', `node ${node}: ${skipped.length} devices not signed: ${what}`);
}

/** What reading the devices showed that the node did not say: found virtual drives, dropped drives. */
export async function reportDrift(run: OperationRun, node: string, published: NodeDrivesPublished): Promise<void> {
  const some = (items: string[]): string =>
    items.slice(0, 5).join(', ') + (items.length > 5 ? ` and ${items.length - 5} more` : '');
  if (published.found.length > 0) {
    const message =
      `node ${node}: ${published.found.length} virtual drives on the devices belong to no WekaContainer and are ` +
      `counted as taken (${published.foundGiB} GiB found in all): ${some(published.found)}`;
    await run.status.event('Warning', 'VirtualDrivesFound', message);
  }
  if (published.dropped.length > 0) {
    const message = `node ${node}: no device reports these drives any more (wiped, signed again or removed); they are no longer shared: ${some(published.dropped)}`;
    await run.status.event('Warning', 'DrivesDropped', message);
  }
}
