// A node's books, per drive type: the GiB signed for sharing, what the ledger gave containers
// (allocated), the virtual drives found on the devices that no container was given (found), and
// what is left (free). They balance, allocated + found + free = signed, exactly when every claim
// sits on a signed drive of its type within that drive's capacity. A claim on a drive no longer
// signed, or a drive over-committed, unbalances them: that is the lost or double-booked GiB the
// operator promises never to have, and what the chart's alert watches for.
import { driveSpaces } from '../allocation/drive-space.js';
import { DRIVE_TYPES, type DriveType, type PhysicalDrive } from '../allocation/types.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../annotations/shared-drives.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger, ledgerClaims, type AllocationLedger } from './allocation-ledger.js';

/** A drive type, or "unknown" for a drive the compact annotation form lists without one and for a
 * claim on a drive the node does not list. */
export type BooksDriveType = DriveType | 'unknown';

export interface Books {
  signedGiB: number;
  allocatedGiB: number;
  foundGiB: number;
  freeGiB: number;
}

export type NodeBooks = Partial<Record<BooksDriveType, Books>>;

export type NodeBooksResult = { ok: true; books: NodeBooks } | { ok: false; message: string };

const emptyBooks = (): Books => ({ signedGiB: 0, allocatedGiB: 0, foundGiB: 0, freeGiB: 0 });

/** The books of the drives and ledger given; every listed type appears, TLC and QLC always. */
export function ledgerBooks(drives: readonly PhysicalDrive[], ledger: AllocationLedger): NodeBooks {
  const books: NodeBooks = {};
  const of = (type: BooksDriveType): Books => (books[type] ??= emptyBooks());
  for (const type of DRIVE_TYPES) of(type);
  const typeOf = new Map(drives.map((d) => [d.physicalUUID, d.type ?? 'unknown'] as const));
  for (const drive of drives) of(drive.type ?? 'unknown').signedGiB += drive.capacityGiB;
  for (const space of driveSpaces(drives, ledgerClaims(ledger)))
    of(space.drive.type ?? 'unknown').freeGiB += space.availableGiB;
  // A replaced drive (block-drives) is on its device, and counted, until its container removed it.
  for (const { allocation } of Object.values(ledger.containers))
    for (const vd of [...allocation.virtualDrives, ...(allocation.replacedVirtualDrives ?? [])])
      of(typeOf.get(vd.physicalUUID) ?? 'unknown').allocatedGiB += vd.capacityGiB;
  for (const vd of ledger.found) of(typeOf.get(vd.physicalUUID) ?? 'unknown').foundGiB += vd.capacityGiB;
  return books;
}

/** The books a Node's annotations keep; a node without signed drives or ledger has empty books. */
export function nodeBooks(annotations: Readonly<Record<string, string>>): NodeBooksResult {
  const shared = decodeSharedDrivesAnnotation(annotations[SHARED_DRIVES_ANNOTATION] ?? '[]');
  if (!shared.ok) return { ok: false, message: shared.error.message };
  const ledger = decodeLedger(annotations[ALLOCATIONS_ANNOTATION]);
  if (!ledger.ok) return { ok: false, message: ledger.message };
  return { ok: true, books: ledgerBooks(shared.drives, ledger.ledger) };
}

/** Whether allocated + found + free = signed. */
export function balanced(books: Books): boolean {
  return books.allocatedGiB + books.foundGiB + books.freeGiB === books.signedGiB;
}
