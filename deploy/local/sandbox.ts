// `npm run sandbox`: the whole product on one machine. Starts the local control plane with three
// fake nodes (simulated TLC and QLC NVMe drives), runs the operator, signs the drives for proxy
// with a WekaManualOperation, creates two WekaClusters that share the three nodes, and shows
// their progress live.
//   --keep          keep the state (in .tmp/sandbox) for the next start
//   --until-ready   exit 0 once every drive container is Ready; non-zero, with the reason, on timeout
//   --timeout S     how long --until-ready waits (default 300)
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import {
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import type { WekaCluster, WekaContainer, WekaManualOperation } from '../../src/api/index.js';
import { backoffDelay, type Backoff } from '../../src/backoff.js';
import { ControlPlane } from './control-plane.js';
import { startServer, type ServerProcess } from './processes.js';
import { renderSnapshot, templateCapacity, type SandboxSnapshot } from './sandbox-view.js';
import {
  SANDBOX_CLUSTERS,
  SANDBOX_DEVICES,
  SANDBOX_NODES,
  SANDBOX_OPERATION,
  SANDBOX_OPERATOR_NAMESPACE,
  SANDBOX_WHOLE_DEVICES,
  SANDBOX_WHOLE_OPERATION,
} from './sandbox-manifests.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: {
    keep: { type: 'boolean', default: false },
    'until-ready': { type: 'boolean', default: false },
    timeout: { type: 'string', default: '300' },
  },
});
const timeoutMs = Number(values.timeout) * 1000;
if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  console.error(`--timeout must be a number of seconds above 0, got "${values.timeout}"`);
  process.exit(1);
}
const started = Date.now();
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

const dataDir = values.keep ? join(repoRoot, '.tmp', 'sandbox') : undefined;
if (dataDir) await mkdir(dataDir, { recursive: true });
const cp = await ControlPlane.start({ ...(dataDir ? { dataDir } : {}), log });
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
    if (values.keep) console.log(`state kept in ${cp.dataDir}; run again with --keep to resume`);
    return code;
  })();
  process.exit(await stopping);
}
process.on('SIGINT', () => void shutdown(130, 'Ctrl-C: stopping the operator and the control plane ...'));
process.on('SIGTERM', () => void shutdown(143, 'SIGTERM: stopping ...'));

