import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import {
  WekaClusterSchema,
  WekaContainerSchema,
  WekaContainerStatusSchema,
  WekaManualOperationSchema,
  type WekaCluster,
  type WekaContainerStatus,
} from '../../../src/api/index.js';
import { loadSamples } from './samples.js';

const SCHEMA_BY_KIND: Record<string, TSchema> = {
  WekaCluster: WekaClusterSchema,
  WekaContainer: WekaContainerSchema,
  WekaManualOperation: WekaManualOperationSchema,
};
const samples = loadSamples();

describe('sample manifests', () => {
  it.each(samples.map((s) => [s.file, s.name, s] as const))(
    "%s (%s) matches its kind's TypeBox schema",
    (_file, _name, sample) => {
      const schema = SCHEMA_BY_KIND[sample.kind];
      if (!schema) throw new Error(`unknown kind ${sample.kind}`);
      expect([...Value.Errors(schema, sample.manifest)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
    },
  );

  it('have no namespace, so tests can create them in a namespace of their own', () => {
    expect(samples.filter((s) => 'namespace' in (s.manifest['metadata'] as object))).toEqual([]);
  });

  it('include a drive container for each allocation mode and an ssdproxy', () => {
    const specs = samples
      .filter((s) => s.kind === 'WekaContainer')
      .map((s) => s.manifest['spec'] as Record<string, unknown>);
    expect(specs.some((s) => s['mode'] === 'drive' && 'driveCapacity' in s && 'numDrives' in s)).toBe(true);
    expect(specs.some((s) => s['mode'] === 'drive' && 'containerCapacity' in s && 'driveTypesRatio' in s)).toBe(true);
    expect(specs.some((s) => s['mode'] === 'ssdproxy')).toBe(true);
  });

  it('include two WekaClusters on the same nodes', () => {
    const clusters = samples.filter((s) => s.kind === 'WekaCluster').map((s) => s.manifest as unknown as WekaCluster);
    expect(clusters).toHaveLength(2);
    expect(clusters[0]?.spec.nodeSelector).toEqual(clusters[1]?.spec.nodeSelector);
  });

  it('include a shared sign-drives operation', () => {
    const ops = samples
      .filter((s) => s.kind === 'WekaManualOperation')
      .map((s) => s.manifest['spec'] as Record<string, unknown>);
    expect(ops).toContainEqual(
      expect.objectContaining({
        action: 'sign-drives',
        payload: { signDrivesPayload: expect.objectContaining({ shared: true }) },
      }),
    );
  });
});

describe('TypeBox schemas', () => {
  const mode1 = samples.find((s) => s.file === 'wekacontainer-drive-capacity.yaml');

  it('reject a container mode the Weka operator does not have', () => {
    const manifest = structuredClone(mode1?.manifest) as { spec: Record<string, unknown> };
    manifest.spec['mode'] = 'drives';
    expect(Value.Check(WekaContainerSchema, manifest)).toBe(false);
  });

  it('reject a container without an image', () => {
    const manifest = structuredClone(mode1?.manifest) as { spec: Record<string, unknown> };
    delete manifest.spec['image'];
    expect(Value.Check(WekaContainerSchema, manifest)).toBe(false);
  });

  it('accept a partial status, as one writer applies it', () => {
    const onlyWorkflowId: WekaContainerStatus = { workflowID: 'wekacontainer/ns/name' };
    expect(Value.Check(WekaContainerStatusSchema, onlyWorkflowId)).toBe(true);
  });

  it('accept a full container status with conditions and virtual drives', () => {
    const status: WekaContainerStatus = {
      phase: 'Ready',
      clusterGUID: '6a1f0c2e-0000-4000-8000-000000000001',
      containerID: 7,
      allocations: {
        wekaPort: 45000,
        agentPort: 45300,
        virtualDrives: [{ virtualUUID: 'v-1', physicalUUID: 'p-1', capacityGiB: 1000, serial: 'S5XY', type: 'TLC' }],
        virtualDriveCount: 1,
      },
      addedVirtualDrives: ['v-1'],
      addedDrives: [{ uuid: 'v-1', virtualUUID: 'v-1' }],
      conditions: [
        {
          type: 'DrivesAdded',
          status: 'True',
          reason: 'Added',
          message: '',
          lastTransitionTime: '2025-11-25T10:00:00Z',
        },
      ],
      observedGeneration: 1,
    };
    expect([...Value.Errors(WekaContainerStatusSchema, status)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  });

  it('reject a condition whose time is not RFC 3339', () => {
    const status = {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ok', message: '', lastTransitionTime: 'yesterday' }],
    };
    expect(Value.Check(WekaContainerStatusSchema, status)).toBe(false);
  });
});
