// Bundles the workflow code into one file an operator loads instead of running webpack and swc at
// every start, which takes seconds of CPU each time. `npm run build` runs it from dist/ after tsc,
// writing dist/workflow-bundle.js for the compiled operator; the sandbox runs it from source
// (`tsx deploy/operator/bundle-workflows.ts <file>`) while its servers start, and gives the file
// to its operator (WEKA_WORKFLOW_BUNDLE).
import { prebuiltBundlePath, writeWorkflowBundle } from './workflow-bundle.js';

const path = process.argv[2] ?? prebuiltBundlePath();
const { bytes, ms } = await writeWorkflowBundle(path);
console.log(`workflows bundled into ${path} (${(bytes / 1e6).toFixed(1)} MB, ${ms} ms)`);
