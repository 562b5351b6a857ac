// What a kubelet and a container runtime give a pod's commands, for the fake nodes, told to the
// simulator through the environment of the pod's execs: a kwok Exec object named after the pod
// (kwok runs with --enable-crds=Exec) sets it, and the simulator shims pass it on.
// - Block volumes: a pod that uses a bound block-mode claim sees the volume's device at the path
//   its volumeDevices name. The local control plane's volumes are local PersistentVolumes whose
//   path is a simulated device of their node, so the pod's WEKA_SIM_DEVICE_MAP says where each of
//   its device paths leads. Until the Exec exists the pod's commands see no such device, as a pod
//   whose volume is not attached yet would.
// - hostPID: a pod that shares the host's PID namespace has WEKA_SIM_HOST_PID set, so that
//   `nsenter --target 1` there enters the host's namespaces and sees the host's mounts.
// - The pod's own environment: a container's environment is its exec's too, and the Weka image
//   sets its Weka container up from NAME, PORT, AGENT_PORT and JOIN_IPS; MANAGEMENT_IP is the pod's
//   IP (the downward API's status.podIP), which kwok gives it when it runs.
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
  type V1Pod,
} from '@kubernetes/client-node';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';

export const KWOK_GROUP = 'kwok.x-k8s.io';
export const KWOK_VERSION = 'v1alpha1';
export const DEVICE_MAP_ENV = 'WEKA_SIM_DEVICE_MAP';
export const HOST_PID_ENV = 'WEKA_SIM_HOST_PID';
/** Set on a hostPID pod once its Exec is written; kwok runs such a pod only then (kwok/stages.yaml). */
export const EXEC_ENV_ANNOTATION = 'weka-sim.local/exec-env';
/** How long a hostPID pod may wait for kwok to apply its Exec before it runs anyway (logged). */
const EXEC_SEEN_DEADLINE_MS = 30_000;

/** kwok's namespaced Exec kind, with its spec left open: kwok validates what it reads. */
export const KWOK_EXEC_CRD: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `execs.${KWOK_GROUP}` },
  spec: {
    group: KWOK_GROUP,
    names: { kind: 'Exec', listKind: 'ExecList', plural: 'execs', singular: 'exec' },
    scope: 'Namespaced',
    versions: [
      {
        name: KWOK_VERSION,
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          },
        },
      },
    ],
  },
};

