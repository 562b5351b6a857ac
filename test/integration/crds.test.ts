// The CRDs in crds/*.yaml against the real apiserver of the local control plane: samples are
// accepted, each CEL rule rejects its manifest with its own message, and spec and status are
// written only through their own endpoints.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_GROUP,
  API_VERSION,
  WEKA_CLUSTER_KIND,
  WEKA_CLUSTER_PLURAL,
  WEKA_CONTAINER_KIND,
  WEKA_CONTAINER_PLURAL,
  WEKA_MANUAL_OPERATION_KIND,
  WEKA_MANUAL_OPERATION_PLURAL,
  type WekaContainer,
} from '../../src/api/index.js';
import { container, CREATE_VIOLATIONS, UPDATE_VIOLATIONS } from '../unit/api/rule-violations.js';
import { loadSamples } from '../unit/api/samples.js';
import { rejection } from '../support/containers.js';
import { kubeConfig, uniqueNamespace } from '../support/harness.js';

type Manifest = Record<string, unknown>;

const PLURALS: Record<string, string> = {
  [WEKA_CLUSTER_KIND]: WEKA_CLUSTER_PLURAL,
  [WEKA_CONTAINER_KIND]: WEKA_CONTAINER_PLURAL,
  [WEKA_MANUAL_OPERATION_KIND]: WEKA_MANUAL_OPERATION_PLURAL,
};

let api: CustomObjectsApi;
let namespace: string;

beforeAll(async () => {
  api = kubeConfig().makeApiClient(CustomObjectsApi);
  namespace = await uniqueNamespace('crds');
});

// The control plane is shared by every test file: leave no object for a later file's watcher to
// act on (the samples name nodes that do not exist there).
afterAll(async () => {
  for (const plural of Object.values(PLURALS)) {
    const list = (await api.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural,
    })) as { items: Manifest[] };
    for (const item of list.items)
      await api.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural,
        name: nameOf(item),
      });
  }
});

function where(manifest: Manifest) {
  const plural = PLURALS[String(manifest['kind'])];
  if (!plural) throw new Error(`no plural for kind ${String(manifest['kind'])}`);
  return { group: API_GROUP, version: API_VERSION, namespace, plural };
}

const nameOf = (manifest: Manifest): string => (manifest['metadata'] as { name: string }).name;

async function create(manifest: Manifest): Promise<Manifest> {
  return (await api.createNamespacedCustomObject({ ...where(manifest), body: manifest })) as Manifest;
}

async function get(manifest: Manifest): Promise<Manifest> {
  return (await api.getNamespacedCustomObject({ ...where(manifest), name: nameOf(manifest) })) as Manifest;
}

async function replace(object: Manifest): Promise<Manifest> {
  return (await api.replaceNamespacedCustomObject({
    ...where(object),
    name: nameOf(object),
    body: object,
  })) as Manifest;
}

async function replaceStatus(object: Manifest): Promise<Manifest> {
  return (await api.replaceNamespacedCustomObjectStatus({
    ...where(object),
    name: nameOf(object),
    body: object,
  })) as Manifest;
}

/** Server-side apply of a partial status, as one of the operator's writers does it. */
async function applyStatus(object: Manifest, status: Manifest, fieldManager: string): Promise<Manifest> {
  const body = { apiVersion: object['apiVersion'], kind: object['kind'], metadata: { name: nameOf(object) }, status };
  return (await api.patchNamespacedCustomObjectStatus(
    { ...where(object), name: nameOf(object), body, fieldManager, force: true },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  )) as Manifest;
}

describe('samples', () => {
  it.each(loadSamples().map((s) => [s.file, s.name, s.manifest] as const))(
    '%s: %s is accepted as written',
    async (_file, _name, manifest) => {
      const created = await create(manifest);
      expect(created['spec']).toEqual(manifest['spec']);
    },
  );
});

