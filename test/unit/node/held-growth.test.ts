// A node's decision for a container that holds an allocation: the same again, grown when its
// request asks for more; never less, and a growth that cannot be made is pending, never a loss.
import { describe, expect, it } from 'vitest';
import type { VirtualDrive } from '../../../src/allocation/index.js';
import type { WekaCluster, WekaContainer } from '../../../src/api/index.js';
import { withAllocation, emptyLedger } from '../../../src/node/allocation-ledger.js';
import { decideForHeld, type HeldInput } from '../../../src/node/held-growth.js';
import { waitsForNode } from '../../../src/node/node-allocations.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../../src/allocation/settings.js';
import { sequentialUuids, tlc } from '../allocation/fixtures.js';

const DRIVE = tlc('p1', 4000);
const HELD: VirtualDrive[] = [
  { virtualUUID: 'held-1', physicalUUID: 'p1', capacityGiB: 1000, serial: DRIVE.serial, type: 'TLC' },
];
const held = { virtualDrives: HELD, wekaPort: 35000, agentPort: 35300 };

const container = (spec: Record<string, unknown>): WekaContainer =>
  ({
    metadata: { name: 'c', namespace: 'ns', uid: 'uid-c' },
    spec: { mode: 'drive', image: 'img', nodeName: 'n', driveCores: 1, driveTypesRatio: { tlc: 1, qlc: 0 }, ...spec },
  }) as WekaContainer;

const template = (dynamicTemplate: Record<string, unknown>): WekaCluster =>
  ({ metadata: { name: 'cl', namespace: 'ns' }, spec: { dynamicTemplate } }) as WekaCluster;

function decide(o: Partial<HeldInput>) {
  return decideForHeld(
    {
      held,
      container: container({ containerCapacity: 1000 }),
      cluster: undefined,
      drives: { ok: true, drives: [DRIVE] },
      ledger: withAllocation(emptyLedger(), 'uid-c', 'ns/c', held),
      settings: DEFAULT_ALLOCATION_SETTINGS,
      waitsForNode,
      ...o,
    },
    sequentialUuids('new'),
  );
}

describe('decideForHeld', () => {
  it('answers what is held, the same object, when the request asks for no more (or less)', () => {
    expect(decide({}).allocation).toBe(held);
    expect(decide({ container: container({ containerCapacity: 500 }) })).toEqual({ allocation: held });
  });

  it('grows: the held drives and ports first and unchanged, the new drives after them', () => {
    const { allocation, pending } = decide({ container: container({ containerCapacity: 2500 }) });
    expect(pending).toBeUndefined();
    expect(allocation.virtualDrives.slice(0, 1)).toEqual(HELD);
    expect(allocation.virtualDrives.slice(1).map((d) => d.capacityGiB)).toEqual([1500]);
    expect([allocation.wekaPort, allocation.agentPort]).toEqual([35000, 35300]);
  });

  it("grows with a capacity the container inherits from its cluster's dynamicTemplate", () => {
    const inherits = container({ driveCores: undefined, driveTypesRatio: undefined, cluster: 'cl' });
    const cluster = template({ driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } });
    const { allocation } = decide({ container: inherits, cluster });
    expect(allocation.virtualDrives.reduce((s, d) => s + d.capacityGiB, 0)).toBe(2000);
  });

  it.each([
    [
      'the node has no drives to read',
      { drives: { ok: false as const, error: { type: 'NoSharedDrives', message: 'none' }, waitForCapacity: true } },
      { type: 'NoSharedDrives', waitForCapacity: true },
    ],
    [
      'the drive is full',
      { container: container({ containerCapacity: 5000 }) },
      { type: 'InsufficientDriveCapacity', waitForCapacity: true },
    ],
    [
      'no room for another drive (waits for a spec change)',
      {
        container: container({ containerCapacity: 2000 }),
        settings: { ...DEFAULT_ALLOCATION_SETTINGS, maxVirtualDrivesPerCore: 1 },
      },
      { type: 'InvalidDriveSharingConfig', waitForCapacity: false },
    ],
  ])('keeps what is held and says why the growth waits: %s', (_, o, why) => {
    const { allocation, pending } = decide({ container: container({ containerCapacity: 2000 }), ...o });
    expect(allocation).toBe(held);
    expect({ type: pending?.error.type, waitForCapacity: pending?.waitForCapacity }).toEqual(why);
  });

  it('keeps what is held, with nothing pending, when its cluster is gone (it is being deleted)', () => {
    const member = container({ containerCapacity: 3000, cluster: 'gone' });
    expect(decide({ container: member, cluster: null })).toEqual({ allocation: held });
  });
});
