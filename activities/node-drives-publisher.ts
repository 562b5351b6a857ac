// Publishes what a node's devices hold: reads every disk of the node (lsblk on the host) and every
// device its annotations list, in its proxy pod, and makes the node say it: its shared-drives
// annotation (keyed by physical UUID) and its exclusive-drives annotation (serials, in the Weka
// operator's format), the extended resources the scheduler sees, and its allocation ledger, where
// a virtual drive on a device that no container was given is counted as taken (found) and the
// entry of a container that is gone and holds nothing on the devices is forgotten. Run by the
// node's mutex (after signing, and to adopt a node signed by the Weka operator), so no allocation
// is decided while the devices are read.
import { ApplicationFailure } from '@temporalio/activity';
import {
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  encodeSerialsAnnotation,
  encodeSharedDrivesAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  SHARED_DRIVES_ANNOTATION,
  WITHHELD_DRIVES_ANNOTATION,
} from '../src/annotations/index.js';
import {
  ALLOCATIONS_ANNOTATION,
  encodeLedger,
  reconcileLedger,
  type FoundVirtualDrive,
} from '../src/node/allocation-ledger.js';
import { FIELD_MANAGER, proxyName, WEKA_POD_CONTAINER } from '../src/api/names.js';
import { nodeResources, reconcileSharedDrives, sharedCapacityGiB } from '../src/node/node-drives.js';
import { blockedDrivesOf } from '../src/node/blocked-drives.js';
import { listDrivesCall } from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { isConflict, isNotFound, orIfMissing } from './kube/errors.js';
import { ledgerOf } from './kube/node-ledger.js';
import { mergeHeaders, WekaApi } from './kube/weka-api.js';
import { createNodeDecisions } from './node-decisions.js';
import { createStatusActivities } from './status.js';
import type { NodeDrivesPublished } from './types.js';
import { wekaCli } from './weka-cli.js';

/** Conditional writes to a node give up after this many lost races (then the activity is retried). */
const NODE_WRITE_ATTEMPTS = 10;

/** The reason of the Node's Event for virtual drives found on its devices. */
export const VIRTUAL_DRIVES_FOUND = 'VirtualDrivesFound';

