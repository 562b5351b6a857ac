// A resumable list+watch of one resource in all namespaces (a custom resource, or a core one:
// the operator's pods, selected by label, or the nodes): list, then watch from the
// list's resourceVersion; a watch that ends (server timeout, dropped connection, error) resumes
// from the last resourceVersion seen; a 410 Gone (that version is compacted away) lists again;
// every failure waits a jittered, capped back-off. A periodic re-list (resync) lets the handler
// converge on anything a bug or a lost update could have left behind; it runs beside a running
// watch, which goes on delivering, because a list of thousands takes seconds. A resync whose list
// did not run beside one watch from start to end is dropped: the watch that resumed meanwhile
// replays from its own last version, events older than the list that must not come after it.
// Each listed or watched object is parsed into what the handler keeps as soon as it arrives, so a
// list of thousands holds one page of raw objects at a time, never all of them.
import { CoreV1Api, CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { backoffDelay, DEFAULT_BACKOFF, type Backoff } from '../../../src/backoff.js';
import { pause } from './pause.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListWatchHandlers<T> {
  /** What the handler keeps of one raw object; undefined skips the object. */
  parse(raw: unknown): T | undefined;
  /** Names one object across its versions (its uid). */
  keyOf(item: T): string;
  /**
   * Every object that existed when the list was taken: at start, after a 410 Gone or a failed
   * list, and at each resync. `newer` holds the keys of the objects the watch delivered since the
   * list began, and grows until the returned promise settles: what the handler knows of those is
   * newer than their copies in `items` (or knows them gone, or created after the list), so it must
   * skip those copies, and not take the objects missing from `items` for gone.
   */
  onList(items: T[], newer: ReadonlySet<string>): void | Promise<void>;
  onEvent(type: WatchEventType, obj: T): void;
}

export interface ListWatchOptions<T> {
  kubeConfig: KubeConfig;
  /** The API group; '' for the core group (only its pods and nodes are listed here). */
  group: string;
  version: string;
  plural: string;
  /** Only the objects with these labels. */
  labelSelector?: string;
  handlers: ListWatchHandlers<T>;
  logger: Logger;
  signal: AbortSignal;
  backoff?: Backoff;
  /** List again this often even when the watch is healthy. */
  resyncMs?: number;
  /** The server ends each watch after this long; it is then resumed. */
  watchTimeoutSeconds?: number;
  /** Objects asked for in each page of a list. */
  listPageSize?: number;
}

const DEFAULT_RESYNC_MS = 10 * 60_000;
const DEFAULT_LIST_PAGE = 500;
/** A watch that ends sooner than this without an event counts as a failure, so it cannot spin. */
const SHORT_WATCH_MS = 1_000;

interface WatchOutcome {
  resourceVersion: string;
  gone: boolean;
  events: number;
  error?: unknown;
}

function resourceVersionOf(obj: unknown): string | undefined {
  const rv = (obj as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown } | null;
  return e?.statusCode === 410 || e?.code === 410;
}

