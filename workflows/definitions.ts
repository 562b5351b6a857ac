// Signals and queries of the operator's workflows. Clients (the watcher, activities, tests)
// import these too, so each name is defined once.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { MutexRequest, MutexResponse, MutexState } from '../src/lifecycle/mutex-queue.js';

/** A request to a mutex workflow (sent with signal-with-start by an activity). */
export const mutexRequestSignal = defineSignal<[MutexRequest]>('mutexRequest');
/** The answer to a mutex request, sent to the requester. */
export const mutexResponseSignal = defineSignal<[MutexResponse]>('mutexResponse');
/** Capacity was released on the mutex's resource: a refused requester may ask again. */
export const capacityReleasedSignal = defineSignal<[{ mutexId: string }]>('capacityReleased');

export interface MutexView {
  key: string;
  /** The first of the requests being executed (kept for readers of older versions), or null. */
  holder: MutexRequest | null;
  /** Every request being executed: one, or a batch of allocations decided together. */
  running: MutexRequest[];
  queue: MutexRequest[];
  waiters: string[];
  executed: number;
}
export const mutexStateQuery = defineQuery<MutexView>('mutexState');

/** The object's spec changed (the watcher signals it); the workflow re-reads it. */
export const specChangedSignal = defineSignal<[]>('specChanged');
/** Deletion of the object started: tear down. Cancelling the workflow does the same. */
export const deleteRequestedSignal = defineSignal<[]>('deleteRequested');
/** Something the workflow waits for may have happened (e.g. a cluster GUID); look again now. */
export const wakeUpSignal = defineSignal<[]>('wakeUp');

export interface LifecycleView {
  phase: string;
  step: string;
  detail: string;
  allocation?: unknown;
  lastError?: string;
}
export const stateQuery = defineQuery<LifecycleView>('state');

export type { MutexState };