describe('each CEL rule rejects a manifest that breaks it, with its message', () => {
  it.each(CREATE_VIOLATIONS.map((v) => [v.kind, v.what, v] as const))('%s: %s', async (_kind, _what, violation) => {
    const { code, message } = await rejection(create(violation.manifest));
    expect(code).toBe(422);
    expect(message).toContain(violation.rule.message);
  });

  it.each(UPDATE_VIOLATIONS.map((v) => [v.kind, v.what, v] as const))('%s: %s', async (_kind, _what, violation) => {
    let created = await create(violation.manifest);
    if (violation.status) created = await replaceStatus({ ...created, status: violation.status });
    const request =
      violation.subresource === 'main'
        ? replace({ ...created, spec: { ...(created['spec'] as Manifest), ...violation.change } })
        : replaceStatus({ ...created, status: violation.change });
    const { code, message } = await rejection(request);
    expect(code).toBe(422);
    expect(message).toContain(violation.rule.message);
  });
});

describe('set-once fields', () => {
  it('accept a node name on a container created without one', async () => {
    const manifest = container('node-later', { driveCores: 1, numDrives: 2, driveCapacity: 500 });
    delete (manifest['spec'] as Manifest)['nodeName'];
    const created = await create(manifest);
    const updated = await replace({ ...created, spec: { ...(created['spec'] as Manifest), nodeName: 'weka-node-3' } });
    expect((updated['spec'] as Manifest)['nodeName']).toBe('weka-node-3');
  });

  it('accept a capacity on a container created without one', async () => {
    const created = await create(container('capacity-later', { driveCores: 2 }));
    const updated = await replace({ ...created, spec: { ...(created['spec'] as Manifest), containerCapacity: 4000 } });
    expect((updated['spec'] as Manifest)['containerCapacity']).toBe(4000);
  });

  it('do not block changes to other fields', async () => {
    const created = await create(container('new-image', { driveCores: 2, numDrives: 2, driveCapacity: 500 }));
    const image = 'quay.io/weka.io/weka-in-container:4.4.10.200';
    const updated = await replace({ ...created, spec: { ...(created['spec'] as Manifest), image } });
    expect((updated['spec'] as Manifest)['image']).toBe(image);
  });
});

describe('the status subresource', () => {
  const image = 'quay.io/weka.io/weka-in-container:4.4.10.200';

  it('drops status sent with a create', async () => {
    const created = await create({ ...container('status-on-create', {}), status: { phase: 'Ready' } });
    expect(created['status']).toBeUndefined();
  });

  it('ignores spec changes sent to /status', async () => {
    const created = await create(container('spec-via-status', { driveCores: 2 }));
    await replaceStatus({
      ...created,
      spec: { ...(created['spec'] as Manifest), image },
      status: { phase: 'Allocating' },
    });
    const now = (await get(created)) as unknown as WekaContainer;
    expect(now.status?.phase).toBe('Allocating');
    expect(now.spec.image).not.toBe(image);
  });

  it('is not changed by an update of the main resource', async () => {
    const created = await create(container('status-via-main', { driveCores: 2 }));
    const withStatus = await replaceStatus({ ...created, status: { phase: 'Allocating' } });
    await replace({ ...withStatus, spec: { ...(withStatus['spec'] as Manifest), image }, status: { phase: 'Ready' } });
    const now = (await get(created)) as unknown as WekaContainer;
    expect(now.spec.image).toBe(image);
    expect(now.status?.phase).toBe('Allocating');
  });

  it("keeps each server-side-apply writer's fields when another writer applies its own", async () => {
    const created = await create(container('two-writers', { driveCores: 1, numDrives: 1, driveCapacity: 500 }));
    const virtualDrive = { virtualUUID: 'v-1', physicalUUID: 'p-1', capacityGiB: 500, serial: 'S1', type: 'TLC' };
    await applyStatus(created, { workflowID: 'wekacontainer-two-writers' }, 'weka-watcher');
    await applyStatus(
      created,
      { phase: 'Allocating', allocations: { virtualDrives: [virtualDrive], virtualDriveCount: 1 } },
      'weka-workflow',
    );
    await applyStatus(
      created,
      {
        phase: 'Ready',
        allocations: { virtualDrives: [virtualDrive], virtualDriveCount: 1 },
        addedVirtualDrives: ['v-1'],
      },
      'weka-workflow',
    );
    const now = (await get(created)) as unknown as WekaContainer;
    expect(now.status).toEqual({
      workflowID: 'wekacontainer-two-writers',
      phase: 'Ready',
      allocations: { virtualDrives: [virtualDrive], virtualDriveCount: 1 },
      addedVirtualDrives: ['v-1'],
    });
  });
});
