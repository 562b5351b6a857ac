// Activities of the sign-drives operation: read the operation, find its nodes, choose each node's
// devices, sign each for the ssdproxy or for exclusive use (inside the proxy pod, probing each
// device first so a retry never signs twice, and skipping what signing would destroy unasked), and
// publish the signed drives on the node: its annotations and the resources the scheduler sees.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { proxyName, WEKA_POD_CONTAINER, type ObjectRef } from '../src/api/names.js';
import { labelSelectorText, signingRequestFor, type SigningOperationRef } from '../src/node/sign-drives-request.js';
import {
  chooseDevices,
  nothingChosenMessage,
  refusalSkip,
  signingVerdict,
  type SigningMode,
  type SkippedDevice,
} from '../src/node/device-signing.js';
import {
  listBlockDevicesCall,
  NON_RETRYABLE_WEKA_ERRORS,
  readDriveCall,
  signExclusiveCall,
  signProxyCall,
  validDevicePath,
  type DriveInfo,
  type SignFlag,
} from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { orIfMissing } from './kube/errors.js';
import { snapshotOf, WekaApi } from './kube/weka-api.js';
import type { ExecTargetRef, NodeDrivesPublished, SignedDevice, OperationSnapshot } from './types.js';
import { wekaCli, type WekaCli } from './weka-cli.js';
import type { MutexOutcome, MutexPayloads, ProxySignedDrive } from '../src/protocol.js';
import { createNodeDecisions, proxyUsers } from './node-decisions.js';
import { createNodeDrivesPublisher } from './node-drives-publisher.js';

/** Attempts at signing one device before a failure other than the device's refusal is its answer. */
const SIGN_ATTEMPTS = 3;

/** A device whose state rules signing out; signing it again would be refused the same way. */
class DeviceRefused extends Error {}

/** Errors about one device that retrying cannot fix: recorded for that device, the others go on. */
function isDeviceRefusal(err: unknown): err is Error {
  return err instanceof DeviceRefused || (err instanceof Error && NON_RETRYABLE_WEKA_ERRORS.includes(err.name));
}

/**
 * Signs one device as the verdict says, unless a retry finds it signed already, and reads back
 * what signing assigned. A refusal of the tool is the device's answer: it is skipped.
 */
export async function signDevice(
  run: WekaCli,
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
      if ((await run(target, readDriveCall(devicePath))).signature !== mode)
        return { skipped: refusalSkip(devicePath, err.message) };
    }
    after = await run(target, readDriveCall(devicePath));
  }
  if (after.signature !== mode || after.physicalUUID === null)
    throw new DeviceRefused(`${devicePath} is not signed for ${mode} use after signing it`);
  const { physicalUUID, serial, capacityGiB, type } = after;
  return { drive: { physicalUUID, serial, capacityGiB, type, devicePath: after.devicePath }, signed: signedNow };
}

/** Serials that a container on the node holds: its exclusive drives, and the drives under its virtual drives. */
export async function heldSerialsOn(api: WekaApi, node: string): Promise<Set<string>> {
  const held = new Set<string>();
  for (const c of await api.listContainersOnNode(node)) {
    for (const serial of c.status?.allocations?.drives ?? []) held.add(serial);
    for (const vd of c.status?.allocations?.virtualDrives ?? []) if (vd.serial) held.add(vd.serial);
  }
  return held;
}

export function createSignDrivesActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);
  const proxies = createNodeDecisions(deps);
  const publisher = createNodeDrivesPublisher(deps);

  /** What the operation, read now, asks of the node as it is now (signingRequestFor). */
  async function requestOnNode(
    node: string,
    operation: SigningOperationRef,
  ): Promise<ReturnType<typeof signingRequestFor>> {
    const [op, nodeObject] = await Promise.all([
      api.getOperation(operation),
      orIfMissing(api.core.readNode({ name: node }), null),
    ]);
    const current = op && { uid: op.metadata.uid ?? '', deleting: !!op.metadata.deletionTimestamp, spec: op.spec };
    return signingRequestFor(operation, current, nodeObject?.metadata?.labels ?? {});
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
        validDevicePath(devicePath); // a device path that is no device path is refused before anything is read
        const asked = await requestOnNode(node, operation);
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
        if (!device || !choice.chosen.includes(devicePath)) {
          const what = `WekaManualOperation ${operation.namespace}/${operation.name}`;
          return notAsked(
            request.type === 'device-paths'
              ? `${what} does not list ${devicePath}`
              : `${what} (${request.type}) does not choose it on node ${node}`,
          );
        }
        const info = await run(target, readDriveCall(devicePath));
        const verdict = signingVerdict({
          mode: request.mode,
          device,
          info,
          options: request.options,
          heldSerials: await heldSerialsOn(api, node),
        });
        if (verdict.action === 'skip') {
          const skipped = { devicePath, reason: verdict.reason, message: verdict.message };
          deps.logger.warn({ node, ...skipped }, 'device skipped');
          return { ok: true, result: { skipped } satisfies SignedDevice };
        }
        const flags = verdict.action === 'sign' ? verdict.flags : [];
        const outcome = await signDevice(run, target, request.mode, info, flags);
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
      const asked = await requestOnNode(node, operation);
      if (!asked.ok) throw ApplicationFailure.nonRetryable(asked.refusal, 'SigningNotRequested');
      const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
      const devices = await run(target, listBlockDevicesCall());
      const choice = chooseDevices(asked.request.type, asked.request.devicePaths, devices);
      if (choice.chosen.length > 0) return choice;
      return { ...choice, nothingChosen: nothingChosenMessage(asked.request.type, devices) };
    },

    /**
     * Makes the node say what its devices hold (node-drives-publisher.ts), the drives just signed
     * among them: the proxy lists every device. Executed by the node's mutex. With `onlyWhileUsed`
     * (a ledger rebuild the watcher asked), nothing is done, and null answered, once no drive
     * container uses the node: reading the devices would make an ssdproxy for nobody.
     */
    async publishNodeDrives({
      node,
      onlyWhileUsed,
    }: MutexPayloads['publish-drives']): Promise<NodeDrivesPublished | null> {
      if (onlyWhileUsed && (await proxyUsers(api, node)) === 0) {
        deps.logger.info({ node }, 'ledger rebuild not needed: no drive container uses the node any more');
        return null;
      }
      return publisher.publish(node);
    },
  };
}
