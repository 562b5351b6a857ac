// The pod helpers the activities use, against an in-memory stand-in for the apiserver's pods:
// ensurePod replaces a pod that ended (deleting only that pod, by its uid), waits out a pod being
// deleted, and keeps a live one; waitPodRunning fails at once for a pod that will never run.
import type { CoreV1Api, V1DeleteOptions, V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  ensurePod,
  mustBeMadeAgain,
  POD_BEING_DELETED,
  POD_FAILED,
  POD_MISSING,
  waitPodRunning,
} from '../../../activities/kube/pods.js';
import { wekaPod } from '../../../src/manifests/pods.js';

const NS = 'ns';
const NAME = 'drive-0';
const MANIFEST = wekaPod({ name: NAME, namespace: NS, node: 'n', image: 'i', role: 'drive', owner: `${NS}/${NAME}` });

const httpError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** One pod name's worth of apiserver: read, create, delete (with a uid precondition and finalizers). */
class FakePods {
  pod: V1Pod | null = null;
  private next = 1;
  readonly calls: string[] = [];
  /** Runs before a delete is applied, to change the world between a read and the delete. */
  beforeDelete: (() => void) | undefined;
  /** Runs on every read, e.g. to finish a deletion after a while. */
  onRead?: (reads: number) => void;
  private reads = 0;

  put(status: NonNullable<V1Pod['status']>, metadata: Partial<NonNullable<V1Pod['metadata']>> = {}): string {
    const uid = `uid-${this.next++}`;
    this.pod = { metadata: { name: NAME, namespace: NS, uid, ...metadata }, spec: { containers: [] }, status };
    return uid;
  }

  readonly api = {
    readNamespacedPod: async () => {
      this.calls.push('read');
      this.onRead?.(++this.reads);
      if (!this.pod) throw httpError(404);
      return structuredClone(this.pod);
    },
    createNamespacedPod: async () => {
      this.calls.push('create');
      if (this.pod) throw httpError(409);
      this.put({ phase: 'Pending' });
      return structuredClone(this.pod!);
    },
    deleteNamespacedPod: async ({ body }: { body?: V1DeleteOptions }) => {
      this.beforeDelete?.();
      this.calls.push(`delete ${body?.preconditions?.uid ?? 'any'}`);
      if (!this.pod) throw httpError(404);
      const uid = body?.preconditions?.uid;
      if (uid !== undefined && uid !== this.pod.metadata?.uid) throw httpError(409);
      if (this.pod.metadata?.finalizers?.length) this.pod.metadata.deletionTimestamp = new Date();
      else this.pod = null;
      return {};
    },
  };

  get core(): CoreV1Api {
    return this.api as unknown as CoreV1Api;
  }
}

