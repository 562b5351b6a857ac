// How a failed exec reaches Temporal: a refusal that no retry can change (the apiserver forbids
// the exec, the pod is not there) is a non-retryable failure of its own type, whatever the
// activity's retry policy; any other transport failure is left to the policy.
import { ActivityCancellationDetails, ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  ExecForbiddenError,
  ExecPodMissingError,
  ExecTransportError,
  type ExecTransport,
} from '../../../activities/exec/transport.js';
import { abortUnlessCancelledByWorkflow, wekaCli } from '../../../activities/weka-cli.js';
import { containerListCall } from '../../../src/weka/index.js';

const target = { namespace: 'ns', pod: 'drive', container: 'weka' };
const failing = (err: Error): ExecTransport => ({ run: () => Promise.reject(err) });
const call = containerListCall();

describe('a failed exec of a Weka call', () => {
  it.each([
    ['ExecForbidden', new ExecForbiddenError('ns/drive/weka: weka: 403')],
    ['ExecPodMissing', new ExecPodMissingError('ns/drive/weka: weka: 404: the pod does not exist')],
  ])('fails for good as %s', async (type, err) => {
    const failure = await wekaCli(failing(err))(target, call).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type, nonRetryable: true, message: err.message });
  });

  it('leaves any other transport failure to the retry policy', async () => {
    const err = new ExecTransportError('dropped', 'ns/drive/weka: weka: connection dropped', true);
    await expect(wekaCli(failing(err))(target, call)).rejects.toBe(err);
  });
});

describe("a Weka call's exec when its activity is cancelled", () => {
  const cancelled = (details: ConstructorParameters<typeof ActivityCancellationDetails>[0]) => {
    const activity = new AbortController();
    const holder: { details?: ActivityCancellationDetails } = {};
    const ctx = {
      cancellationSignal: activity.signal,
      get cancellationDetails() {
        return holder.details;
      },
    };
    const signal = abortUnlessCancelledByWorkflow(ctx);
    holder.details = new ActivityCancellationDetails(details);
    activity.abort();
    return signal.aborted;
  };

  it('runs on when the workflow asked for the cancellation: the teardown waits for it', () => {
    expect(cancelled({ cancelRequested: true })).toBe(false);
  });

  it.each([
    ['the worker shuts down', { workerShutdown: true }],
    ['the workflow asked while the worker shuts down', { cancelRequested: true, workerShutdown: true }],
    ['the attempt timed out', { timedOut: true }],
    ['the activity is gone from the server', { notFound: true }],
  ])('is aborted when %s', (_why, details) => {
    expect(cancelled(details)).toBe(true);
  });
});
