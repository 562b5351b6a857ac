// What a container acts on from its node's mutex is checked against the node's ledger first. An
// answer is a signal, and anyone who may signal the workflow could send one with the id of a
// request it saw in the history: an allocation the ledger never gave, or a release of what it
// still holds, would then be signed, or left counted for ever (docs/production.md, trust model).
import { sleep } from '@temporalio/workflow';
import { sameAllocation } from '../src/node/allocation-ledger.js';
import type { ContainerAllocation } from '../src/allocation/types.js';
import type { ObjectRef } from '../src/api/names.js';
import { nodeMutexId } from '../src/protocol.js';
import { kubeLocal } from './activities.js';
import type { MutexClient } from './mutex-client.js';

/** The reason of the Warning said when an answer is not what the node's ledger holds. */
export const ANSWER_NOT_IN_LEDGER = 'AnswerNotInLedger';

/** The longest pause between two releases of an allocation the ledger still holds. */
const RELEASE_RETRY_MAX_S = 60;

/** Whether an allocation answered to the container of `uid` is exactly what its node's ledger holds for it. */
export async function inLedger(node: string, uid: string, answered: ContainerAllocation): Promise<boolean> {
  return sameAllocation(answered, await kubeLocal.readNodeAllocation({ node, uid }));
}

/**
 * Releases the container's allocation through its node's mutex, and asks again (after a pause
 * that doubles, up to a minute) until the node's ledger no longer holds anything for its uid.
 * `warn` says each answer the ledger contradicts; `between` runs before each new ask.
 */
export async function releaseUntilOutOfLedger(o: {
  mutex: MutexClient;
  node: string;
  container: ObjectRef & { uid: string };
  warn: (message: string) => Promise<void>;
  between?: () => Promise<void>;
}): Promise<void> {
  const { node, container } = o;
  for (let pause = 1; ; pause = Math.min(pause * 2, RELEASE_RETRY_MAX_S)) {
    const answer = await o.mutex.call(nodeMutexId(node), 'release', { ...container, node }, node);
    if ((await kubeLocal.readNodeAllocation({ node, uid: container.uid })) === null) return;
    const said = answer.ok ? 'released' : `refused: ${answer.error?.message ?? 'no reason given'}`;
    await o.warn(
      `the release of ${container.namespace}/${container.name}'s allocation was answered (${said}), but node ${node}'s ledger still holds it for uid ${container.uid}: asked again in ${pause} s`,
    );
    await sleep(`${pause} seconds`);
    await o.between?.();
  }
}
