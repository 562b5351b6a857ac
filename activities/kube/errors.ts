// Reading the HTTP status out of client-node's errors, and what it means for the caller.

export function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => httpStatus(err) === 404;
export const isConflict = (err: unknown): boolean => httpStatus(err) === 409;
export const isAlreadyExists = isConflict;

/**
 * A create the apiserver refused because the namespace is being deleted: nothing new (a pod, an
 * Event) can be made there again, so waiting or retrying cannot help.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  return (
    httpStatus(err) === 403 &&
    /because it is being terminated|NamespaceTerminating/.test(apiMessage(err) + bodyText(err))
  );
}

function bodyText(err: unknown): string {
  const body: unknown = (err as { body?: unknown } | null)?.body;
  return typeof body === 'string' ? body : '';
}

/**
 * What a failed Kubernetes call means for whoever made it:
 * - `conflict`: 409, the object changed since it was read (or already exists): read and decide again;
 * - `transient`: no HTTP answer at all (connection refused or cut, a timeout), 408, 429 or a 5xx:
 *   the same call may well succeed later, so retrying it is right;
 * - `access`: 401 or 403, the apiserver refuses the operator this call (RBAC, an expired
 *   credential, an admission policy that answers Forbidden): the same call fails until an
 *   administrator acts, so retrying it at once is wrong, but asking again later is not;
 * - `refused`: any other 4xx (400, 404, 413, 422, ...): the request itself is refused (the object
 *   is gone, or fails the schema, a CEL rule or an admission policy); the same call fails the same
 *   way every time.
 * A mutex's activity must never retry `access` or `refused` for ever: the node's every other
 * decision waits behind it.
 */
export type KubeFailure = 'conflict' | 'transient' | 'access' | 'refused';

export function kubeFailure(err: unknown): KubeFailure {
  const code = httpStatus(err);
  if (code === undefined || code < 400 || code >= 500 || code === 408 || code === 429) return 'transient';
  if (code === 409) return 'conflict';
  if (code === 401 || code === 403) return 'access';
  return 'refused';
}

/** Whether retrying the same call cannot help: `access` or `refused`. */
export const isDeterministic = (err: unknown): boolean => {
  const failure = kubeFailure(err);
  return failure === 'access' || failure === 'refused';
};

/**
 * The apiserver's own explanation (the `message` of the Status it answered with), which names the
 * field or the rule; else the error's message.
 */
export function apiMessage(err: unknown): string {
  const body: unknown = (err as { body?: unknown } | null)?.body;
  let status: unknown = body;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      status = undefined;
    }
  }
  const message = (status as { message?: unknown } | null | undefined)?.message;
  if (typeof message === 'string' && message !== '') return message;
  return err instanceof Error ? err.message : String(err);
}

/** "HTTP 422: <the apiserver's message>", for refusals a user reads. */
export function describeKubeError(err: unknown): string {
  const code = httpStatus(err);
  return `${code === undefined ? 'no answer' : `HTTP ${code}`}: ${apiMessage(err)}`;
}

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
