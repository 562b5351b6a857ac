import { compareStrings } from './drive-space.js';
import { type InsufficientDrivesError, type InvalidAllocationRequestError, invalidRequest } from './errors.js';
import type { ContainerDriveClaims, PhysicalDrive } from './types.js';

export interface ExclusiveDrivesRequest {
  /** Serials of the node's drives signed for exclusive use. */
  readonly signedSerials: readonly string[];
  readonly blockedSerials?: readonly string[] | undefined;
  /** Every container on the node, any namespace: exclusive drives and virtual drives alike. */
  readonly claimed: readonly ContainerDriveClaims[];
  /** The node's shared drives; a drive signed for the proxy is never handed out whole. */
  readonly sharedDrives?: readonly PhysicalDrive[] | undefined;
  readonly count: number;
}

export type ExclusiveDrivesResult =
  | { readonly ok: true; readonly serials: string[] }
  | { readonly ok: false; readonly error: InsufficientDrivesError | InvalidAllocationRequestError };

/**
 * Free drives = signed - blocked - every serial claimed on the node (an exclusive drive, or the
 * physical drive under any virtual drive) - shared drives. The lowest serials win, so the choice
 * does not depend on the order the annotation lists them in.
 */
export function allocateExclusiveDrives(request: ExclusiveDrivesRequest): ExclusiveDrivesResult {
  const { count } = request;
  if (!Number.isSafeInteger(count) || count < 0) {
    return {
      ok: false,
      error: invalidRequest(
        'count',
        `the number of exclusive drives must be a whole number of at least 0, got ${count}`,
      ),
    };
  }
  const unavailable = new Set<string>([
    ...(request.blockedSerials ?? []),
    ...(request.sharedDrives ?? []).map((drive) => drive.serial),
  ]);
  for (const claim of request.claimed) {
    for (const serial of claim.exclusiveSerials ?? []) unavailable.add(serial);
    for (const vd of claim.virtualDrives ?? []) if (vd.serial !== undefined) unavailable.add(vd.serial);
  }
  const signed = [...new Set(request.signedSerials)];
  const free = signed.filter((serial) => !unavailable.has(serial)).sort(compareStrings);
  if (free.length < count) {
    return {
      ok: false,
      error: {
        type: 'InsufficientDrives',
        message:
          `not enough free exclusive drives: need ${count}, have ${free.length} ` +
          `(${signed.length} signed, the rest blocked, claimed by a container or shared through the proxy). ` +
          'Sign more drives on this node or lower numDrives.',
        needed: count,
        have: free.length,
      },
    };
  }
  return { ok: true, serials: free.slice(0, count) };
}
