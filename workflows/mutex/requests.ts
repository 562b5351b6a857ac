// How requests reach the mutex: the request signal queues them (or answers again one already
// answered), and the state query shows the queue.
import { setHandler } from '@temporalio/workflow';
import { receive } from '../../src/node/mutex-queue.js';
import { mutexRequestSignal, mutexStateQuery } from '../../src/protocol.js';
import type { MutexRun } from './run.js';

export function listenForRequests(run: MutexRun): void {
  setHandler(mutexRequestSignal, (request) => {
    const arrival = receive(
      run.state,
      request,
      run.running.map((r) => r.requestId),
    );
    run.state = arrival.state;
    if (arrival.action === 'reanswer') run.reanswers.push({ replyTo: arrival.replyTo, response: arrival.response });
  });
  setHandler(mutexStateQuery, () => ({
    key: run.input.key,
    running: run.running,
    queue: run.state.queue,
    waiters: run.state.waiters,
    executed: run.state.executed,
  }));
}
