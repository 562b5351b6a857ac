// Running one typed Weka CLI call (src/weka) in a pod: the one way the activities reach weka and
// weka-sign-drive. Each call is bounded by CLI_TIMEOUT_MS and aborted when its activity is
// cancelled; its exit code and output become the call's answer or error (completeCall).
import { completeCall, type WekaCall } from '../src/weka/index.js';
import type { ExecTarget, ExecTransport } from './exec/transport.js';
import { currentContext } from './heartbeat.js';

/** How long one Weka CLI call may take; past it the activity attempt fails and is retried. */
export const CLI_TIMEOUT_MS = 60_000;

/** Runs a call in the target container: its parsed answer, or its error (refused, failed, bad output). */
export type WekaCli = <T>(target: ExecTarget, call: WekaCall<T>) => Promise<T>;

export function wekaCli(exec: ExecTransport): WekaCli {
  return async (target, call) => {
    const signal = currentContext()?.cancellationSignal;
    const result = await exec.run(target, call.argv, { timeoutMs: CLI_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    return completeCall(call, result);
  };
}
