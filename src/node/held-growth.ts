// A node's decision for a container that already holds an allocation: the same one again, grown
// when its request now asks for more. What it holds is never taken away or changed: a growth that
// does not fit leaves the allocation as it is and says why, as the part of the answer still
// pending, and the container waits for capacity (or a spec change) holding what it has.
import { allocateGrowth, growthWanted, type PhysicalDrive, type UuidSource } from '../allocation/index.js';
import type { WekaCluster, WekaContainer } from '../api/index.js';
import type { AllocationSettings } from '../allocation/settings.js';
import { ledgerClaims, type AllocationLedger } from './allocation-ledger.js';
import type { AllocationRefusal, ContainerAllocation } from '../allocation/types.js';
import { allocationRequest, usesDriveSharing } from './requests.js';

export interface HeldDecision {
  /** What the container holds after the decision: `held`, or `held` with new virtual drives after it. */
  allocation: ContainerAllocation;
  /** Why a growth the request asks for was not made (yet). */
  pending?: { error: AllocationRefusal; waitForCapacity: boolean };
}

export interface HeldInput {
  held: ContainerAllocation;
  container: WekaContainer;
  /** Its cluster (null: it names one that does not exist; undefined: standalone). */
  cluster: WekaCluster | null | undefined;
  /** The node's shared drives, or the refusal that says why there are none to read. */
  drives: { ok: true; drives: PhysicalDrive[] } | { ok: false; error: AllocationRefusal; waitForCapacity: boolean };
  ledger: AllocationLedger;
  settings: AllocationSettings;
  /** Whether an allocator error should make the requester wait for capacity (see node-allocations). */
  waitsForNode: (error: { type: string; field?: string }) => boolean;
}

export function decideForHeld(input: HeldInput, newUuid: UuidSource): HeldDecision {
  const { held, container, cluster } = input;
  const template = cluster?.spec.dynamicTemplate;
  if (cluster === null || !usesDriveSharing(container.spec, template)) return { allocation: held };
  const request = allocationRequest(container.spec, template);
  if (growthWanted(held.virtualDrives, request) === 0) return { allocation: held };
  if (!input.drives.ok) return { allocation: held, pending: { ...input.drives } };
  const result = allocateGrowth(
    {
      physicalDrives: input.drives.drives,
      // Its own virtual drives count as taken too: they stay where they are.
      claimed: ledgerClaims(input.ledger),
      held: held.virtualDrives,
      request,
      settings: input.settings,
    },
    newUuid,
  );
  if (!result.ok) {
    const error = { ...result.error } as AllocationRefusal;
    return { allocation: held, pending: { error, waitForCapacity: input.waitsForNode(result.error) } };
  }
  if (result.virtualDrives.length === 0) return { allocation: held };
  return { allocation: { ...held, virtualDrives: [...held.virtualDrives, ...result.virtualDrives] } };
}
