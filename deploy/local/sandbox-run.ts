// The sandbox once its servers are built (sandbox.ts prints the plan and builds them first): the
// control plane, the fake nodes, the operator, the sign-drives operations and the WekaClusters of
// sandbox-manifests.ts, then the live view until Ctrl-C, or until Ready or the timeout (--until-ready).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { backoffDelay, type Backoff } from '../../src/backoff.js';
import { messageOf } from '../../src/errors.js';
import { bundleOperatorSource, type SourceBundle } from '../operator/operator-bundle.js';
import { ControlPlane } from './control-plane.js';
import { createLocalBlockVolumes } from './local-volumes.js';
import { startServer, type ServerProcess } from './processes.js';
import {
  SANDBOX_CLUSTERS,
  SANDBOX_DEVICES,
  SANDBOX_NODES,
  SANDBOX_OPERATION,
  SANDBOX_OPERATOR_NAMESPACE,
  SANDBOX_STORAGE_CLASS,
  SANDBOX_VOLUME_DEVICES,
  SANDBOX_WHOLE_DEVICES,
  SANDBOX_WHOLE_OPERATION,
} from './sandbox-manifests.js';
import { readSandboxSnapshot } from './sandbox-snapshot.js';
import { ViewPrinter } from './sandbox-view.js';
import { localTemporalProfile } from './temporal.js';
import type { ToolPaths } from './tools.js';

export interface SandboxRunOptions {
  repoRoot: string;
  tools: ToolPaths;
  keep: boolean;
  untilReady: boolean;
  timeoutSeconds: number;
  /** When the sandbox started (Date.now()), before its plan and server builds. */
  startedAt: number;
}

const log = (m: string): void => console.log(m);

/** A steady second between tries: the apiserver settles in seconds. */
const TRANSIENT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 1_000, jitter: false };

/** The apiserver answers 429 or 5xx while a new CRD's storage initializes: wait and ask again. */
async function retryTransient<T>(what: string, work: () => Promise<T>, attempts = 30): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: number }).code ?? 0;
      if (i >= attempts || !(code === 429 || code >= 500)) throw err;
      if (i === 1) log(`${what}: the apiserver answered ${code}; retrying`);
      await new Promise((r) => setTimeout(r, backoffDelay(i, TRANSIENT_BACKOFF)));
    }
  }
}

function whereToLook(cp: ControlPlane): string {
  return `Where to look:
  Temporal UI:  ${cp.temporalUiUrl}   (filter: WekaNode="${SANDBOX_NODES[0]}")
  kubeconfig:   ${cp.kubeconfigPath}
    export KUBECONFIG=${cp.kubeconfigPath}
    kubectl get weka -A
    kubectl get wekacontainers -A -o wide
    kubectl describe wekamanualoperation -n ${SANDBOX_OPERATOR_NAMESPACE} ${SANDBOX_OPERATION.metadata.name}
    kubectl get pvc,pods -n ${SANDBOX_OPERATOR_NAMESPACE} -l weka.weka.io/device-set   (tenant-d's device set)
  grow and scale (once Ready; the view follows):
    kubectl patch wekacluster -n tenant-a analytics --type merge -p '{"spec":{"dynamicTemplate":{"containerCapacity":16000}}}'
    kubectl patch wekacluster -n tenant-a analytics --type merge -p '{"spec":{"dynamicTemplate":{"driveContainers":4}}}'
  logs:         ${cp.logDir} (operator.log, kube-apiserver.log, temporal.log, kwok-*.log)
`;
}

const seconds = (ms: number): number => Math.round(ms / 1000);

async function removeOperatorBundle(bundle: SourceBundle | Error): Promise<void> {
  if (!(bundle instanceof Error)) await bundle.remove();
}

