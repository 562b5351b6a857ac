// The Temporal SDK hands its metric updates to the operator through a buffer of fixed size. When
// the buffer fills faster than the operator drains it, Core drops updates, and the metrics it
// created in the dropped ones can never be read again: every later drain fails inside the native
// module. That must cost the SDK's metrics and nothing else: the operator keeps serving its own
// metrics, says once what was lost, and still stops cleanly.
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../deploy/local/ports.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, deleteContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startOperatorProcess, waitGone } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster } from '../support/simulator.js';

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
});

describe("the Temporal SDK's metrics buffer", () => {
  it(
    'overflowing loses the SDK metrics only: the operator still serves its own and stops cleanly',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'sdkbuf');
      const guid = await createWekaCluster(node, 'sdkbuf');
      const [port] = await freePorts(1);
      // A buffer far too small for a worker's first seconds, so it overflows at once.
      operator = await startOperatorProcess(
        {
          WEKA_TASK_QUEUE: uniqueName('sdkbuf'),
          WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
          WEKA_HTTP_PORT: String(port),
          WEKA_HTTP_ADDRESS: '127.0.0.1',
          WEKA_SDK_METRICS_BUFFER_SIZE: '10',
        },
        'compiled',
      );
      // Scraped often, as a Prometheus would, so drains come between the drops.
      const scraper = setInterval(() => void fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined), 300);
      const kc = kubeConfig();
      const ns = await uniqueNamespace('sdkbuf');
      const refs = await createDriveContainers(
        kc,
        ns,
        [
          {
            name: 'drive-0',
            spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 200 },
          },
        ],
        { clusterGUID: guid },
      );
      await eventually(
        'the drive container to be Ready',
        async () => ((await listContainers(kc, ns)).every(isReady) ? true : undefined),
        180_000,
      );
      await eventually(
        'the lost SDK metrics to be reported',
        async () => (operator!.output().includes("the Temporal SDK's metrics are lost") ? true : undefined),
        30_000,
      );
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/^weka_drives_build_info\{/m);
      expect(text).toMatch(/^weka_drives_sdk_metrics_lost 1$/m);
      // What is left of the SDK's series after a drop would only mislead.
      expect(text).not.toMatch(/^temporal_/m);

      await deleteContainers(
        kc,
        refs.map((r) => ({ namespace: ns, name: r.name })),
      );
      for (const r of refs) await waitGone({ namespace: ns, name: r.name }, 120_000);
      clearInterval(scraper);
      const exit = await operator.stop();
      const output = operator.output();
      expect(exit, output.slice(-4000)).toBe(0);
      // Said once, not at every drain nor for every dropped update.
      expect(output.split("the Temporal SDK's metrics are lost").length - 1).toBe(1);
      expect(output.split('metrics buffer is full').length - 1).toBeLessThanOrEqual(1);
    },
  );
});
