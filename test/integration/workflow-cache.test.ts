// The operator's workers keep at most WEKA_MAX_CACHED_WORKFLOWS workflows in memory, so idle Ready
// containers beyond it are evicted; an evicted container is replayed from its history when it is
// next signalled, and its deletion tears it down like any other.
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../deploy/local/ports.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, deleteContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startOperatorProcess, waitGone } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster } from '../support/simulator.js';

const CACHE = 2;
const CONTAINERS = 5;

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
});

/** The workers' sticky cache sizes, from the SDK's gauge on /metrics. */
async function stickyCacheSizes(port: number, taskQueue: string): Promise<number[]> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('temporal_sticky_cache_size{') && l.includes(`"${taskQueue}`))
    .map((l) => Number(l.split(' ').at(-1)));
}

describe("the workers' workflow cache", () => {
  it(
    'holds at most the configured workflows, and an evicted idle container is still torn down on deletion',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'cache');
      const guid = await createWekaCluster(node, 'cache');
      const [port] = await freePorts(1);
      const taskQueue = uniqueName('cache');
      operator = await startOperatorProcess(
        {
          WEKA_TASK_QUEUE: taskQueue,
          WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
          WEKA_HTTP_PORT: String(port),
          WEKA_HTTP_ADDRESS: '127.0.0.1',
          WEKA_MAX_CACHED_WORKFLOWS: String(CACHE),
        },
        'compiled',
      );
      const kc = kubeConfig();
      const ns = await uniqueNamespace('cache');
      const refs = await createDriveContainers(
        kc,
        ns,
        Array.from({ length: CONTAINERS }, (_, i) => ({
          name: `drive-${i}`,
          spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 384 },
        })),
        { clusterGUID: guid },
      );
      await eventually(
        `the ${CONTAINERS} drive containers to be Ready`,
        async () => {
          const all = await listContainers(kc, ns);
          return all.length === CONTAINERS && all.every(isReady) ? true : undefined;
        },
        240_000,
      );
      // More containers than the cache holds have run, so some were evicted; none is above it.
      const sizes = await eventually(
        "the SDK's sticky cache gauge",
        async () => {
          const s = await stickyCacheSizes(port!, taskQueue);
          return s.length > 0 ? s : undefined;
        },
        30_000,
      );
      for (const size of sizes) expect(size).toBeLessThanOrEqual(CACHE);

      await deleteContainers(
        kc,
        refs.map((r) => ({ namespace: ns, name: r.name })),
      );
      for (const r of refs) await waitGone({ namespace: ns, name: r.name }, 120_000);
      expect(await operator.stop(), operator.output().slice(-4000)).toBe(0);
    },
  );
});
