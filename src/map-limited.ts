// Maps over a list with at most `limit` calls in flight, keeping the list's order in the results.
// For reads that each wait on a round trip (a device read through Kubernetes exec, say): done a
// few at a time they take a fraction of the time, without flooding the apiserver.

/**
 * Calls `fn` on every item, at most `limit` (at least 1) at a time, and resolves with the
 * results in the items' order. The first rejection rejects the whole; calls under way then finish
 * on their own, and no new one starts.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  async function worker(): Promise<void> {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  }
  const workers = Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), items.length) }, worker);
  await Promise.all(workers);
  return results;
}