export function createNodeDrivesPublisher(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);
  const proxies = createNodeDecisions(deps);
  const events = createStatusActivities(deps);

  /**
   * The node's devices are what `weka-sign-drive list` in its proxy lists. `withheld`:
   * physical UUIDs the node stops offering although their devices are still there (a device set
   * being released); they join the node's withheld drives (WITHHELD_DRIVES_ANNOTATION), which no
   * publish offers again while a device reports them.
   */
  async function publish(node: string, withheld: readonly string[] = []): Promise<NodeDrivesPublished> {
    const proxy = await proxies.ensureProxy({ node });
    if (!proxy.ok) throw ApplicationFailure.nonRetryable(proxy.error.message, proxy.error.type);
    const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
    for (let attempt = 0; attempt < NODE_WRITE_ATTEMPTS; attempt++) {
      const current = await orIfMissing(api.core.readNode({ name: node }), null);
      if (!current) throw ApplicationFailure.nonRetryable(`node ${node} no longer exists`, 'NotFound');
      const annotations = current.metadata?.annotations ?? {};
      const text = annotations[SHARED_DRIVES_ANNOTATION];
      const decoded = decodeSharedDrivesAnnotation(text ?? '[]');
      const exclusiveText = annotations[EXCLUSIVE_DRIVES_ANNOTATION];
      const exclusive = decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, exclusiveText);
      const blocked = blockedDrivesOf(annotations);
      const withheldText = annotations[WITHHELD_DRIVES_ANNOTATION];
      const withheldBefore = decodeSerialsAnnotation(WITHHELD_DRIVES_ANNOTATION, withheldText);
      // Rewriting one that cannot be read would drop its drives; a person has to look at it.
      const unreadable = (error: { message: string }) =>
        ApplicationFailure.nonRetryable(`node ${node}: ${error.message}; not overwriting it`, 'MalformedAnnotation');
      if (!decoded.ok) throw unreadable(decoded.error);
      if (!exclusive.ok) throw unreadable(exclusive.error);
      if (!blocked.ok) throw unreadable(blocked.error);
      if (!withheldBefore.ok) throw unreadable(withheldBefore.error);
      const ledger = ledgerOf(current);
      const devices = await run(target, listDrivesCall());
      const signed = devices.filter((d) => d.signature === 'proxy' && d.physicalUUID !== null);
      // Withheld for as long as a device reports the UUID: wiped, detached or signed anew, it is forgotten.
      const withheldNow = [...new Set([...withheldBefore.serials, ...withheld])].filter((uuid) =>
        signed.some((d) => d.physicalUUID === uuid),
      );
      const present = signed.filter((d) => !withheldNow.includes(d.physicalUUID!));
      const nextWithheld = withheldNow.length > 0 ? encodeSerialsAnnotation(withheldNow) : undefined;
      const exclusiveNow = devices.filter((d) => d.signature === 'exclusive').map((d) => d.serial);
      const reconciled = reconcileSharedDrives(
        decoded.drives,
        present.map((d) => ({
          physicalUUID: d.physicalUUID!,
          serial: d.serial,
          capacityGiB: d.capacityGiB,
          type: d.type,
          devicePath: d.devicePath,
        })),
      );
      const onNode = await api.listContainersOnNode(node);
      const live = new Set(onNode.map((c) => c.metadata.uid ?? ''));
      // What the live containers' statuses show they were given: the ledger's entries a Node
      // registered again lost are proven from the devices and given back (reconcileLedger). Those
      // being deleted too: a release clears the status right after the ledger, in the same node
      // decision, so a status that still shows an allocation was not released, and its space must
      // not be given to another before its teardown releases it.
      const shown = onNode.flatMap((c) =>
        c.status?.allocations && c.metadata.uid
          ? [
              {
                uid: c.metadata.uid,
                container: `${c.metadata.namespace}/${c.metadata.name}`,
                allocation: c.status.allocations,
              },
            ]
          : [],
      );
      const books = reconcileLedger(
        ledger,
        present.map((d) => ({
          physicalUUID: d.physicalUUID!,
          serial: d.serial,
          type: d.type,
          capacityGiB: d.capacityGiB,
          virtualDrives: d.virtualDrives,
        })),
        live,
        shown,
        new Set(exclusiveNow),
      );
      const next = encodeSharedDrivesAnnotation(reconciled.drives);
      const nextLedger = encodeLedger(books.ledger);
      // Left as written when nothing changed, so the Weka operator's order is kept.
      const sameExclusive =
        exclusive.serials.length === new Set(exclusiveNow).size &&
        exclusive.serials.every((s) => exclusiveNow.includes(s));
      const nextExclusive = sameExclusive ? exclusiveText : encodeSerialsAnnotation(exclusiveNow);
      let resourceVersion = current.metadata?.resourceVersion;
      const capacity = sharedCapacityGiB(reconciled.drives);
      const resources = nodeResources(reconciled.drives, exclusiveNow, blocked.blocked);
      try {
        if (
          next !== text ||
          nextLedger !== annotations[ALLOCATIONS_ANNOTATION] ||
          nextExclusive !== exclusiveText ||
          nextWithheld !== withheldText
        ) {
          const patch: Record<string, string | null> = {
            [SHARED_DRIVES_ANNOTATION]: next,
            [ALLOCATIONS_ANNOTATION]: nextLedger,
            [EXCLUSIVE_DRIVES_ANNOTATION]: nextExclusive ?? null,
            [WITHHELD_DRIVES_ANNOTATION]: nextWithheld ?? null,
          };
          const patched = await api.core.patchNode(
            {
              name: node,
              fieldManager: FIELD_MANAGER.nodeSigner,
              body: { metadata: { resourceVersion, annotations: patch } },
            },
            mergeHeaders,
          );
          resourceVersion = patched.metadata?.resourceVersion;
        }
        // Conditional too: a concurrent publisher's larger list must not be undercut by ours.
        await api.core.patchNodeStatus(
          {
            name: node,
            fieldManager: FIELD_MANAGER.nodeSigner,
            body: { metadata: { resourceVersion }, status: { capacity: resources, allocatable: resources } },
          },
          mergeHeaders,
        );
      } catch (err) {
        if (isConflict(err)) continue; // the node changed since we read it: read it all again
        if (isNotFound(err)) throw ApplicationFailure.nonRetryable(`node ${node} no longer exists`, 'NotFound');
        throw err;
      }
      const found = books.found.map((f) => `${f.virtualUUID} (${f.capacityGiB} GiB on ${f.physicalUUID})`);
      const dropped = [
        ...reconciled.dropped.map((d) => `${d.devicePath} (${d.physicalUUID})`),
        ...exclusive.serials.filter((s) => !exclusiveNow.includes(s)).map((s) => `exclusive drive ${s}`),
      ];
      if (books.found.length > 0) await reportFound(node, books.found);
      deps.logger.info(
        {
          node,
          drives: reconciled.drives.length,
          exclusive: exclusiveNow.length,
          ...capacity,
          found,
          dropped,
          forgotten: books.forgotten,
          restored: books.restored,
        },
        'published drives',
      );
      return {
        driveCount: reconciled.drives.length,
        tlcGiB: capacity.tlc,
        qlcGiB: capacity.qlc,
        exclusiveCount: new Set(exclusiveNow).size,
        found,
        foundGiB: books.ledger.found.reduce((sum, f) => sum + f.capacityGiB, 0),
        dropped,
        forgotten: books.forgotten,
        restored: books.restored,
      };
    }
    throw ApplicationFailure.retryable(`node ${node} kept changing while its drives were published`, 'NodeConflict');
  }

  /**
   * A Warning Event on the Node for virtual drives first found on its devices: whoever read them (a
   * sign-drives operation, a ledger rebuild), `kubectl describe node` says what is counted as taken.
   * The ledger is written by then, so an Event that cannot be recorded is only logged.
   */
  async function reportFound(node: string, found: readonly FoundVirtualDrive[]): Promise<void> {
    const gib = found.reduce((sum, f) => sum + f.capacityGiB, 0);
    const listed = found.map(
      (f) => `${f.virtualUUID} (${f.capacityGiB} GiB on ${f.physicalUUID}, cluster ${f.ownerClusterGUID || 'unknown'})`,
    );
    const message =
      `${found.length} virtual drives (${gib} GiB) on the node's devices belong to no drive container its ledger knows: ` +
      `counted as taken, so nothing is allocated over them (weka_drives_node_capacity_bytes{state="found"}): ${listed.join(', ')}`;
    try {
      await events.recordNodeEvent({ node, type: 'Warning', reason: VIRTUAL_DRIVES_FOUND, message });
    } catch (err) {
      deps.logger.warn(
        { node, err, found: listed },
        'could not record the Event of the virtual drives found on the node',
      );
    }
  }

  return { publish };
}
