// The requester's side of the mutex protocol: send a request (signal-with-start, from an
// activity), then wait durably for the answer signal. A request that gets no answer in time is
// sent again under the same id, which the mutex executes at most once.
import { condition, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import {
  capacityReleasedSignal,
  mutexResponseSignal,
  type MutexPayloads,
  type MutexRequestKind,
  type MutexResponse,
} from '../src/protocol.js';
import { requests } from './activities.js';

/** How long to wait for an answer before sending the same request again. */
const RESEND_AFTER = '1 minute';

export interface MutexClient {
  call<K extends MutexRequestKind>(
    mutexId: string,
    kind: K,
    payload: MutexPayloads[K],
    node?: string,
  ): Promise<MutexResponse>;
  /** Counts capacity-released notifications, so a waiter can tell a new one arrived. */
  releases(): number;
}

export function installMutexClient(): MutexClient {
  /** Requests sent and awaited: their answer once it arrives, null until then. */
  const responses = new Map<string, MutexResponse | null>();
  let releases = 0;
  setHandler(mutexResponseSignal, (response) => {
    // Only answers to requests still awaited: an answer delivered again after it was taken (a
    // retried delivery) would otherwise stay in the map for the life of the workflow.
    if (responses.has(response.requestId)) responses.set(response.requestId, response);
  });
  setHandler(capacityReleasedSignal, () => {
    releases++;
  });
  return {
    releases: () => releases,
    async call(mutexId, kind, payload, node) {
      const request = { requestId: uuid4(), kind, replyTo: workflowInfo().workflowId, payload };
      responses.set(request.requestId, null);
      for (;;) {
        await requests.sendMutexRequest({ mutexId, request, ...(node === undefined ? {} : { node }) });
        if (await condition(() => responses.get(request.requestId) != null, RESEND_AFTER)) {
          const response = responses.get(request.requestId)!;
          responses.delete(request.requestId);
          return response;
        }
      }
    },
  };
}
