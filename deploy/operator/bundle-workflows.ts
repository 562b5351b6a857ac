// Bundles the workflow code once, at build time (`npm run build`), into dist/workflow-bundle.js:
// the compiled operator's workers load it instead of running webpack and swc at every start, which
// took seconds of CPU on each restart. Run from dist/ after tsc.
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { prebuiltBundlePath, quietBundlerLogger, workflowsPath } from './worker.js';

const started = performance.now();
const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger });
const path = prebuiltBundlePath();
await writeFile(path, code);
console.log(
  `workflows bundled into ${path} (${(code.length / 1e6).toFixed(1)} MB, ${Math.round(performance.now() - started)} ms)`,
);