interface ListPage {
  items?: unknown[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** One page of the resource's list, in every namespace. */
function pageLister<T>(o: ListWatchOptions<T>): (limit: number, next: string | undefined) => Promise<ListPage> {
  const selector = o.labelSelector ? { labelSelector: o.labelSelector } : {};
  if (o.group === '') {
    const core = o.kubeConfig.makeApiClient(CoreV1Api);
    if (o.plural === 'nodes')
      return async (limit, next) =>
        (await core.listNode({ limit, ...selector, ...(next ? { _continue: next } : {}) })) as ListPage;
    if (o.plural !== 'pods') throw new Error(`listing core ${o.plural} is not supported`);
    return async (limit, next) =>
      (await core.listPodForAllNamespaces({ limit, ...selector, ...(next ? { _continue: next } : {}) })) as ListPage;
  }
  const api = o.kubeConfig.makeApiClient(CustomObjectsApi);
  return async (limit, next) =>
    (await api.listClusterCustomObject({
      group: o.group,
      version: o.version,
      plural: o.plural,
      limit,
      ...selector,
      ...(next ? { _continue: next } : {}),
    })) as ListPage;
}

/** Runs until `signal` aborts. */
export async function runListWatch<T>(o: ListWatchOptions<T>): Promise<void> {
  const listPage = pageLister(o);
  const watch = new Watch(o.kubeConfig);
  const path = o.group === '' ? `/api/${o.version}/${o.plural}` : `/apis/${o.group}/${o.version}/${o.plural}`;
  const resyncMs = o.resyncMs ?? DEFAULT_RESYNC_MS;
  const log = o.logger.child({ plural: o.plural });
  let resourceVersion: string | undefined;
  let listedAt = 0;
  let failures = 0;
  /** The `newer` sets of the lists in progress, each fed every key the watch delivers. */
  const listsInProgress = new Set<Set<string>>();
  /** Lists run one after another, so a handler never meets two at once. */
  let lists: Promise<unknown> = Promise.resolve();
  /** Whether a watch runs now; each one started counts in `watches`. */
  let watching = false;
  let watches = 0;

  function list(resync = false): Promise<string | undefined> {
    const run = lists.then(() => listOnce(resync));
    lists = run.catch(() => undefined);
    return run;
  }

  async function listOnce(resync: boolean): Promise<string | undefined> {
    const newer = new Set<string>();
    const besideWatch = watches;
    listsInProgress.add(newer);
    try {
      const items: T[] = [];
      let next: string | undefined;
      let version: string | undefined;
      do {
        const page = await listPage(o.listPageSize ?? DEFAULT_LIST_PAGE, next);
        for (const raw of page.items ?? []) {
          const item = o.handlers.parse(raw);
          if (item !== undefined) items.push(item);
        }
        version = page.metadata?.resourceVersion;
        next = page.metadata?.continue || undefined;
      } while (next && !o.signal.aborted);
      if (o.signal.aborted) return undefined;
      if (!version) throw new Error(`list of ${o.plural} carried no resourceVersion`);
      if (resync && (watches !== besideWatch || !watching)) {
        log.debug({ resourceVersion: version }, 'the watch ended while it listed: resync dropped');
        return version;
      }
      listedAt = Date.now();
      log.debug({ count: items.length, resourceVersion: version, newer: newer.size }, 'listed');
      await o.handlers.onList(items, newer);
      return version;
    } finally {
      listsInProgress.delete(newer);
    }
  }

  /** Waits out the back-off after the `failures`-th failure in a row. */
  async function backOff(failures: number, err: unknown, message: string): Promise<void> {
    const delayMs = backoffDelay(failures, o.backoff ?? DEFAULT_BACKOFF);
    log.warn({ err, failures, delayMs }, message);
    await pause(delayMs, o.signal);
  }

  const onEvent = (type: WatchEventType, item: T) => {
    for (const newer of listsInProgress) newer.add(o.handlers.keyOf(item));
    o.handlers.onEvent(type, item);
  };

  /** Lists again once the last list is `resyncMs` old, while a watch runs. */
  async function resync(): Promise<void> {
    let resyncFailures = 0;
    while (!o.signal.aborted) {
      const due = listedAt + resyncMs - Date.now();
      if (due > 0 || !watching) {
        // Without a watch the watch loop is listing for itself, or waiting to watch again.
        await pause(due > 0 ? due : SHORT_WATCH_MS, o.signal);
        continue;
      }
      try {
        await list(true);
        resyncFailures = 0;
      } catch (err) {
        if (o.signal.aborted) break;
        await backOff(++resyncFailures, err, 'resync list failed; retrying');
      }
    }
  }
  const resyncing = resync();

  while (!o.signal.aborted) {
    try {
      if (resourceVersion === undefined) resourceVersion = await list();
      if (o.signal.aborted || resourceVersion === undefined) break;
      const started = Date.now();
      watching = true;
      watches++;
      const outcome = await watchOnce(
        watch,
        path,
        resourceVersion,
        o.watchTimeoutSeconds ?? 300,
        o.labelSelector,
        onEvent,
        o.handlers,
        o.signal,
      ).finally(() => (watching = false));
      resourceVersion = outcome.resourceVersion;
      if (outcome.gone) {
        log.info({ resourceVersion }, 'watch expired (410 Gone): listing again');
        resourceVersion = undefined;
        failures = 0;
        continue;
      }
      if (outcome.error !== undefined) throw outcome.error;
      if (outcome.events === 0 && Date.now() - started < SHORT_WATCH_MS && !o.signal.aborted)
        throw new Error('watch closed at once');
      failures = 0;
    } catch (err) {
      if (o.signal.aborted) break;
      if (isGone(err)) {
        resourceVersion = undefined;
        continue;
      }
      await backOff(++failures, err, 'list/watch failed; retrying');
    }
  }
  await resyncing;
}

function watchOnce<T>(
  watch: Watch,
  path: string,
  fromVersion: string,
  timeoutSeconds: number,
  labelSelector: string | undefined,
  onEvent: (type: WatchEventType, item: T) => void,
  handlers: ListWatchHandlers<T>,
  signal: AbortSignal,
): Promise<WatchOutcome> {
  return new Promise((resolve) => {
    const outcome: WatchOutcome = { resourceVersion: fromVersion, gone: false, events: 0 };
    let controller: AbortController | undefined;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      controller?.abort();
      if (isGone(error)) outcome.gone = true;
      else if (error !== undefined && error !== null && !signal.aborted) outcome.error = error;
      resolve(outcome);
    };
    const onAbort = () => finish();
    signal.addEventListener('abort', onAbort, { once: true });

    const onLine = (type: string, obj: unknown) => {
      if (settled) return;
      if (type === 'ERROR') {
        // The apiserver reports an expired resourceVersion as an ERROR event carrying a Status.
        const status = obj as { code?: number; message?: string } | null;
        if (status?.code === 410) outcome.gone = true;
        finish(
          outcome.gone ? undefined : new Error(`watch error ${status?.code ?? ''}: ${status?.message ?? 'unknown'}`),
        );
        return;
      }
      const rv = resourceVersionOf(obj);
      if (rv) outcome.resourceVersion = rv;
      if (type === 'BOOKMARK') return;
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
      outcome.events++;
      const item = handlers.parse(obj);
      if (item !== undefined) onEvent(type, item);
    };
    watch
      .watch(
        path,
        {
          resourceVersion: fromVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          ...(labelSelector ? { labelSelector } : {}),
        },
        onLine,
        (err: unknown) => finish(err),
      )
      .then(
        (c) => {
          controller = c;
          if (settled) c.abort();
        },
        (err: unknown) => finish(err ?? new Error('watch failed')),
      );
  });
}
