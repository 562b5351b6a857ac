// Installs what the Helm chart installs cluster-wide besides the operator: the project's CRDs
// (crds/*.yaml), by server-side apply, waiting until each is Established, and the pods' priority class.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { podPriorityClassObject } from '../../src/manifests/pod-resources.js';
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  SchedulingV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

export const CRD_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));

export async function readCrds(dir = CRD_DIR): Promise<KubernetesObject[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const docs: KubernetesObject[] = [];
  for (const file of files) {
    // loadAllYaml turns the documents into client-node's model objects. KubernetesObjectApi
    // serializes through those models, and would silently drop keys such as
    // x-kubernetes-validations from a plain parsed object.
    for (const obj of loadAllYaml(await readFile(join(dir, file), 'utf8')) as (KubernetesObject | null)[]) {
      if (obj?.kind === 'CustomResourceDefinition') docs.push(obj);
    }
  }
  return docs;
}

export async function installCrds(kc: KubeConfig, deadlineMs: number, dir = CRD_DIR): Promise<string[]> {
  const crds = await readCrds(dir);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  for (const crd of crds) {
    await objects.patch(crd, undefined, undefined, 'weka-drives-controlplane', true, PatchStrategy.ServerSideApply);
  }
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const names = crds.map((c) => c.metadata?.name ?? '');
  const started = Date.now();
  for (const name of names) {
    for (;;) {
      const crd = await ext.readCustomResourceDefinition({ name });
      const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      if (established) break;
      if (Date.now() - started > deadlineMs) throw new Error(`CRD ${name} was not Established within ${deadlineMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return names;
}

/**
 * The priority class the operator's pods run with, as the Helm chart creates it
 * (templates/priorityclass.yaml): the local control plane has no chart installed.
 */
export async function installPriorityClass(kc: KubeConfig): Promise<void> {
  await kc
    .makeApiClient(SchedulingV1Api)
    .createPriorityClass({ body: podPriorityClassObject() })
    .catch((err: unknown) => {
      // A kept control plane restarts with it already there.
      if ((err as { code?: number }).code !== 409) throw err;
    });
}
