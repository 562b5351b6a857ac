// Where the operator's workflow code is and how it is bundled, apart from the workers: the build
// script, the sandbox and the test harness bundle it without loading the activities.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

/** workflows/index as source (tsx, tests) or compiled (the image). */
export function workflowsPath(): string {
  for (const candidate of ['../../workflows/index.ts', '../../workflows/index.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('cannot find workflows/index.ts or workflows/index.js next to the operator');
}

/**
 * Where `npm run build` writes the workflow bundle: dist/workflow-bundle.js, next to the compiled
 * operator. Running from source there is none, and the worker bundles when it starts.
 */
export function prebuiltBundlePath(): string {
  return fileURLToPath(new URL('../../workflow-bundle.js', import.meta.url));
}

/**
 * Bundles the workflow code into a file an operator can be given (WEKA_WORKFLOW_BUNDLE, or
 * dist/workflow-bundle.js at build time); says how big it is and how long it took.
 */
export async function writeWorkflowBundle(path: string): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger });
  await writeFile(path, code);
  return { bytes: code.length, ms: Math.round(performance.now() - started) };
}

/** The bundler reports every module at info level; the operator's log wants only problems. */
export const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, meta?: Record<string, unknown>) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: Record<string, unknown>) => console.error(message, meta ?? ''),
};
