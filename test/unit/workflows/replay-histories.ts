// Replays recorded workflow histories (JSON from `temporal workflow show --output json`)
// against the current workflow code and prints one JSON line per history: {workflowId, error?}.
// Usage: node --import tsx test/unit/workflows/replay-histories.ts [DIR [WORKFLOWS]]  (exit 1 if
// any fails); WORKFLOWS replaces the operator's workflows module (the test of the test uses it).
// It runs as its own process because protobufjs, loaded twice under vitest, rejects the history.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { workflowsPath } from '../../../deploy/operator/workflow-bundle.js';

const dir = process.argv[2] ?? fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
const workflows = process.argv[3] ?? workflowsPath();
const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
const histories = await Promise.all(
  files.map(async (f) => ({
    workflowId: f.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(await readFile(`${dir}/${f}`, 'utf8'))),
  })),
);
let failed = 0;
for await (const result of Worker.runReplayHistories({ workflowsPath: workflows, replayName: 'fixtures' }, histories)) {
  if (result.error) failed++;
  console.log(
    JSON.stringify({ workflowId: result.workflowId, ...(result.error ? { error: result.error.message } : {}) }),
  );
}
process.exit(failed > 0 ? 1 : 0);
