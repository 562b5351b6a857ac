// What a kubelet does for a pod's block volumes, for the fake nodes: a pod that uses a bound
// block-mode claim sees the volume's device at the path its volumeDevices name. The local control
// plane's volumes are local PersistentVolumes whose path is a simulated device of their node, so
// "mapping" is telling that pod's exec where each of its device paths leads: a kwok Exec object
// named after the pod (kwok runs with --enable-crds=Exec) sets WEKA_SIM_DEVICE_MAP, which the
// simulator shims pass on as --device-map. Until the Exec exists the pod's commands see no such
// device, as a pod whose volume is not attached yet would.
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type KubeConfig,
  type V1CustomResourceDefinition,
  type V1Pod,
} from '@kubernetes/client-node';

export const KWOK_GROUP = 'kwok.x-k8s.io';
export const KWOK_VERSION = 'v1alpha1';
export const DEVICE_MAP_ENV = 'WEKA_SIM_DEVICE_MAP';

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

export interface BlockVolumeMapper {
  stop(): Promise<void>;
}

/**
 * Watches every pod (an informer: one list, then changes) and gives each scheduled pod with block
 * volumes the Exec that maps its device paths, checking the cached pods not mapped yet every
 * `intervalMs` (their claims bind after they are seen). The Exec is owned by its pod, so the
 * garbage collector deletes it with the pod.
 */
export function startBlockVolumeMapper(
  kc: KubeConfig,
  log: (message: string) => void,
  intervalMs = 250,
): BlockVolumeMapper {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  const mapped = new Set<string>(); // uids of the pods whose Exec is written
  let stopped = false;
  informer.on('error', () => {
    // The apiserver went away (a chaos restart, or stop()): watch again a little later.
    setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, 1000);
  });
  informer.on('delete', (pod) => mapped.delete(pod.metadata?.uid ?? ''));

  async function mapPod(pod: V1Pod): Promise<void> {
    const { name = '', namespace = '', uid = '' } = pod.metadata ?? {};
    const value = await deviceMapOf(core, pod);
    if (value === null) return;
    const body = {
      apiVersion: `${KWOK_GROUP}/${KWOK_VERSION}`,
      kind: 'Exec',
      metadata: { name, namespace, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] },
      spec: { execs: [{ local: { envs: [{ name: DEVICE_MAP_ENV, value }] } }] },
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
    mapped.add(uid);
    log(`block volumes: pod ${namespace}/${name} sees ${value}`);
  }

  async function pass(): Promise<void> {
    for (const pod of informer.list()) {
      const uid = pod.metadata?.uid ?? '';
      const devices = (pod.spec?.containers ?? []).some((c) => (c.volumeDevices ?? []).length > 0);
      if (!devices || mapped.has(uid) || !pod.spec?.nodeName || pod.metadata?.deletionTimestamp) continue;
      await mapPod(pod).catch((err: unknown) => log(`block volumes: ${pod.metadata?.name}: ${String(err)}`));
    }
  }

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
