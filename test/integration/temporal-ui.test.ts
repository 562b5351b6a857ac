// The Temporal Web UI in a real browser (Debian's Chromium through playwright-core): a node's
// drive containers, started by the CR watcher and driven to Ready by the operator's worker, are
// found by filtering on the WekaNode search attribute, and a container workflow's page shows the
// summary the watcher gave it and its current step. Screenshots go to test-artifacts/temporal-ui/.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWatcher, type RunningWatcher } from '../../deploy/operator/watcher/watcher.js';
import { type ObjectRef } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { kubeConfig, temporalNamespace, temporalUiUrl, uniqueNamespace } from '../support/harness.js';
import { ensureChromium, launchBrowser, saveScreenshot, type TestBrowser } from '../support/browser.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { sharedDrivesNode, startTestOperator, waitForPhase, waitGone, type TestOperator } from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';
import { containerWorkflowId } from '../../src/protocol.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' as const },
];
const ARTIFACT_DIR = 'temporal-ui';
/** The UI is a single-page app: allow for its first load on a busy machine. */
const UI_TIMEOUT_MS = 30_000;

let op: TestOperator;
let watcher: RunningWatcher;
let browser: TestBrowser | undefined;
let node: string;
let containers: Array<{ ref: ObjectRef; uid: string; summary: string }> = [];

/** A drive WekaContainer as a user creates it (no finalizer: the watcher adds it and starts the workflow). */
async function createContainer(ref: ObjectRef, guid: string): Promise<string> {
  const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
  return (await createContainerObject(kubeConfig(), ref, spec, { clusterGUID: guid })).metadata.uid!;
}

beforeAll(async () => {
  // First, so that a machine without Chromium fails here with the reason, before any set-up.
  await ensureChromium();
  op = await startTestOperator();
  watcher = startWatcher({
    kubeConfig: kubeConfig(),
    temporal: op.client,
    taskQueue: op.deps.taskQueue,
    logger: pino({ level: 'warn' }),
  });
  await watcher.ready;
  node = await sharedDrivesNode(DEVICES, 'ui-node');
  const guid = await createWekaCluster(node, 'ui-cluster');
  const ns = await uniqueNamespace('ui');
  for (const name of ['drive-a', 'drive-b']) {
    const ref = { namespace: ns, name };
    containers.push({
      ref,
      uid: await createContainer(ref, guid),
      summary: `Drive container ${ns}/${name} on node ${node}`,
    });
  }
  await Promise.all(containers.map((c) => waitForPhase(c.ref, 'Ready', 150_000)));
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  await Promise.all(containers.map((c) => custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...c.ref })));
  await Promise.all(containers.map((c) => waitGone(c.ref, 120_000)));
  containers = [];
  await watcher?.stop();
  await op?.stop();
}, 180_000);

/** The text of the page and of its frames: the UI renders user markdown (summary, details) in iframes. */
async function allText(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((f) =>
      f
        .locator('body')
        .innerText()
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

async function waitForText(page: Page, wanted: string[]): Promise<void> {
  await eventually(
    `the page to show ${wanted.map((w) => JSON.stringify(w)).join(', ')}`,
    async () => {
      const text = await allText(page);
      return wanted.every((w) => text.includes(w)) ? true : undefined;
    },
    UI_TIMEOUT_MS,
  );
}

afterEach(async (ctx) => {
  // A failed look at the UI leaves a picture of what the browser saw.
  if (ctx.task.result?.state === 'fail' && browser)
    await saveScreenshot(browser.page, ARTIFACT_DIR, `failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-')}`);
});

describe('the Temporal Web UI', () => {
  it("lists a node's container workflows, with each one's container and phase, when filtered by WekaNode", async () => {
    const page = browser!.page;
    const ids = containers.map((c) => containerWorkflowId(c.uid));
    // Visibility is what the UI lists from; make sure it has caught up before looking.
    await eventually('visibility to list both container workflows', async () => {
      const seen: string[] = [];
      for await (const wf of op.client.workflow.list({ query: `WekaNode="${node}"` })) seen.push(wf.workflowId);
      return ids.every((id) => seen.includes(id)) ? true : undefined;
    });

    await page.goto(
      `${temporalUiUrl()}/namespaces/${temporalNamespace()}/workflows?query=${encodeURIComponent(`WekaNode="${node}"`)}`,
    );
    for (const id of ids) await page.getByText(id, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    // UI 2.42.1 has no column for a workflow's summary (its column settings offer the built-in
    // columns and the search attributes only), so the list shows the search attributes that
    // name the container and its phase; the summary is checked on the workflow's page below.
    await page.getByTestId('workflows-summary-table-configuration-button').click();
    for (const column of ['WekaContainer', 'WekaPhase'])
      await page.getByRole('button', { name: `Add ${column} column` }).click();
    // Room for the new columns in the screenshot.
    for (const column of ['Run ID', 'Start', 'End'])
      await page.getByRole('button', { name: `Remove ${column} column` }).click();
    await page.getByRole('button', { name: 'Close Workflows Table configuration' }).click();
    await page.getByRole('button', { name: 'Collapse saved views' }).click();

    const rows = page.locator('tr', { hasText: 'weka-' });
    // The node's mutex carries WekaNode too; nothing from any other node is listed.
    await eventually(
      'the list to show three rows',
      async () => ((await rows.count()) === 3 ? true : undefined),
      UI_TIMEOUT_MS,
    );
    for (const c of containers) {
      const row = rows.filter({ hasText: containerWorkflowId(c.uid) });
      await row.getByText(`${c.ref.namespace}/${c.ref.name}`, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.innerText()).toMatch(/driveContainerWorkflow[\s\S]*\bReady\b/);
    }
    await expect(rows.filter({ hasText: `weka-node/${node}` }).count()).resolves.toBe(1);
    await saveScreenshot(page, ARTIFACT_DIR, 'workflows-filtered-by-node');
    expect(browser!.blockedRequests).toEqual([]);
  });

  it("shows a container workflow's summary and current step under User Metadata", async () => {
    const page = browser!.page;
    const c = containers[0]!;
    const handle = op.client.workflow.getHandle(containerWorkflowId(c.uid));
    const { runId } = await handle.describe();
    await page.goto(
      `${temporalUiUrl()}/namespaces/${temporalNamespace()}/workflows/${encodeURIComponent(handle.workflowId)}/${runId}/user-metadata`,
    );
    await page.getByText('Current Details', { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    // The workflow set `**Ready**: ready; waiting for a spec change or deletion`; the UI renders the markdown.
    await waitForText(page, [c.summary, 'Ready: ready; waiting for a spec change or deletion']);
    await saveScreenshot(page, ARTIFACT_DIR, 'container-workflow-user-metadata');
    expect(browser!.blockedRequests).toEqual([]);
  });
});
