// Activities of the sign-drives operation: read the operation, find its nodes, sign each node's
// devices for its ssdproxy (inside the proxy pod, probing each device first so a retry never
// signs twice), and publish the signed drives on the node: the shared-drives annotation and the
// capacity resources the scheduler sees.
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
} from '../src/annotations/index.js';
import { reconcileSharedDrives, sharedCapacityGiB, sharedCapacityResources } from '../src/lifecycle/node-drives.js';
import { ALLOCATIONS_ANNOTATION, encodeLedger, reconcileLedger } from '../src/lifecycle/allocation-ledger.js';
import { ledgerOf } from './kube/node-ledger.js';
import { FIELD_MANAGER, proxyName, WEKA_POD_CONTAINER, type ObjectRef } from '../src/lifecycle/names.js';
import { labelSelectorText, signingRefusal } from '../src/lifecycle/sign-drives-request.js';
import {
  NON_RETRYABLE_WEKA_ERRORS,
  planSignProxy,
  showDriveCall,
  signProxyCall,
  type DriveInfo,
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

  /** Probe, sign only an unsigned device, and read back what signing assigned. */
  async function signForProxy(
    target: ExecTargetRef,
    devicePath: string,
  ): Promise<{ drive: ProxySignedDrive; signed: boolean }> {
    const before = await run(target, showDriveCall(devicePath));
    const plan = planSignProxy(before);
    if (typeof plan === 'object') throw new DeviceRefused(plan.conflict);
    // Already signed: the probe read everything the annotation needs.
    let after = before;
    let signedNow = false;
    if (plan === 'run') {
      try {
        await run(target, signProxyCall(devicePath));
        signedNow = true;
      } catch (err) {
        // Refused because another operation signed it since our probe? Then it is done.
        if (!isDeviceRefusal(err)) throw err;
        if (planSignProxy(await run(target, showDriveCall(devicePath))) !== 'already-done') throw err;
      }
      after = await run(target, showDriveCall(devicePath));
    }
    if (after.signature !== 'proxy' || after.physicalUUID === null)
      throw new DeviceRefused(`${devicePath} is not signed for proxy use after signing it`);
    const { physicalUUID, serial, capacityGiB, type } = after;
    return { drive: { physicalUUID, serial, capacityGiB, type, devicePath: after.devicePath }, signed: signedNow };
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
     * Signs one device for proxy use in the node's proxy pod (started again first if it is gone),
     * unless it is signed already. Executed by the node's mutex, so removing an unused proxy never
     * runs in the middle of it. A refusal of the device is its answer; any other failure is
     * retried by Temporal, and answered as SignFailed from the third attempt on, so that a proxy
     * that cannot be reached never holds up the node's mutex for long.
     */
    async signProxyDrive({ node, devicePath, operation }: MutexPayloads['sign-drive']): Promise<MutexOutcome> {
      try {
        showDriveCall(devicePath); // a device path that is no device path is refused before anything is read
        const [op, nodeObject] = await Promise.all([
          api.getOperation(operation),
          orIfMissing(api.core.readNode({ name: node }), null),
        ]);
        const current = op && { uid: op.metadata.uid ?? '', deleting: !!op.metadata.deletionTimestamp, spec: op.spec };
        const refusal = signingRefusal(operation, current, nodeObject?.metadata?.labels ?? {}, devicePath);
        if (refusal !== undefined) {
          deps.logger.warn({ node, devicePath, refusal }, 'refused to sign a device');
          return {
            ok: false,
            error: { type: 'SigningNotRequested', message: `not signing ${devicePath}: ${refusal}` },
          };
        }
        const proxy = await proxies.ensureProxy({ node });
        if (!proxy.ok) return proxy;
        const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
        const { drive, signed } = await signForProxy(target, devicePath);
        deps.logger.info({ node, devicePath, signed, physicalUUID: drive.physicalUUID }, 'device signed for proxy');
        const result: SignedDevice = { drive, signed };
        return { ok: true, result };
      } catch (err) {
        if (isDeviceRefusal(err)) return { ok: false, error: { type: 'DeviceRefused', message: err.message } };
        if (Context.current().info.attempt < SIGN_ATTEMPTS || !(err instanceof Error)) throw err;
        const message = `${devicePath} on node ${node}: ${err.message} (after ${SIGN_ATTEMPTS} attempts)`;
        return { ok: false, error: { type: 'SignFailed', message } };
      }
    },

    /**
     * Reads every device the node lists or just signed, in its proxy pod, and makes the node say
     * what they hold: its shared-drives annotation (keyed by physical UUID), its capacity
     * resources, and its allocation ledger, where a virtual drive on a device that no container
     * was given is counted as taken (found) and the entry of a container that is gone and holds
     * nothing on the devices is forgotten. Executed by the node's mutex, so no allocation is
     * decided while the devices are read.
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
        const text = current.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
        const decoded = decodeSharedDrivesAnnotation(text ?? '[]');
        if (!decoded.ok) {
          // Rewriting it would drop the drives we cannot read; a person has to look at it.
          throw ApplicationFailure.nonRetryable(
            `node ${node}: ${decoded.error.message}; not overwriting it`,
            'MalformedAnnotation',
          );
        }
        const ledger = ledgerOf(current);
        const paths = [...new Set([...decoded.drives, ...drives].map((d) => d.devicePath))];
        const devices = await readDevices(target, paths);
        const present = devices.filter((d) => d.signature === 'proxy' && d.physicalUUID !== null);
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
        let resourceVersion = current.metadata?.resourceVersion;
        const capacity = sharedCapacityGiB(reconciled.drives);
        const resources = sharedCapacityResources(capacity);
        try {
          if (next !== text || nextLedger !== current.metadata?.annotations?.[ALLOCATIONS_ANNOTATION]) {
            const annotations = { [SHARED_DRIVES_ANNOTATION]: next, [ALLOCATIONS_ANNOTATION]: nextLedger };
            const patched = await api.core.patchNode(
              {
                name: node,
                fieldManager: FIELD_MANAGER.nodeSigner,
                body: { metadata: { resourceVersion, annotations } },
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
        const dropped = reconciled.dropped.map((d) => `${d.devicePath} (${d.physicalUUID})`);
        deps.logger.info(
          { node, drives: reconciled.drives.length, ...capacity, found, dropped, forgotten: books.forgotten },
          'published shared drives',
        );
        return {
          driveCount: reconciled.drives.length,
          tlcGiB: capacity.tlc,
          qlcGiB: capacity.qlc,
          found,
          foundGiB: books.ledger.found.reduce((sum, f) => sum + f.capacityGiB, 0),
          dropped,
          forgotten: books.forgotten,
        };
      }
      throw ApplicationFailure.retryable(
        `node ${node} kept changing while its shared drives were published`,
        'NodeConflict',
      );
    },

    async writeOperationStatus({ ref, status }: { ref: ObjectRef; status: OperationStatusUpdate }): Promise<void> {
      // The object is gone: there is no status left to show.
      await orIfMissing(api.applyStatus('WekaManualOperation', ref, { ...status }, FIELD_MANAGER.workflow), undefined);
    },
  };
}
