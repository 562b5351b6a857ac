import { describe, expect, it } from 'vitest';
import { clusterContainerSpec, memberTemplate } from '../../../src/lifecycle/cluster-layout.js';
import {
  planSharingMigration,
  type MigrationInput,
  type MigrationMember,
} from '../../../src/lifecycle/sharing-migration.js';

const member = (i: number, o: Partial<MigrationMember> = {}): MigrationMember => ({
  name: `stores-drive-${i}`,
  uid: `uid-${i}`,
  node: `node-${i}`,
  wholeDrives: true,
  deleting: false,
  serials: [`S${i}a`, `S${i}b`],
  ...o,
});
const drives = (members: readonly MigrationMember[], capacityGiB = 7680) =>
  members.flatMap((m) => m.serials.map((serial) => ({ serial, capacityGiB, type: 'TLC' as const })));

function input(o: Partial<MigrationInput> = {}): MigrationInput {
  const members = o.members ?? [member(2), member(0), member(1)];
  return {
    cluster: 'stores',
    template: { driveContainers: 3, numDrives: 2, driveCores: 1 },
    clusterGUID: 'guid-1',
    driveSharing: undefined,
    campaign: 'op-1',
    liveCampaigns: new Map([['op-1', 'ns/migrate']]),
    members,
    drives: drives(members),
    ...o,
  };
}

describe('planSharingMigration', () => {
  it('moves the whole-drive members in slot order, each to numDrives virtual drives of the drives size', () => {
    const plan = planSharingMigration(input());
    expect(plan).toMatchObject({ ok: true, driveCapacity: 7680, numDrives: 2 });
    expect(plan.ok && plan.members.map((m) => m.name)).toEqual(['stores-drive-0', 'stores-drive-1', 'stores-drive-2']);
  });

  it('takes the smallest whole drive as the size when they differ', () => {
    const members = [member(0), member(1)];
    const sizes = drives(members).map((d, i) => ({ ...d, capacityGiB: i === 3 ? 3840 : 7680 }));
    expect(planSharingMigration(input({ members, drives: sizes }))).toMatchObject({ ok: true, driveCapacity: 3840 });
  });

  it.each([
    [{ template: { numDrives: 2, driveCapacity: 500 } }, 'NotWholeDrive', /driveCapacity/],
    [{ template: { containerCapacity: 2000 } }, 'NotWholeDrive', /containerCapacity/],
    [{ template: { driveContainers: 3 } }, 'NotWholeDrive', /no numDrives/],
    [{ clusterGUID: undefined }, 'ClusterNotFormed', /not formed/],
    [{ members: [member(0, { wholeDrives: false })] }, 'NoMembers', /no member on whole drives/],
    [{ members: [member(0, { deleting: true })] }, 'NoMembers', /no member on whole drives/],
  ] as const)('refuses %j: %s', (o, reason, message) => {
    const plan = planSharingMigration(input(o as Partial<MigrationInput>));
    expect(plan).toMatchObject({ ok: false, reason });
    expect(!plan.ok && plan.message).toMatch(message);
  });

  it('refuses QLC whole drives, naming them: virtual drives of one size are TLC only', () => {
    const members = [member(0)];
    const qlc = drives(members).map((d) => ({ ...d, type: 'QLC' as const }));
    const plan = planSharingMigration(input({ members, drives: qlc }));
    expect(plan).toMatchObject({ ok: false, reason: 'NotTLC' });
    expect(!plan.ok && plan.message).toMatch(/S0a, S0b/);
  });

  it('refuses while a drive size is unknown', () => {
    const members = [member(0)];
    expect(planSharingMigration(input({ members, drives: [] }))).toMatchObject({ ok: false, reason: 'DrivesUnknown' });
  });

  it('refuses while another live campaign holds the cluster, and takes over one that ended', () => {
    const driveSharing = { driveCapacity: 7680, operation: 'ns/first', campaign: 'op-0' };
    const live = new Map([
      ['op-0', 'ns/first'],
      ['op-1', 'ns/migrate'],
    ]);
    const held = planSharingMigration(input({ driveSharing, liveCampaigns: live }));
    expect(held).toMatchObject({ ok: false, reason: 'AnotherCampaignRunning' });
    expect(!held.ok && held.message).toMatch(/ns\/first/);
    const ended = planSharingMigration(input({ driveSharing, liveCampaigns: new Map([['op-1', 'ns/migrate']]) }));
    expect(ended).toMatchObject({ ok: true });
  });

  it('a campaign taken up again keeps the size recorded and moves only the members still on whole drives', () => {
    const driveSharing = { driveCapacity: 5000, operation: 'ns/first', campaign: 'op-0' };
    const members = [member(0, { wholeDrives: false, serials: [] }), member(1)];
    const plan = planSharingMigration(input({ driveSharing, members, drives: [], liveCampaigns: new Map() }));
    expect(plan).toMatchObject({ ok: true, driveCapacity: 5000 });
    expect(plan.ok && plan.members.map((m) => m.name)).toEqual(['stores-drive-1']);
  });

  it('says when every member moved already', () => {
    const driveSharing = { driveCapacity: 5000, operation: 'ns/first', campaign: 'op-0' };
    const members = [member(0, { wholeDrives: false })];
    expect(planSharingMigration(input({ driveSharing, members, liveCampaigns: new Map() }))).toMatchObject({
      ok: false,
      reason: 'AlreadyMigrated',
    });
  });
});

describe('members made after a migration', () => {
  const spec = { image: 'weka:1', dynamicTemplate: { driveContainers: 2, numDrives: 2, driveCores: 1 } };

  it('ask for numDrives virtual drives of the recorded size', () => {
    const sharing = { driveCapacity: 7680, operation: 'ns/m', campaign: 'u' };
    expect(clusterContainerSpec(spec, 'stores', 'n1', sharing)).toMatchObject({ numDrives: 2, driveCapacity: 7680 });
  });

  it('ask for whole drives without one', () => {
    expect(clusterContainerSpec(spec, 'stores', 'n1')).not.toHaveProperty('driveCapacity');
  });

  it('keep a template that shares drives as it is', () => {
    const t = { numDrives: 2, driveCapacity: 100 };
    expect(memberTemplate(t, { driveCapacity: 7680 })).toEqual(t);
  });
});
