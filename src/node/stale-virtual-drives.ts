// The clean-stale-virtual-drives operation's decisions: what its spec asks, which virtual drives
// found on a node's devices are stale (no ledger entry, no status and no Weka cluster claims them),
// and the fingerprint of a stale set, which two passes (or a person) must agree on before anything
// is removed. Types only from the schema: workflows import this file.
import type {
  CLEAN_STALE_VIRTUAL_DRIVES_ACTION as CleanStaleAction,
  CleanStaleVirtualDrivesPayload,
  StaleVirtualDrive,
} from '../api/schemas/wekamanualoperation.js';
import type { FoundVirtualDrive } from './allocation-ledger.js';
import { sha256Hex } from './sha256.js';

export type { StaleVirtualDrive };

const CLEAN_STALE_VIRTUAL_DRIVES_ACTION: typeof CleanStaleAction = 'clean-stale-virtual-drives';
export const DEFAULT_SECOND_PASS_AFTER_SECONDS = 60;
/** Passes that each found another set: the devices keep changing, and the operation stops. */
export const MAX_PASSES = 10;

export interface CleanStaleRequest {
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** false: report only. */
  readonly remove: boolean;
  readonly confirmFingerprint?: string;
  readonly secondPassAfterSeconds: number;
}

export type CleanStaleRequestResult =
  | { readonly ok: true; readonly request: CleanStaleRequest }
  | { readonly ok: false; readonly reason: string; readonly message: string };

export interface CleanStaleSpecInput {
  readonly action: string;
  readonly payload?: { readonly cleanStaleVirtualDrivesPayload?: CleanStaleVirtualDrivesPayload | undefined };
}

const refuse = (reason: string, message: string): CleanStaleRequestResult => ({ ok: false, reason, message });
const payloadName = 'payload.cleanStaleVirtualDrivesPayload';

/** What the spec asks; anything unclear is refused before a device is read. */
export function cleanStaleRequest(spec: CleanStaleSpecInput): CleanStaleRequestResult {
  if (spec.action !== CLEAN_STALE_VIRTUAL_DRIVES_ACTION)
    return refuse(
      'UnsupportedAction',
      `action ${JSON.stringify(spec.action)} is not ${CLEAN_STALE_VIRTUAL_DRIVES_ACTION}`,
    );
  const payload = spec.payload?.cleanStaleVirtualDrivesPayload;
  if (!payload) return refuse('MissingPayload', `${CLEAN_STALE_VIRTUAL_DRIVES_ACTION} needs ${payloadName}`);
  const nodeSelector = payload.nodeSelector ?? {};
  // The CRD rejects this too; checked again because an empty selector would search every node.
  if (Object.keys(nodeSelector).length === 0)
    return refuse(
      'MissingNodeSelector',
      `${CLEAN_STALE_VIRTUAL_DRIVES_ACTION} needs ${payloadName}.nodeSelector with at least one label`,
    );
  const { confirmFingerprint, secondPassAfterSeconds = DEFAULT_SECOND_PASS_AFTER_SECONDS } = payload;
  if (confirmFingerprint !== undefined && !/^[0-9a-f]{64}$/.test(confirmFingerprint))
    return refuse(
      'InvalidFingerprint',
      `confirmFingerprint must be 64 lowercase hex digits, as status.fingerprint shows`,
    );
  if (confirmFingerprint !== undefined && payload.deleteStaleVids !== true)
    return refuse('FingerprintWithoutDelete', 'confirmFingerprint confirms a removal: set deleteStaleVids too');
  if (!Number.isInteger(secondPassAfterSeconds) || secondPassAfterSeconds < 5 || secondPassAfterSeconds > 3600)
    return refuse('InvalidSecondPass', 'secondPassAfterSeconds must be a whole number from 5 to 3600');
  return {
    ok: true,
    request: {
      nodeSelector: { ...nodeSelector },
      remove: payload.deleteStaleVids === true,
      ...(confirmFingerprint !== undefined ? { confirmFingerprint } : {}),
      secondPassAfterSeconds,
    },
  };
}

/** Found drives that no container's status names; the Weka clusters are asked about the rest. */
export function unclaimedFound(
  found: readonly FoundVirtualDrive[],
  namedInStatuses: ReadonlySet<string>,
): StaleVirtualDrive[] {
  return found
    .filter((f) => !namedInStatuses.has(f.virtualUUID))
    .map(({ virtualUUID, physicalUUID, capacityGiB, ownerClusterGUID }) => ({
      virtualUUID,
      physicalUUID,
      capacityGiB,
      ownerClusterGUID,
    }));
}

/**
 * The Weka clusters known to exist: those a drive container says it joined, and those a
 * WekaCluster's status names, under this operator's field (clusterGUID) or the Weka operator's
 * (clusterID), since independent clusters of either operator share the nodes. A virtual drive made
 * for one of them is asked about, never taken for a dead cluster's.
 */
export function knownClusterGUIDs(
  containers: readonly { status?: { clusterGUID?: string | undefined } | undefined }[],
  clusters: readonly { status?: unknown }[],
): Set<string> {
  const known = new Set<string>();
  for (const c of containers) if (c.status?.clusterGUID) known.add(c.status.clusterGUID);
  for (const c of clusters) {
    const status = (c.status ?? {}) as { clusterGUID?: unknown; clusterID?: unknown };
    for (const guid of [status.clusterGUID, status.clusterID]) if (typeof guid === 'string' && guid) known.add(guid);
  }
  return known;
}

/**
 * The fingerprint of the stale sets of every node: the SHA-256 of one line per drive,
 * "node|virtualUUID|physicalUUID|ownerClusterGUID|GiB", sorted, joined by newlines. Any drive
 * added, gone, moved or resized changes it; the order found does not.
 */
export function staleFingerprint(byNode: ReadonlyMap<string, readonly StaleVirtualDrive[]>): string {
  const lines = [...byNode].flatMap(([node, drives]) =>
    drives.map((d) => [node, d.virtualUUID, d.physicalUUID, d.ownerClusterGUID, d.capacityGiB].join('|')),
  );
  return sha256Hex(lines.sort().join('\n'));
}
