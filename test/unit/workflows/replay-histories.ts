// Replays recorded workflow histories (JSON from `temporal workflow show --output json`)
// against the current workflow code and prints one JSON line per history: {dir, workflowId, error?}.
// Usage: node --import tsx test/unit/workflows/replay-histories.ts [--workflows FILE] DIR...  (exit 1
// if any fails); FILE replaces the operator's workflows module (the test of the test uses it). All
// the folders' histories replay on one worker, so the workflow code is bundled once for them all.
// It runs as its own process because protobufjs, loaded twice under vitest, rejects the history.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { workflowsPath } from '../../../deploy/operator/workflow-bundle.js';

const args = process.argv.slice(2);
const flag = args.indexOf('--workflows');
const workflows = flag < 0 ? workflowsPath() : args.splice(flag, 2)[1]!;
const dirs = args;
if (dirs.length === 0) throw new Error('usage: replay-histories.ts [--workflows FILE] DIR...');
// Histories of different folders may have the same name: each replays as <folder>/<name>.
const histories = (
  await Promise.all(
    dirs.map(async (dir) => {
      const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
      return Promise.all(
        files.map(async (f) => ({
          workflowId: `${basename(dir)}/${f.replace(/\.json$/, '')}`,
          history: historyFromJSON(JSON.parse(await readFile(join(dir, f), 'utf8'))),
        })),
      );
    }),
  )
).flat();
let failed = 0;
for await (const result of Worker.runReplayHistories({ workflowsPath: workflows, replayName: 'fixtures' }, histories)) {
  if (result.error) failed++;
  const [dir, ...name] = result.workflowId.split('/');
  console.log(
    JSON.stringify({ dir, workflowId: name.join('/'), ...(result.error ? { error: result.error.message } : {}) }),
  );
}
process.exit(failed > 0 ? 1 : 0);
