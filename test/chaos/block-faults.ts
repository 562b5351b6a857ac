// A fault of a drive that fails: block-drives on one of a node's shared drives, while the rollout
// and the other faults go on. Every virtual drive on it moves to the node's other drives (or stays,
// said so, when none has the room); once the operation ends, unblock-drives gives the drive back so
// that the world keeps its capacity. The invariants at rest then check that no drive was lost,
// double-booked, or left behind on the blocked drive by a replacement that finished. Both
// operations are over, and deleted, before the promise resolves.
import { CoreV1Api } from '@kubernetes/client-node';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { driveSpaces } from '../../src/allocation/drive-space.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger, ledgerClaims } from '../../src/node/allocation-ledger.js';
import type { Random } from '../support/random.js';
import { createOperation, operationEnded, readOperation, removeOperation } from './operation-faults.js';
import { retried } from './forced-faults.js';
import type { ChaosWorld } from './world.js';

/** How long a block may take (the replacements, Weka's phase-outs) before the fault gives up on it. */
const BLOCK_LIMIT_MS = 240_000;

export async function blockDrive(world: ChaosWorld, random: Random): Promise<string> {
  const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
  const read = await retried('reading the node', () =>
    world.cp.kubeConfig().makeApiClient(CoreV1Api).readNode({ name: node }),
  );
  const shared = decodeSharedDrivesAnnotation(read.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
  const drives = shared.ok ? shared.drives : [];
  if (drives.length === 0) return `block-drives on ${node}: it has no shared drive`;
  // A drive whose virtual drives the others have the room for when there is one (replacements
  // are what the fault is for); a full node gives the kept-drives path instead.
  const ledger = decodeLedger(read.metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
  const spaces = driveSpaces(drives, ledger.ok ? ledgerClaims(ledger.ledger) : []);
  const roomy = spaces.filter(
    (s) =>
      s.claimedGiB > 0 &&
      spaces.filter((o) => o !== s && o.drive.type === s.drive.type).reduce((sum, o) => sum + o.availableGiB, 0) >=
        s.claimedGiB,
  );
  const pool = roomy.length > 0 ? roomy.map((s) => s.drive) : drives;
  const drive = pool[random.int(0, pool.length - 1)]!;
  const payload = { blockDrivesPayload: { node, physicalUUIDs: [drive.physicalUUID] } };
  const block = await createOperation(world, random, 'block-drives', { action: 'block-drives', payload });
  const done = await operationEnded(world, block, `block-drives on ${node} to finish`, BLOCK_LIMIT_MS);
  const last = done ?? (await readOperation(world, block));
  const rows = last?.status?.results?.[0]?.replacements ?? [];
  const states = new Map<string, number>();
  for (const r of rows) states.set(r.state, (states.get(r.state) ?? 0) + 1);
  const reason = last?.status?.conditions?.find((c) => c.type === (done ? 'Succeeded' : 'Accepted'))?.reason;
  await removeOperation(world, block);
  // Given back, whatever the block did: a block still running was stopped by its deletion.
  const unblock = await createOperation(world, random, 'unblock-drives', { action: 'unblock-drives', payload });
  const freed = await operationEnded(world, unblock, `unblock-drives on ${node} to finish`, 60_000);
  await removeOperation(world, unblock);
  const phase = done
    ? done.status?.phase
    : `still ${last?.status?.phase ?? '?'} after ${BLOCK_LIMIT_MS / 1000} s, deleted`;
  const summary = [...states].map(([state, n]) => `${n} ${state}`).join(', ') || 'no virtual drive on it';
  return (
    `block-drives on ${node} ${drive.devicePath} (${drive.physicalUUID}): ${phase} (${reason ?? '?'}), ${summary}; ` +
    `unblock-drives: ${freed?.status?.phase ?? 'did not end'}`
  );
}
