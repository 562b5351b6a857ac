// What the steps of one manual operation share: the operation it runs, the client of the nodes'
// mutexes its requests go through, the status it owns, and its lifecycle.
import type { ObjectRef } from '../../src/api/names.js';
import type { ObjectWorkflowInput } from '../../src/protocol.js';
import { Lifecycle } from '../lifecycle.js';
import { installMutexClient, type MutexClient } from '../mutex-client.js';
import { OperationStatus } from '../operation-status.js';

export interface OperationRun {
  readonly ref: ObjectRef;
  /** The operation's uid: the same name created again is another operation. */
  readonly uid: string;
  readonly mutex: MutexClient;
  readonly status: OperationStatus;
  readonly life: Lifecycle;
}

/** The run of the operation `input` names, with the handlers of its signals and query installed. */
export function startRun(input: ObjectWorkflowInput): OperationRun {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new OperationStatus(ref, input.uid);
  // An operation is one-off: it runs the spec it read at the start, so a later edit changes nothing.
  const life = new Lifecycle(input, status, { specChanges: false });
  return { ref, uid: input.uid, mutex, status, life };
}
