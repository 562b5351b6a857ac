// A mutex's activity never retries for ever what the apiserver refused: such a failure becomes a
// non-retryable KubeRefused (answered to its requester as a refusal); anything else is left to the
// retry policy, and activities outside a mutex are untouched.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { decisionsFailFast } from '../../../activities/index.js';

const apiError = (code: number, message: string) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, body: { message } });

function failing(err: unknown) {
  return decisionsFailFast({
    ensureProxy: async (_input: { node: string }) => Promise.reject(err),
    readContainer: async (_input: unknown) => Promise.reject(err),
  });
}

describe('mutex decisions fail fast', () => {
  it.each([
    [422, 'the status fails the schema'],
    [404, 'namespaces "weka-system" not found'],
    [403, 'forbidden by policy'],
    [400, 'bad request'],
  ])('turns a %i from the apiserver into a non-retryable KubeRefused with its message', async (code, message) => {
    const err = await failing(apiError(code, message))
      .ensureProxy({ node: 'n1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('KubeRefused');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toBe(`ensureProxy: HTTP ${code}: ${message}`);
  });

  it.each([
    ['a conflict', apiError(409, 'changed')],
    ['a 5xx', apiError(503, 'unavailable')],
    ['a 429', apiError(429, 'slow down')],
    ['no answer', new Error('connect ECONNREFUSED 127.0.0.1:6443')],
  ])('leaves %s to the retry policy', async (_what, cause) => {
    await expect(failing(cause).ensureProxy({ node: 'n1' })).rejects.toBe(cause);
  });

  it('leaves activities that no mutex executes as they are', async () => {
    const cause = apiError(422, 'refused');
    await expect(failing(cause).readContainer({})).rejects.toBe(cause);
  });
});