/** Installs kwok's Exec kind and waits until it is served: kwok lists it when it starts. */
export async function installKwokExecCrd(kc: KubeConfig, deadlineMs: number): Promise<void> {
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  try {
    await ext.createCustomResourceDefinition({ body: KWOK_EXEC_CRD });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const started = Date.now();
  for (;;) {
    const crd = await ext.readCustomResourceDefinition({ name: KWOK_EXEC_CRD.metadata!.name! });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() - started > deadlineMs) throw new Error(`kwok's Exec CRD was not Established in ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** "alias=path,..." for a pod's block volumes, or null while any of them is not bound to a local volume. */
export async function deviceMapOf(core: CoreV1Api, pod: V1Pod): Promise<string | null> {
  const namespace = pod.metadata?.namespace ?? '';
  const claims = new Map(
    (pod.spec?.volumes ?? [])
      .filter((v) => v.persistentVolumeClaim)
      .map((v) => [v.name, v.persistentVolumeClaim!.claimName]),
  );
  const entries: string[] = [];
  for (const container of pod.spec?.containers ?? [])
    for (const device of container.volumeDevices ?? []) {
      const claimName = claims.get(device.name);
      if (claimName === undefined) return null;
      const claim = await core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
      const volume = claim.spec?.volumeName;
      if (claim.status?.phase !== 'Bound' || !volume) return null;
      const path = (await core.readPersistentVolume({ name: volume })).spec?.local?.path;
      if (!path) return null;
      entries.push(`${device.devicePath}=${path}`);
    }
  return entries.join(',');
}

/** What a pod's execs need set, or null while a block volume of it is not bound yet; {} for nothing. */
export async function execEnvOf(core: CoreV1Api, pod: V1Pod): Promise<Record<string, string> | null> {
  const env: Record<string, string> = {};
  if (pod.spec?.hostPID) env[HOST_PID_ENV] = 'true';
  if (runsWeka(pod)) {
    const ip = pod.status?.podIP;
    // A pod that does not wait for its Exec runs at once, and has its IP then: its Weka
    // container is set up with it. (One that waits, hostPID, gets its IP only after.)
    if (!ip && !pod.spec?.hostPID) return null;
    for (const e of pod.spec?.containers[0]?.env ?? [])
      if (WEKA_ENV.includes(e.name) && e.value !== undefined) env[e.name] = e.value;
    if (ip) env['MANAGEMENT_IP'] = ip;
  }
  if (hasBlockVolumes(pod)) {
    const map = await deviceMapOf(core, pod);
    if (map === null) return null;
    env[DEVICE_MAP_ENV] = map;
  }
  return env;
}

/** What of a weka pod's environment its image sets its Weka container up from (the simulator's shims pass it on). */
const WEKA_ENV = ['NAME', 'PORT', 'AGENT_PORT', 'JOIN_IPS'];

function runsWeka(pod: V1Pod): boolean {
  return (pod.spec?.containers[0]?.env ?? []).some((e) => e.name === 'NAME' && e.value !== undefined);
}

function hasBlockVolumes(pod: V1Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => (c.volumeDevices ?? []).length > 0);
}

export interface PodExecEnvironments {
  stop(): Promise<void>;
}

/**
 * Watches every pod (an informer: one list, then changes) and gives each scheduled pod that needs
 * one the Exec that sets its environment: at once when the pod is seen, and again for the cached
 * pods not done yet every `intervalMs` (their claims bind after they are seen). The Exec is owned
 * by its pod, so the garbage collector deletes it with the pod.
 */
export function startPodExecEnvironments(
  kc: KubeConfig,
  log: (message: string) => void,
  intervalMs = 250,
): PodExecEnvironments {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const exec = KubeExecTransport.fromKubeConfig(kc, { maxAttempts: 1 });
  const informer = makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  const mapped = new Set<string>(); // uids of the pods whose Exec is written
  const writing = new Set<string>(); // uids of the pods whose Exec is being written
  let stopped = false;
  informer.on('error', () => {
    // The apiserver went away (a chaos restart, or stop()): watch again a little later.
    setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, 1000);
  });
  informer.on('delete', (pod) => mapped.delete(pod.metadata?.uid ?? ''));

  async function writeExec(pod: V1Pod): Promise<void> {
    const { name = '', namespace = '', uid = '' } = pod.metadata ?? {};
    const env = await execEnvOf(core, pod);
    if (env === null) return;
    const body = {
      apiVersion: `${KWOK_GROUP}/${KWOK_VERSION}`,
      kind: 'Exec',
      metadata: { name, namespace, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] },
      spec: { execs: [{ local: { envs: Object.entries(env).map(([key, value]) => ({ name: key, value })) } }] },
    };
    const target = { group: KWOK_GROUP, version: KWOK_VERSION, namespace, plural: 'execs' };
    try {
      await custom.createNamespacedCustomObject({ ...target, body });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
      // That of an earlier pod of the same name: replaced by this pod's.
      await custom.deleteNamespacedCustomObject({ ...target, name });
      await custom.createNamespacedCustomObject({ ...target, body });
    }
    if (pod.spec?.hostPID) {
      if (!(await execSees(pod, HOST_PID_ENV, env[HOST_PID_ENV]!)))
        log(`exec environment: pod ${namespace}/${name}: kwok did not apply its Exec in ${EXEC_SEEN_DEADLINE_MS} ms`);
      await core.patchNamespacedPod(
        { name, namespace, body: { metadata: { annotations: { [EXEC_ENV_ANNOTATION]: 'written' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    mapped.add(uid);
    log(`exec environment: pod ${namespace}/${name} has ${JSON.stringify(env)}`);
  }

  /**
   * Whether an exec into the pod has `name` set to `value`: kwok reads Execs from a watch of its
   * own, so the one just written applies a moment later. Asked until it does, or the deadline.
   */
  async function execSees(pod: V1Pod, name: string, value: string): Promise<boolean> {
    const target = {
      namespace: pod.metadata?.namespace ?? '',
      pod: pod.metadata?.name ?? '',
      container: pod.spec?.containers[0]?.name ?? '',
    };
    const deadline = Date.now() + EXEC_SEEN_DEADLINE_MS;
    while (Date.now() < deadline && !stopped) {
      const seen = await exec.run(target, ['printenv', name]).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (seen === value) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  async function visit(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const needed = hasBlockVolumes(pod) || pod.spec?.hostPID === true || runsWeka(pod);
    if (!needed || mapped.has(uid) || writing.has(uid) || !pod.spec?.nodeName || pod.metadata?.deletionTimestamp)
      return;
    writing.add(uid);
    try {
      await writeExec(pod);
    } catch (err) {
      log(`exec environment: ${pod.metadata?.name}: ${String(err)}`);
    } finally {
      writing.delete(uid);
    }
  }

  async function pass(): Promise<void> {
    for (const pod of informer.list()) await visit(pod);
  }

  // A pod bound to its node at creation (an ssdproxy) may be exec'd into as soon as kwok runs it.
  informer.on('add', (pod) => void visit(pod));

  const started = informer.start().catch(() => undefined);
  const loop = (async () => {
    await started;
    while (!stopped) {
      await pass();
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      await informer.stop().catch(() => undefined);
    },
  };
}