try {
  for (const name of SANDBOX_NODES)
    await cp.addNode({
      name,
      labels: { 'weka.weka.io/sandbox': 'true' },
      devices: [...SANDBOX_DEVICES, ...SANDBOX_WHOLE_DEVICES],
    });
  const kc = cp.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ensureNamespace = async (name: string) =>
    core.createNamespace({ body: { metadata: { name } } }).catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
  await ensureNamespace(SANDBOX_OPERATOR_NAMESPACE);

  operator = startServer({
    name: 'operator',
    command: process.execPath,
    args: ['--import', 'tsx', join(repoRoot, 'deploy/operator/main.ts')],
    cwd: repoRoot,
    logPath: join(cp.logDir, 'operator.log'),
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfigPath,
      TEMPORAL_ADDRESS: cp.temporalAddress,
      TEMPORAL_NAMESPACE: cp.temporalNamespace,
      WEKA_OPERATOR_NAMESPACE: SANDBOX_OPERATOR_NAMESPACE,
      WEKA_HTTP_PORT: '0',
      LOG_LEVEL: 'info',
    },
  });

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

  console.log(`
Where to look:
  Temporal UI:  ${cp.temporalUiUrl}   (filter: WekaNode="${SANDBOX_NODES[0]}")
  kubeconfig:   ${cp.kubeconfigPath}
    export KUBECONFIG=${cp.kubeconfigPath}
    kubectl get weka -A
    kubectl get wekacontainers -A -o wide
    kubectl describe wekamanualoperation -n ${SANDBOX_OPERATOR_NAMESPACE} ${SANDBOX_OPERATION.metadata.name}
  grow and scale (once Ready; the view follows):
    kubectl patch wekacluster -n tenant-a analytics --type merge -p '{"spec":{"dynamicTemplate":{"containerCapacity":16000}}}'
    kubectl patch wekacluster -n tenant-a analytics --type merge -p '{"spec":{"dynamicTemplate":{"driveContainers":4}}}'
  logs:         ${cp.logDir} (operator.log, kube-apiserver.log, temporal.log, kwok-*.log)
`);

  const snapshot = async (): Promise<SandboxSnapshot> => {
    const list = async <T>(plural: string) =>
      ((await custom.listClusterCustomObject({ group: 'weka.weka.io', version: 'v1alpha1', plural })) as { items: T[] })
        .items;
    const [clusters, containers, operations, nodes] = await Promise.all([
      list<WekaCluster>('wekaclusters'),
      list<WekaContainer>('wekacontainers'),
      list<WekaManualOperation>('wekamanualoperations'),
      core.listNode({ labelSelector: 'weka.weka.io/sandbox=true' }),
    ]);
    const phaseOf = (name: string) => operations.find((o) => o.metadata.name === name)?.status?.phase ?? 'Pending';
    return {
      stage: `sign-drives shared ${phaseOf(SANDBOX_OPERATION.metadata.name)}, exclusive ${phaseOf(SANDBOX_WHOLE_OPERATION.metadata.name)}`,
      elapsedMs: Date.now() - started,
      clusters: clusters.map((c) => ({
        namespace: c.metadata.namespace!,
        name: c.metadata.name!,
        phase: c.status?.phase ?? 'Pending',
        guid: c.status?.clusterGUID,
        driveContainers: c.spec.dynamicTemplate?.driveContainers,
        capacity: templateCapacity(c.spec.dynamicTemplate),
      })),
      containers: containers
        .filter((c) => c.spec.mode === 'drive')
        .map((c) => ({
          namespace: c.metadata.namespace!,
          name: c.metadata.name!,
          node: c.spec.nodeName ?? '',
          phase: c.status?.phase ?? 'Pending',
          cluster: c.spec.cluster,
          virtualDrives: (c.status?.allocations?.virtualDrives ?? []).map((v) => ({
            capacityGiB: v.capacityGiB,
            type: v.type ?? '',
            physicalUUID: v.physicalUUID,
          })),
          wholeDrives: c.status?.allocations?.drives ?? [],
        })),
      nodes: nodes.items.map((n) => {
        const decoded = decodeSharedDrivesAnnotation(n.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
        const whole = decodeSerialsAnnotation(
          EXCLUSIVE_DRIVES_ANNOTATION,
          n.metadata?.annotations?.[EXCLUSIVE_DRIVES_ANNOTATION],
        );
        return {
          name: n.metadata!.name!,
          drives: decoded.ok ? [...decoded.drives] : [],
          wholeDrives: whole.ok ? whole.serials : [],
        };
      }),
    };
  };

  const expected = SANDBOX_CLUSTERS.reduce((n, c) => n + c.spec.dynamicTemplate.driveContainers, 0);
  const tty = process.stdout.isTTY;
  let last = '';
  for (;;) {
    if (operator.hasExited())
      await shutdown(1, `the operator exited (${String(await operator.exited)}); see ${operator.logPath}`);
    const s = await retryTransient('reading the progress', snapshot);
    const text = renderSnapshot(s);
    if (text !== last) {
      // A terminal gets a redrawn screen; a log (CI) gets each change once.
      process.stdout.write(tty ? `\x1b[H\x1b[2J${text}\n` : `${text}\n\n`);
      last = text;
    }
    const ready = s.containers.filter((c) => c.phase === 'Ready').length;
    if (values['until-ready']) {
      if (
        ready === expected &&
        s.clusters.every((c) => c.phase === 'Ready') &&
        s.clusters.length === SANDBOX_CLUSTERS.length
      ) {
        await shutdown(
          0,
          `sandbox Ready: ${ready} drive containers in ${s.clusters.length} clusters, in ${Math.round((Date.now() - started) / 1000)} s`,
        );
      }
      if (Date.now() - started > timeoutMs) {
        await shutdown(
          1,
          `timed out after ${values.timeout} s: ${ready} of ${expected} drive containers Ready (${s.stage}); see ${cp.logDir}`,
        );
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  await shutdown(1);
}