const EVICTED = { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' };

describe('ensurePod', () => {
  it('creates a missing pod', async () => {
    const pods = new FakePods();
    expect(await ensurePod(pods.core, MANIFEST)).toEqual({ created: true, replaced: [] });
    expect(pods.pod?.status?.phase).toBe('Pending');
  });

  it.each(['Pending', 'Running', 'Unknown'])('keeps a pod in phase %s', async (phase) => {
    const pods = new FakePods();
    const uid = pods.put({ phase });
    expect(await ensurePod(pods.core, MANIFEST)).toEqual({ created: false, replaced: [] });
    expect(pods.pod?.metadata?.uid).toBe(uid);
    expect(pods.calls).toEqual(['read']);
  });

  it.each([EVICTED, { phase: 'Succeeded' }])(
    'replaces a pod that ended ($phase): deletes it by uid, creates it again',
    async (status) => {
      const pods = new FakePods();
      const old = pods.put(status);
      const result = await ensurePod(pods.core, MANIFEST);
      expect(result.created).toBe(true);
      expect(result.replaced).toHaveLength(1);
      expect(result.replaced[0]).toContain(old);
      expect(result.replaced[0]).toContain(`phase ${status.phase}`);
      expect(pods.calls).toEqual(['read', `delete ${old}`, 'read', 'create']);
      expect(pods.pod?.metadata?.uid).not.toBe(old);
      expect(pods.pod?.status?.phase).toBe('Pending');
    },
  );

  it('never deletes a pod created under the same name after the ended one was read', async () => {
    const pods = new FakePods();
    const old = pods.put(EVICTED);
    let fresh = '';
    pods.beforeDelete = () => {
      pods.beforeDelete = undefined;
      fresh = pods.put({ phase: 'Running' }); // another attempt replaced it meanwhile
    };
    const result = await ensurePod(pods.core, MANIFEST);
    expect(pods.calls).toEqual(['read', `delete ${old}`, 'read']);
    expect(result).toEqual({ created: false, replaced: [expect.stringContaining(old)] });
    expect(pods.pod?.metadata?.uid).toBe(fresh);
  });

  it('waits out a pod being deleted, then creates it again', async () => {
    const pods = new FakePods();
    const old = pods.put({ phase: 'Running' }, { deletionTimestamp: new Date(), finalizers: ['x'] });
    pods.onRead = (reads) => {
      if (reads === 4) pods.pod = null; // its deletion finished
    };
    const result = await ensurePod(pods.core, MANIFEST);
    expect(result).toEqual({ created: true, replaced: [] });
    expect(pods.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    expect(pods.pod?.metadata?.uid).not.toBe(old);
  });

  it('waits for the deletion it started when the ended pod has finalizers', async () => {
    const pods = new FakePods();
    const old = pods.put(EVICTED, { finalizers: ['x'] });
    pods.onRead = (reads) => {
      if (reads === 5) pods.pod = null;
    };
    const result = await ensurePod(pods.core, MANIFEST);
    expect(result.created).toBe(true);
    expect(pods.calls.filter((c) => c.startsWith('delete'))).toEqual([`delete ${old}`]);
  });

  it('fails after its timeout when the old pod never goes', async () => {
    const pods = new FakePods();
    pods.put({ phase: 'Running' }, { deletionTimestamp: new Date(), finalizers: ['x'] });
    await expect(ensurePod(pods.core, MANIFEST, 300)).rejects.toThrow(
      /pod ns\/drive-0 is still being deleted, phase Running after 300 ms/,
    );
    expect(pods.calls).not.toContain('create');
  });
});

describe('waitPodRunning', () => {
  async function failure(pods: FakePods): Promise<ApplicationFailure> {
    const started = Date.now();
    const err: unknown = await waitPodRunning(pods.core, NS, NAME, 30_000).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1_000); // at once, not after the timeout
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  it('fails at once for a pod that ended, saying why and that waiting cannot help', async () => {
    const pods = new FakePods();
    pods.put(EVICTED);
    const err = await failure(pods);
    expect(err.type).toBe(POD_FAILED);
    expect(err.message).toBe(
      'pod ns/drive-0 will not run: it is phase Failed (Evicted: The node was low on resource: memory.); ' +
        'waiting cannot help, it must be created again',
    );
  });

  it('fails at once for a pod being deleted, even while it still runs', async () => {
    const pods = new FakePods();
    pods.put({ phase: 'Running' }, { deletionTimestamp: new Date() });
    const err = await failure(pods);
    expect(err.type).toBe(POD_BEING_DELETED);
    expect(err.message).toMatch(/being deleted/);
  });

  it('waits for a pending pod to run', async () => {
    const pods = new FakePods();
    pods.put({ phase: 'Pending' });
    pods.onRead = (reads) => {
      if (reads === 3) pods.pod!.status = { phase: 'Running' };
    };
    await waitPodRunning(pods.core, NS, NAME, 5_000);
    expect(pods.calls).toEqual(['read', 'read', 'read']);
  });

  it('fails at once for a missing pod: someone deleted it after it was made', async () => {
    const err = await failure(new FakePods());
    expect(err.type).toBe(POD_MISSING);
    expect(err.message).toBe(
      'pod ns/drive-0 is missing: it was deleted after it was made; waiting cannot help, it must be created again',
    );
    expect(mustBeMadeAgain(err)).toBe(true);
  });
});
