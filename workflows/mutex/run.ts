// What the steps of one run of a mutex share: its queue and waiters (the state it carries through
// continue-as-new), the requests it is executing, the answers it has still to send, and its bounds.
import { emptyMutexState, type MutexState } from '../../src/node/mutex-queue.js';
import type { MutexAnswer, MutexInput, MutexRequest } from '../../src/protocol.js';

/**
 * Continue as new past this many history events (some 17 per request). A worker whose cache has
 * no room for every node's mutex replays a mutex's whole history at the next request after an
 * eviction, on the workflow thread every workflow shares: a 1,500-event history took about a
 * second, so a rollout over more nodes than the cache holds slowed as the histories grew. 500
 * keeps that replay short; continuing costs one workflow task and the carried state.
 */
const HISTORY_LIMIT = 500;
/**
 * The most bytes of state (JSON) carried through continue-as-new: the oldest answers are dropped
 * to stay under it (stateToCarry). Temporal refuses a payload over 2 MB and warns over 512 KB;
 * 256 KiB keeps well clear of both and still holds about a hundred answers of 8 virtual drives
 * (some 2 KB each), or every one of the last 500 small answers (proxy, release: about 150 bytes).
 */
const CARRIED_STATE_BYTES = 256 * 1024;

export interface MutexRun {
  readonly input: MutexInput;
  /** The queue, the waiters and the answers given: what continue-as-new carries. */
  state: MutexState;
  /** The requests being executed: one, or a batch of allocations. */
  running: MutexRequest[];
  /** Answers to send again, to requests that arrived again after they were answered. */
  readonly reanswers: MutexAnswer[];
  /** Delivery activities still running. */
  deliveries: number;
  /** Continue as new past this many history events. */
  readonly historyLimit: number;
  /** The most bytes of state carried through continue-as-new. */
  readonly carriedBytes: number;
  /**
   * `state.executed` when the state last did not fit in `carriedBytes` (its queue and waiters
   * alone were over it): the mutex then drains its queue in this run, and tries again only once
   * another request ran. Temporal's own suggestion to continue is never put off.
   */
  tooBigAt: number | undefined;
}

/** A run that starts from the state `input` carries, or empty. */
export function startRun(input: MutexInput): MutexRun {
  return {
    input,
    state: input.state ?? emptyMutexState(),
    running: [],
    reanswers: [],
    deliveries: 0,
    historyLimit: input.historyLimit ?? HISTORY_LIMIT,
    carriedBytes: input.carriedStateBytes ?? CARRIED_STATE_BYTES,
    tooBigAt: undefined,
  };
}
