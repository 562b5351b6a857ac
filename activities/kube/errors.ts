// Reading the HTTP status out of client-node's errors.

export function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => httpStatus(err) === 404;
export const isConflict = (err: unknown): boolean => httpStatus(err) === 409;
export const isAlreadyExists = isConflict;

/** Runs a create; an object that already exists (409) counts as created. */
export async function createIfAbsent(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** Runs `work`; a 404 becomes `fallback`. */
export async function orIfMissing<T, F>(work: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await work;
  } catch (err) {
    if (isNotFound(err)) return fallback;
    throw err;
  }
}
