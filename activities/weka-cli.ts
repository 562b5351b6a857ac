// Running one typed Weka CLI call (src/weka) in a pod: the one way the activities reach weka and
// weka-sign-drive. Each call is bounded by CLI_TIMEOUT_MS and aborted when its activity is
// cancelled; its exit code and output become the call's answer or error (completeCall). An exec
// the apiserver refused, or into a pod that is not there, fails for good: the step that makes the
// pod, or an administrator, must act first.
import { completeCall, type WekaCall } from '../src/weka/index.js';
import { ApplicationFailure } from '@temporalio/activity';
import { ExecForbiddenError, ExecPodMissingError, type ExecTarget, type ExecTransport } from './exec/transport.js';
import { currentContext } from './heartbeat.js';

/** How long one Weka CLI call may take; past it the activity attempt fails and is retried. */
export const CLI_TIMEOUT_MS = 60_000;

/** Runs a call in the target container: its parsed answer, or its error (refused, failed, bad output). */
export type WekaCli = <T>(target: ExecTarget, call: WekaCall<T>) => Promise<T>;

export function wekaCli(exec: ExecTransport): WekaCli {
  return async (target, call) => {
    const signal = currentContext()?.cancellationSignal;
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
