// `npm run sandbox`: the whole product on one machine. Starts the local control plane with three
// fake nodes (simulated TLC and QLC NVMe drives, some of them local block volumes), runs the
// operator, signs the drives with WekaManualOperations, creates the WekaClusters of
// sandbox-manifests.ts (one of them bringing drives from a device set), and shows their progress live.
// Options: SANDBOX_USAGE in sandbox-plan.ts (`npm run sandbox -- --help`).
//
// This entry loads little, so that the plan (what is cached, what it builds and for about how long)
// is on screen at once; the servers' builds stream their progress; the rest (the Kubernetes client,
// the control plane, the operator) is imported after them.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { messageOf } from '../../src/errors.js';
import { SANDBOX_CLUSTERS, SANDBOX_NODES, SANDBOX_OPERATION, SANDBOX_WHOLE_OPERATION } from './sandbox-manifests.js';
import { renderSandboxPlan, SANDBOX_USAGE } from './sandbox-plan.js';
import { buildEstimates, CONTROL_PLANE_TOOLS, ensureTools, isExecutable, toolStates, ToolBuildError } from './tools.js';

const startedAt = Date.now();
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function parseOptions(): { keep: boolean; untilReady: boolean; timeoutSeconds: number } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        keep: { type: 'boolean', default: false },
        'until-ready': { type: 'boolean', default: false },
        timeout: { type: 'string', default: '300' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    console.error(`${messageOf(err)}\n${SANDBOX_USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(SANDBOX_USAGE);
    process.exit(0);
  }
  const timeoutSeconds = Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    console.error(`--timeout must be a number of seconds above 0, got "${values.timeout}"`);
    process.exit(2);
  }
  return { keep: values.keep, untilReady: values['until-ready'], timeoutSeconds };
}

const options = parseOptions();
const { cacheDir, tools: states } = await toolStates(CONTROL_PLANE_TOOLS);
console.log(
  renderSandboxPlan({
    cacheDir,
    tools: states,
    estimates: buildEstimates(states),
    nodes: SANDBOX_NODES,
    operations: [SANDBOX_OPERATION, SANDBOX_WHOLE_OPERATION].length,
    clusters: SANDBOX_CLUSTERS.map((c) => ({
      namespace: c.metadata.namespace,
      name: c.metadata.name,
      driveContainers: c.spec.dynamicTemplate.driveContainers,
    })),
    untilReady: options.untilReady,
    timeoutSeconds: options.timeoutSeconds,
    keptIn: options.keep ? join(repoRoot, '.tmp', 'sandbox') : undefined,
  }),
);
console.log('');

let tools;
try {
  tools = await ensureTools(CONTROL_PLANE_TOOLS, { log: (line) => console.log(line) });
} catch (err) {
  if (!(err instanceof ToolBuildError)) throw err;
  // The build's output above ends with the failed build's log tail; this names the log once more.
  const failed = states.find((t) => !t.cached && !isExecutable(t.binary));
  console.error(
    `sandbox: building ${failed?.name ?? err.tools.join(', ')} failed (${err.exit}), so nothing was started; its log: ${failed?.buildLog ?? 'see above'}`,
  );
  process.exit(1);
}
if (states.some((t) => !t.cached))
  console.log(`sandbox: the servers are built (${Math.round((Date.now() - startedAt) / 1000)} s); starting them`);

const { runSandbox } = await import('./sandbox-run.js');
await runSandbox({ ...options, repoRoot, tools, startedAt });
