// Running one typed Weka CLI call (src/weka) in a pod: the one way the activities reach weka and
// weka-sign-drive. Each call is bounded by CLI_TIMEOUT_MS; its exit code and output become the
// call's answer or error (completeCall). An exec the apiserver refused, or into a pod that is not
// there, fails for good: the step that makes the pod, or an administrator, must act first.
//
// A command exec'd into a pod runs on when its exec stream is cut. When the workflow cancels the
// activity (its object is being deleted), it waits for the cancellation to complete before it
// undoes what the activity did (workflows/activities.ts): so a call already running is waited for,
// never abandoned, else it could land after the teardown looked; and no call starts after it. A
// worker that shuts down, or an attempt that timed out, stops waiting: its answer is lost anyway.
import { completeCall, type WekaCall } from '../src/weka/index.js';
import { ApplicationFailure, CancelledFailure, type Context } from '@temporalio/activity';
import { ExecForbiddenError, ExecPodMissingError, type ExecTarget, type ExecTransport } from './exec/transport.js';
import { currentContext } from './heartbeat.js';

/** How long one Weka CLI call may take; past it the activity attempt fails and is retried. */
export const CLI_TIMEOUT_MS = 60_000;

/** Runs a call in the target container: its parsed answer, or its error (refused, failed, bad output). */
export type WekaCli = <T>(target: ExecTarget, call: WekaCall<T>) => Promise<T>;

export function wekaCli(exec: ExecTransport): WekaCli {
  return async (target, call) => {
    const ctx = currentContext();
    if (ctx?.cancellationSignal.aborted) throw cancelledError(ctx);
    const signal = ctx ? abortUnlessCancelledByWorkflow(ctx) : undefined;
    let result;
    try {
      result = await exec.run(target, call.argv, { timeoutMs: CLI_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    } catch (err) {
      // Temporal names a thrown error's failure by its class; these carry the type the retry
      // policies list as not retryable.
      if (err instanceof ExecForbiddenError || err instanceof ExecPodMissingError)
        throw ApplicationFailure.nonRetryable(err.message, err.name);
      throw err;
    }
    return completeCall(call, result);
  };
}

/** What of an activity's context says whether, and why, it is cancelled. */
type Cancellation = Pick<Context, 'cancellationSignal' | 'cancellationDetails'>;

function cancelledError(ctx: Cancellation): unknown {
  const reason: unknown = ctx.cancellationSignal.reason;
  return reason instanceof Error ? reason : new CancelledFailure(String(reason ?? 'cancelled'));
}

/** Aborts with the activity, unless its workflow asked for the cancellation (and the worker stays). */
export function abortUnlessCancelledByWorkflow(ctx: Cancellation): AbortSignal {
  const controller = new AbortController();
  ctx.cancellationSignal.addEventListener(
    'abort',
    () => {
      const details = ctx.cancellationDetails;
      if (!details?.cancelRequested || details.workerShutdown || details.timedOut) controller.abort();
    },
    { once: true },
  );
  return controller.signal;
}
