// The first steps of a bring-up: the node (named and registered), the node's ssdproxy, and the
// allocation the node's mutex gives. Each waits, shown on the object, until it can go on.
import { condition, upsertSearchAttributes } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { WekaNode, type MutexError } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { ANSWER_NOT_IN_LEDGER, inLedger } from '../ledger-checked.js';
import { again, done, untilDone } from '../steps.js';
import { CAPACITY_RETRY, NODE_NOT_FOUND, drivesText, portsText, type ContainerRun } from './run.js';

/** The mutex's answer to an allocate: what the container holds, and why a growth it asks for waits, if it does. */
export interface Granted {
  allocation: ContainerAllocation;
  pending?: { error: MutexError; waitForCapacity: boolean };
}

/**
 * Waits until a node is named and exists. A name no Node has (yet: nodes register after the
 * objects that name them, in a fresh cluster) is looked at again every 30 s, without asking
 * that node's mutex anything, so a made-up name starts no mutex.
 */
export async function waitForNode(c: ContainerRun): Promise<void> {
  const { life, status } = c;
  await untilDone(c.life, async (tries) => {
    if (tries > 0) {
      const fresh = await c.reread();
      if (fresh) c.node = fresh.spec.nodeName ?? '';
    }
    const changes = life.specChanges;
    const node = c.node;
    if (node && (await kubeLocal.nodeExists(node))) return done(undefined);
    if (node) c.nodeMissing = true;
    const why = node
      ? `node ${node} does not exist: the container waits until a Node of that name registers (spec.nodeName cannot change: delete the container to give up)`
      : 'spec.nodeName is not set: the container waits until a node is named (it cannot change once set)';
    status.stage('Placed', 'False', node ? NODE_NOT_FOUND : 'NoNodeName', why, 'Warning');
    // A node registers on its own; a name only a person can give.
    if (!node) {
      await status.enter('Refused', why, { kind: 'stalled', reason: 'NoNodeName', message: why });
      return again(() => condition(() => life.specChanges > changes));
    }
    await status.enter('Pending', `waiting for node ${node} to exist`, {
      kind: 'working',
      reason: NODE_NOT_FOUND,
      message: why,
    });
    return again(() => condition(() => life.specChanges > changes, CAPACITY_RETRY));
  });
  c.nodeMissing = false;
  upsertSearchAttributes([{ key: WekaNode, value: c.node }]);
  c.status.stage('Placed', 'True', 'NodeNamed', `on node ${c.node}`);
}

export async function ensureProxy(c: ContainerRun): Promise<void> {
  await c.status.enter('Pending', "ensuring the node's ssdproxy");
  await untilDone(c.life, async () => {
    const answer = await c.proxyCall('ensure-proxy');
    if (answer.ok) return done(undefined);
    const error = answer.error ?? { type: 'ProxyFailed', message: 'ensuring the proxy failed' };
    await c.status.condition('ProxyReady', 'False', error.type, error.message, 'Warning');
    return again(() => condition(() => false, CAPACITY_RETRY));
  });
}

/**
 * Asks the node's mutex for the allocation the spec asks for: a first one, or, once the container
 * holds one, the same grown if the spec asks for more. A container that holds drives keeps them
 * whatever the answer: a growth that does not fit (or any refusal) comes back as pending.
 */
export async function allocate(c: ContainerRun): Promise<Granted> {
  const { life, status, mutex, node } = c;
  /** Whether the last try waited: a new try reads the object afresh, as a new run would. */
  let waited = false;
  return untilDone(life, async () => {
    if (waited) await c.reread();
    waited = false;
    if (!c.allocation && status.phase !== 'Ready') await status.enter('Allocating', `allocating on node ${node}`);
    const releases = mutex.releases();
    const changes = life.specChanges;
    const answer = await c.allocationCall();
    const waitForCapacity = answer.waitForCapacity === true;
    if (answer.ok && !(await inLedger(node, c.uid, answer.result as ContainerAllocation))) {
      const message = `an answer to its allocation request gave what node ${node}'s ledger does not hold for it (a forged or misdelivered mutexResponse): ignored, and asked again`;
      await status.event('Warning', ANSWER_NOT_IN_LEDGER, message);
      return again(() => Promise.resolve());
    }
    if (answer.ok) {
      const result = answer.result as ContainerAllocation;
      const what = `${drivesText(result)} on node ${node}; ${portsText(result)}`;
      status.stage('Allocated', 'True', 'Allocated', what, 'Normal');
      const pending = answer.error ? { pending: { error: answer.error, waitForCapacity } } : {};
      return done({ allocation: result, ...pending });
    }
    const error = answer.error ?? { type: 'AllocationFailed', message: 'allocation failed' };
    if (c.allocation) return done({ allocation: c.allocation, pending: { error, waitForCapacity } });
    status.stage('Allocated', 'False', error.type, error.message, 'Warning');
    waited = true;
    if (waitForCapacity) {
      await status.enter('Allocating', `waiting for capacity on node ${node}: ${error.message}`, {
        kind: 'working',
        reason: error.type,
        message: error.message,
      });
      return again(() => condition(() => mutex.releases() > releases || life.specChanges > changes, CAPACITY_RETRY));
    }
    const why = `refused until the spec changes: ${error.message}`;
    await status.enter('Refused', why, { kind: 'stalled', reason: error.type, message: error.message });
    return again(() => condition(() => life.specChanges > changes));
  });
}
