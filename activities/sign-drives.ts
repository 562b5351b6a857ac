// Activities of the sign-drives operation: read the operation, find its nodes, choose each node's
// devices, sign each for the ssdproxy or for exclusive use (inside the proxy pod, probing each
// device first so a retry never signs twice, and skipping what signing would destroy unasked), and
// publish the signed drives on the node: its annotations and the resources the scheduler sees.
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  BLOCKED_DRIVES_ANNOTATION,
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  encodeSerialsAnnotation,
  encodeSharedDrivesAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  exclusiveDrivesResource,
  SHARED_DRIVES_ANNOTATION,
} from '../src/annotations/index.js';
import { reconcileSharedDrives, sharedCapacityGiB, sharedCapacityResources } from '../src/lifecycle/node-drives.js';
import { ALLOCATIONS_ANNOTATION, encodeLedger, reconcileLedger } from '../src/lifecycle/allocation-ledger.js';
import { ledgerOf } from './kube/node-ledger.js';
import { FIELD_MANAGER, proxyName, WEKA_POD_CONTAINER, type ObjectRef } from '../src/lifecycle/names.js';
import { labelSelectorText, signingRequestFor } from '../src/lifecycle/sign-drives-request.js';
import {
  chooseDevices,
  nothingChosenMessage,
  refusalSkip,
  signingVerdict,
  type SigningMode,
  type SkippedDevice,
} from '../src/lifecycle/device-signing.js';
import {
  listBlockDevicesCall,
  NON_RETRYABLE_WEKA_ERRORS,
  showDriveCall,
  signExclusiveCall,
  signProxyCall,
  type DriveInfo,
  type SignFlag,
} from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { isConflict, isNotFound, orIfMissing } from './kube/errors.js';
import { mergeHeaders, snapshotOf, WekaApi } from './kube/weka-api.js';
import type {
  ExecTargetRef,
  NodeDrivesPublished,
  SignedDevice,
  OperationSnapshot,
  OperationStatusUpdate,
} from './types.js';
import { wekaCli } from './weka-cli.js';
import type { MutexOutcome, MutexPayloads, ProxySignedDrive } from '../src/protocol.js';
import { createNodeDecisions } from './node-decisions.js';

/** Attempts at signing one device before a failure other than the device's refusal is its answer. */
const SIGN_ATTEMPTS = 3;
/** Conditional writes to a node give up after this many lost races (then the activity is retried). */
const NODE_WRITE_ATTEMPTS = 10;

/** A device whose state rules signing out; signing it again would be refused the same way. */
class DeviceRefused extends Error {}

/** Errors about one device that retrying cannot fix: recorded for that device, the others go on. */
function isDeviceRefusal(err: unknown): err is Error {
  return err instanceof DeviceRefused || (err instanceof Error && NON_RETRYABLE_WEKA_ERRORS.includes(err.name));
}