export async function runSandbox(options: SandboxRunOptions): Promise<never> {
  const dataDir = options.keep ? join(options.repoRoot, '.tmp', 'sandbox') : undefined;
  if (dataDir) await mkdir(dataDir, { recursive: true });
  // The operator runs from source, bundled as the image's build bundles it and run under plain
  // Node.js (operator-bundle.ts says why not tsx). Its workflow code is bundled while the servers
  // start, in a process of its own (webpack would hold up this one's event loop, which starts the
  // servers); esbuild works in a process of its own anyway.
  const operatorBundled = bundleOperatorSource(join(options.repoRoot, 'deploy/operator/main.ts')).then(
    (b) => b,
    (err: unknown) => new Error(messageOf(err)),
  );
  const bundleDir = await mkdtemp(join(tmpdir(), 'weka-sandbox-workflows-'));
  const bundlePath = join(bundleDir, 'workflow-bundle.js');
  const bundled = promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(options.repoRoot, 'deploy/operator/bundle-workflows.ts'), bundlePath],
    { cwd: options.repoRoot },
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  const cp = await ControlPlane.start({ ...(dataDir ? { dataDir } : {}), log, tools: options.tools }).catch(
    async (err: unknown) => {
      // start() has stopped whatever it had started.
      console.error(`sandbox: the control plane did not start: ${messageOf(err)}`);
      await rm(bundleDir, { recursive: true, force: true });
      await removeOperatorBundle(await operatorBundled);
      process.exit(1);
    },
  );
  // --timeout and the view's clock count from here: builds and the control plane's start-up vary by machine.
  const upAt = Date.now();
  let operator: ServerProcess | undefined;
  /**
   * Stops the operator and the control plane once, then exits with the first caller's code: the
   * progress loop, seeing the operator stopped by a Ctrl-C, must not exit before the control plane
   * is down, nor with its own code.
   */
  let stopping: Promise<number> | undefined;
  async function shutdown(code: number, why?: string): Promise<never> {
    stopping ??= (async () => {
      if (why) console.log(`\n${why}`);
      await operator?.stop();
      await cp.stop();
      await rm(bundleDir, { recursive: true, force: true });
      await removeOperatorBundle(await operatorBundled);
      if (options.keep) console.log(`state kept in ${cp.dataDir}; run again with --keep to resume`);
      return code;
    })();
    process.exit(await stopping);
  }
  process.on('SIGINT', () => void shutdown(130, 'Ctrl-C: stopping the operator and the control plane ...'));
  process.on('SIGTERM', () => void shutdown(143, 'SIGTERM: stopping ...'));

  try {
    const kc = cp.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ensureNamespace = async (name: string) =>
      core.createNamespace({ body: { metadata: { name } } }).catch((e: { code?: number }) => {
        if (e.code !== 409) throw e;
      });
    await ensureNamespace(SANDBOX_OPERATOR_NAMESPACE);

    const temporalProfilePath = join(cp.logDir, 'temporal.toml');
    await writeFile(temporalProfilePath, localTemporalProfile(cp.temporalAddress, cp.temporalNamespace));
    const bundleError = await bundled;
    if (bundleError !== undefined)
      await shutdown(1, `sandbox: bundling the workflow code failed: ${messageOf(bundleError)}`);
    const operatorBundle = await operatorBundled;
    if (operatorBundle instanceof Error)
      return shutdown(1, `sandbox: bundling the operator failed: ${operatorBundle.message}`);
    operator = startServer({
      name: 'operator',
      command: process.execPath,
      args: [operatorBundle.path],
      cwd: options.repoRoot,
      logPath: join(cp.logDir, 'operator.log'),
      env: {
        ...process.env,
        KUBECONFIG: cp.kubeconfigPath,
        // Instead of the developer's own ~/.config/temporalio/temporal.toml, whose API key or TLS
        // settings would otherwise apply to the local server too.
        TEMPORAL_CONFIG_FILE: temporalProfilePath,
        TEMPORAL_ADDRESS: cp.temporalAddress,
        TEMPORAL_NAMESPACE: cp.temporalNamespace,
        WEKA_OPERATOR_NAMESPACE: SANDBOX_OPERATOR_NAMESPACE,
        WEKA_HTTP_PORT: '0',
        WEKA_WORKFLOW_BUNDLE: bundlePath,
        LOG_LEVEL: 'info',
      },
    });

    // Nodes and volumes are added while the operator starts; it finds them when it lists.
    for (const name of SANDBOX_NODES)
      await cp.addNode({
        name,
        labels: { 'weka.weka.io/sandbox': 'true' },
        devices: [...SANDBOX_DEVICES, ...SANDBOX_WHOLE_DEVICES, ...SANDBOX_VOLUME_DEVICES],
      });
    await createLocalBlockVolumes(
      kc,
      SANDBOX_STORAGE_CLASS,
      SANDBOX_NODES.flatMap((node) =>
        SANDBOX_VOLUME_DEVICES.map((d) => ({ node, path: d.path, capacityGiB: d.capacityGiB })),
      ),
    );

    const create = async (plural: string, namespace: string, body: object) =>
      retryTransient(`creating a ${plural} object`, () =>
        custom
          .createNamespacedCustomObject({ group: 'weka.weka.io', version: 'v1alpha1', plural, namespace, body })
          .catch((e: { code?: number }) => {
            if (e.code !== 409) throw e;
          }),
      );
    await create('wekamanualoperations', SANDBOX_OPERATOR_NAMESPACE, SANDBOX_OPERATION);
    await create('wekamanualoperations', SANDBOX_OPERATOR_NAMESPACE, SANDBOX_WHOLE_OPERATION);
    for (const c of SANDBOX_CLUSTERS) {
      await ensureNamespace(c.metadata.namespace);
      await create('wekaclusters', c.metadata.namespace, c);
    }

    const addresses = whereToLook(cp);
    console.log(`\n${addresses}`);
    const view = new ViewPrinter({
      terminal: process.stdout.isTTY === true,
      header: addresses,
      write: (text) => process.stdout.write(text),
    });
    const expected = SANDBOX_CLUSTERS.reduce((n, c) => n + c.spec.dynamicTemplate.driveContainers, 0);
    for (;;) {
      if (operator.hasExited())
        await shutdown(1, `the operator exited (${String(await operator.exited)}); see ${operator.logPath}`);
      const s = await retryTransient('reading the progress', () =>
        readSandboxSnapshot(custom, core, Date.now() - upAt),
      );
      view.show(s, Date.now());
      const ready = s.containers.filter((c) => c.phase === 'Ready').length;
      if (options.untilReady) {
        const timing = `${seconds(Date.now() - upAt)} s after the control plane came up (${seconds(Date.now() - options.startedAt)} s in all)`;
        if (
          ready === expected &&
          s.clusters.every((c) => c.phase === 'Ready') &&
          s.clusters.length === SANDBOX_CLUSTERS.length
        ) {
          await shutdown(0, `sandbox Ready: ${ready} drive containers in ${s.clusters.length} clusters, ${timing}`);
        }
        if (Date.now() - upAt > options.timeoutSeconds * 1000) {
          await shutdown(
            1,
            `timed out ${timing} (--timeout ${options.timeoutSeconds}): ${ready} of ${expected} drive containers Ready (${s.stage}); see ${cp.logDir}`,
          );
        }
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    return shutdown(1);
  }
}