export function createSignDrivesActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);
  const proxies = createNodeDecisions(deps);

  /**
   * Signs one device as the verdict says, unless a retry finds it signed already, and reads back
   * what signing assigned. A refusal of the tool is the device's answer: it is skipped.
   */
  async function signDevice(
    target: ExecTargetRef,
    mode: SigningMode,
    before: DriveInfo,
    flags: SignFlag[],
  ): Promise<{ drive: ProxySignedDrive; signed: boolean } | { skipped: SkippedDevice }> {
    const devicePath = before.devicePath;
    let after = before;
    let signedNow = false;
    if (before.signature !== mode) {
      try {
        await run(target, mode === 'proxy' ? signProxyCall(devicePath, flags) : signExclusiveCall(devicePath, flags));
        signedNow = true;
      } catch (err) {
        if (!isDeviceRefusal(err)) throw err;
        // Refused because an earlier attempt, or another operation, signed it since our probe? Then it is done.
        if ((await run(target, showDriveCall(devicePath))).signature !== mode)
          return { skipped: refusalSkip(devicePath, err.message) };
      }
      after = await run(target, showDriveCall(devicePath));
    }
    if (after.signature !== mode || after.physicalUUID === null)
      throw new DeviceRefused(`${devicePath} is not signed for ${mode} use after signing it`);
    const { physicalUUID, serial, capacityGiB, type } = after;
    return { drive: { physicalUUID, serial, capacityGiB, type, devicePath: after.devicePath }, signed: signedNow };
  }

  /** Serials that a container on the node holds: its exclusive drives, and the drives under its virtual drives. */
  async function heldSerials(node: string): Promise<Set<string>> {
    const held = new Set<string>();
    for (const c of await api.listContainersOnNode(node)) {
      for (const serial of c.status?.allocations?.drives ?? []) held.add(serial);
      for (const vd of c.status?.allocations?.virtualDrives ?? []) if (vd.serial) held.add(vd.serial);
    }
    return held;
  }

  /** What each device reports; a device the proxy cannot find is left out (it is not there). */
  async function readDevices(target: ExecTargetRef, paths: readonly string[]): Promise<DriveInfo[]> {
    const read: DriveInfo[] = [];
    for (const path of paths) {
      try {
        read.push(await run(target, showDriveCall(path)));
      } catch (err) {
        if (!isDeviceRefusal(err)) throw err;
        deps.logger.warn({ device: path, err: err.message }, 'a listed device cannot be read; it is left out');
      }
    }
    return read;
  }

  return {
    async readOperation(ref: ObjectRef): Promise<OperationSnapshot | null> {
      const op = await api.getOperation(ref);
      if (!op) return null;
      return {
        ...snapshotOf<OperationSnapshot['spec']>(op),
        status: { conditions: [...(op.status?.conditions ?? [])] },
      };
    },

    /** Names of the nodes whose labels match every entry of the selector, sorted. */
    async listSelectedNodes({ nodeSelector }: { nodeSelector: Record<string, string> }): Promise<string[]> {
      // An empty selector selects every node: never what a signing operation means.
      if (Object.keys(nodeSelector).length === 0)
        throw ApplicationFailure.nonRetryable('an empty node selector would sign every node', 'InvalidObject');
      const list = await api.core.listNode({ labelSelector: labelSelectorText(nodeSelector) });
      return list.items
        .map((n) => n.metadata?.name ?? '')
        .filter((name) => name !== '')
        .sort();
    },

    /**
     * Signs one device in the node's proxy pod (started again first if it is gone), for the proxy or
     * for exclusive use as the operation asks, unless it is signed so already. Executed by the
     * node's mutex, so removing an unused proxy never runs in the middle of it. The device is
     * checked against the operation and the node as they are now: the operation must choose it,
     * and nothing on it may be lost unless the operation says so (device-signing.ts); otherwise it
     * is skipped, with the reason. Any other failure is retried by Temporal, and answered as
     * SignFailed from the third attempt on, so that a proxy that cannot be reached never holds up
     * the node's mutex for long.
     */
    async signDrive({ node, devicePath, operation }: MutexPayloads['sign-drive']): Promise<MutexOutcome> {
      try {
        showDriveCall(devicePath); // a device path that is no device path is refused before anything is read
        const [op, nodeObject] = await Promise.all([
          api.getOperation(operation),
          orIfMissing(api.core.readNode({ name: node }), null),
        ]);
        const current = op && { uid: op.metadata.uid ?? '', deleting: !!op.metadata.deletionTimestamp, spec: op.spec };
        const asked = signingRequestFor(operation, current, nodeObject?.metadata?.labels ?? {});
        const notAsked = (why: string): MutexOutcome => {
          deps.logger.warn({ node, devicePath, refusal: why }, 'refused to sign a device');
          return { ok: false, error: { type: 'SigningNotRequested', message: `not signing ${devicePath}: ${why}` } };
        };
        if (!asked.ok) return notAsked(asked.refusal);
        const { request } = asked;
        const proxy = await proxies.ensureProxy({ node });
        if (!proxy.ok) return proxy;
        const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
        const devices = await run(target, listBlockDevicesCall());
        const choice = chooseDevices(request.type, request.devicePaths, devices);
        const named = choice.skipped.find((s) => s.devicePath === devicePath);
        if (named) return { ok: true, result: { skipped: named } satisfies SignedDevice };
        const device = devices.find((d) => d.path === devicePath);
        if (!device || !choice.chosen.includes(devicePath))
          return notAsked(`the operation's ${request.type} does not choose it on node ${node}`);
        const info = await run(target, showDriveCall(devicePath));
        const verdict = signingVerdict({
          mode: request.mode,
          device,
          info,
          options: request.options,
          heldSerials: await heldSerials(node),
        });
        if (verdict.action === 'skip') {
          const skipped = { devicePath, reason: verdict.reason, message: verdict.message };
          deps.logger.warn({ node, ...skipped }, 'device skipped');
          return { ok: true, result: { skipped } satisfies SignedDevice };
        }
        const flags = verdict.action === 'sign' ? verdict.flags : [];
        const outcome = await signDevice(target, request.mode, info, flags);
        if ('skipped' in outcome) {
          deps.logger.warn({ node, ...outcome.skipped }, 'device skipped: the sign tool refused it');
          return { ok: true, result: outcome satisfies SignedDevice };
        }
        const erased = verdict.action === 'sign' && outcome.signed ? verdict.erases : [];
        deps.logger.info(
          {
            node,
            devicePath,
            mode: request.mode,
            signed: outcome.signed,
            erased,
            physicalUUID: outcome.drive.physicalUUID,
          },
          'device signed',
        );
        const result: SignedDevice = { ...outcome, mode: request.mode, erased };
        return { ok: true, result };
      } catch (err) {
        if (isDeviceRefusal(err)) return { ok: false, error: { type: 'DeviceRefused', message: err.message } };
        if (Context.current().info.attempt < SIGN_ATTEMPTS || !(err instanceof Error)) throw err;
        const message = `${devicePath} on node ${node}: ${err.message} (after ${SIGN_ATTEMPTS} attempts)`;
        return { ok: false, error: { type: 'SignFailed', message } };
      }
    },

    /** The devices the operation chooses on the node, read in its proxy pod (lsblk on the host). */
    async chooseNodeDevices({
      node,
      operation,
    }: {
      node: string;
      operation: ObjectRef & { uid: string };
    }): Promise<{ chosen: string[]; skipped: SkippedDevice[]; nothingChosen?: string }> {
      const [op, nodeObject] = await Promise.all([
        api.getOperation(operation),
        orIfMissing(api.core.readNode({ name: node }), null),
      ]);
      const current = op && { uid: op.metadata.uid ?? '', deleting: !!op.metadata.deletionTimestamp, spec: op.spec };
      const asked = signingRequestFor(operation, current, nodeObject?.metadata?.labels ?? {});
      if (!asked.ok) throw ApplicationFailure.nonRetryable(asked.refusal, 'SigningNotRequested');
      const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
      const devices = await run(target, listBlockDevicesCall());
      const choice = chooseDevices(asked.request.type, asked.request.devicePaths, devices);
      if (choice.chosen.length > 0) return choice;
      return { ...choice, nothingChosen: nothingChosenMessage(asked.request.type, devices) };
    },

    /**
     * Reads every disk of the node and every device its annotations list, in its proxy pod, and
     * makes the node say what they hold: its shared-drives annotation (keyed by physical UUID) and
     * its exclusive-drives annotation (serials, in the Weka operator's format), the extended
     * resources the scheduler sees, and its allocation ledger, where a virtual drive on a device
     * that no container was given is counted as taken (found) and the entry of a container that is
     * gone and holds nothing on the devices is forgotten. Executed by the node's mutex, so no
     * allocation is decided while the devices are read.
     */
    async publishNodeDrives({
      node,
      drives,
    }: {
      node: string;
      drives: ProxySignedDrive[];
    }): Promise<NodeDrivesPublished> {
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
        const blocked = decodeSerialsAnnotation(BLOCKED_DRIVES_ANNOTATION, annotations[BLOCKED_DRIVES_ANNOTATION]);
        for (const d of [decoded, exclusive, blocked]) {
          // Rewriting it would drop the drives we cannot read; a person has to look at it.
          if (!d.ok)
            throw ApplicationFailure.nonRetryable(
              `node ${node}: ${d.error.message}; not overwriting it`,
              'MalformedAnnotation',
            );
        }
        if (!decoded.ok || !exclusive.ok || !blocked.ok) throw new Error('unreachable');
        const ledger = ledgerOf(current);
        const disks = (await run(target, listBlockDevicesCall())).filter((d) => d.type === 'disk').map((d) => d.path);
        const paths = [
          ...new Set([...disks, ...decoded.drives.map((d) => d.devicePath), ...drives.map((d) => d.devicePath)]),
        ];
        const devices = await readDevices(target, paths);
        const present = devices.filter((d) => d.signature === 'proxy' && d.physicalUUID !== null);
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
        const live = new Set((await api.listContainersOnNode(node)).map((c) => c.metadata.uid ?? ''));
        const books = reconcileLedger(
          ledger,
          present.map((d) => ({ physicalUUID: d.physicalUUID!, virtualDrives: d.virtualDrives })),
          live,
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
        const resources = {
          ...sharedCapacityResources(capacity),
          ...exclusiveDrivesResource(exclusiveNow, blocked.serials),
        };
        try {
          if (next !== text || nextLedger !== annotations[ALLOCATIONS_ANNOTATION] || nextExclusive !== exclusiveText) {
            const patch: Record<string, string | null> = {
              [SHARED_DRIVES_ANNOTATION]: next,
              [ALLOCATIONS_ANNOTATION]: nextLedger,
              [EXCLUSIVE_DRIVES_ANNOTATION]: nextExclusive ?? null,
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
        deps.logger.info(
          {
            node,
            drives: reconciled.drives.length,
            exclusive: exclusiveNow.length,
            ...capacity,
            found,
            dropped,
            forgotten: books.forgotten,
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
        };
      }
      throw ApplicationFailure.retryable(`node ${node} kept changing while its drives were published`, 'NodeConflict');
    },

    async writeOperationStatus({ ref, status }: { ref: ObjectRef; status: OperationStatusUpdate }): Promise<void> {
      // The object is gone: there is no status left to show.
      await orIfMissing(api.applyStatus('WekaManualOperation', ref, { ...status }, FIELD_MANAGER.workflow), undefined);
    },
  };
}
