import { describe, expect, it } from 'vitest';
import {
  memberIndex,
  planMembers,
  servingMembersAtWork,
  type ClusterMemberView,
  type ClusterNodeView,
} from '../../../src/lifecycle/cluster-layout.js';

const node = (name: string, extra: Partial<ClusterNodeView> = {}): ClusterNodeView => ({
  name,
  selected: true,
  ready: true,
  ...extra,
});
const member = (name: string, nodeName: string, extra: Partial<ClusterMemberView> = {}): ClusterMemberView => ({
  name,
  uid: `uid-${name}`,
  node: nodeName,
  phase: 'Ready',
  deleting: false,
  holds: '',
  ...extra,
});
const nodes = [node('n-a'), node('n-b'), node('n-c')];
const plan = (members: ClusterMemberView[], count: number, more: Partial<Parameters<typeof planMembers>[0]> = {}) =>
  planMembers({ cluster: 'c', count, template: {}, members, nodes, ...more });

describe('memberIndex', () => {
  it.each([
    ['c-drive-0', 0],
    ['c-drive-12', 12],
    ['c-drive-3-1', 3],
    ['c-drive-x', undefined],
    ['other-drive-1', undefined],
    ['c-drive-1-a', undefined],
  ])('%s is slot %s', (name, index) => expect(memberIndex('c', name)).toBe(index));
});

describe("planning a cluster's members", () => {
  it('lays the first members out round robin over the selected nodes sorted by name', () => {
    const p = plan([], 4);
    expect(p.create).toEqual([
      { name: 'c-drive-0', index: 0, node: 'n-a' },
      { name: 'c-drive-1', index: 1, node: 'n-b' },
      { name: 'c-drive-2', index: 2, node: 'n-c' },
      { name: 'c-drive-3', index: 3, node: 'n-a' },
    ]);
    expect(p.remove).toEqual([]);
  });

  it('changes nothing for members that match the spec', () => {
    const p = plan([member('c-drive-0', 'n-a'), member('c-drive-1', 'n-b')], 2);
    expect(p).toMatchObject({ create: [], remove: [], grow: [], unplaced: [] });
    expect(p.serving).toEqual(['c-drive-0', 'c-drive-1']);
  });

  it('adds the missing slots when the count goes up', () => {
    const p = plan([member('c-drive-0', 'n-a'), member('c-drive-1', 'n-b')], 3);
    expect(p.create).toEqual([{ name: 'c-drive-2', index: 2, node: 'n-c' }]);
  });

  it('takes away only the highest-numbered surplus member, and none while one is still going', () => {
    const members = [member('c-drive-0', 'n-a'), member('c-drive-1', 'n-b'), member('c-drive-2', 'n-c')];
    expect(plan(members, 1).remove).toEqual([expect.objectContaining({ name: 'c-drive-2', reason: 'ScaledDown' })]);
    const going = [members[0]!, members[1]!, { ...members[2]!, deleting: true }];
    expect(plan(going, 1).remove).toEqual([]);
    expect(plan(going, 1).serving).toEqual(['c-drive-0']);
  });

  it('replaces a member whose node is gone or lost on another usable node, under a fresh name', () => {
    const members = [member('c-drive-0', 'n-a'), member('c-drive-1', 'n-gone'), member('c-drive-2', 'n-c')];
    const lostNodes = [node('n-a'), node('n-b', { ready: false, lost: 'NotReady for 6 minutes' }), node('n-c')];
    const p = plan(members, 3, { nodes: lostNodes });
    expect(p.remove).toEqual([
      { name: 'c-drive-1', uid: 'uid-c-drive-1', reason: 'NodeLost', message: 'node n-gone no longer exists' },
    ]);
    // The old object still exists (its teardown runs), so the replacement takes a new name; n-b is
    // lost, so the least-loaded usable node takes it.
    expect(p.create).toEqual([{ name: 'c-drive-1-1', index: 1, node: 'n-a' }]);
    const onLost = plan([member('c-drive-0', 'n-b')], 1, { nodes: lostNodes });
    expect(onLost.remove).toEqual([expect.objectContaining({ reason: 'NodeLost', message: 'NotReady for 6 minutes' })]);
  });

  it('does not take a NotReady node that is not yet lost away from its member, nor place on it', () => {
    const p = plan([member('c-drive-0', 'n-a')], 2, { nodes: [node('n-a', { ready: false }), node('n-b')] });
    expect(p.remove).toEqual([]);
    expect(p.create).toEqual([{ name: 'c-drive-1', index: 1, node: 'n-b' }]);
  });

  it('leaves a slot unplaced when no selected node is usable', () => {
    const p = plan([], 2, { nodes: [node('n-a', { ready: false }), node('n-x', { selected: false })] });
    expect(p.create).toEqual([]);
    expect(p.unplaced).toEqual([0, 1]);
  });

  it("raises a member's capacity to the template's, never lowers it", () => {
    const members = [
      member('c-drive-0', 'n-a', { containerCapacity: 1000 }),
      member('c-drive-1', 'n-b', { containerCapacity: 3000 }),
    ];
    const p = plan(members, 2, { template: { containerCapacity: 2000 } });
    expect(p.grow).toEqual([{ name: 'c-drive-0', uid: 'uid-c-drive-0', containerCapacity: 2000 }]);
    expect(plan([member('c-drive-0', 'n-a', { numDrives: 2 })], 1, { template: { numDrives: 4 } }).grow).toEqual([
      { name: 'c-drive-0', uid: 'uid-c-drive-0', numDrives: 4 },
    ]);
  });

  it('never creates two members of one name, whatever the slots and the names in use', () => {
    for (let count = 0; count < 7; count++) {
      const members = [member('c-drive-1', 'n-gone', { deleting: true }), member('c-drive-1-1', 'n-gone')];
      const p = plan(members, count);
      const names = [...members.map((m) => m.name), ...p.create.map((c) => c.name)];
      expect(new Set(names).size).toBe(names.length);
      expect(p.create.map((c) => c.index).sort()).toEqual([...Array(count).keys()]);
    }
  });
});

describe('the serving members still at work toward their spec', () => {
  it.each([
    { why: 'a Ready member growing in place', m: { atWork: true }, serving: true, expected: ['c-drive-0'] },
    { why: 'a Ready member at its spec', m: { atWork: false }, serving: true, expected: [] },
    { why: 'a member not known to be at work', m: {}, serving: true, expected: [] },
    {
      why: 'a member not Ready (the cluster waits for it anyway)',
      m: { atWork: true, phase: 'AddingDrives' },
      serving: true,
      expected: [],
    },
    { why: 'a member the cluster no longer counts on', m: { atWork: true }, serving: false, expected: [] },
  ])('$why', ({ m, serving, expected }) => {
    const members = [member('c-drive-0', 'n-a', m), member('c-drive-1', 'n-b', { atWork: false })];
    expect(servingMembersAtWork(members, serving ? ['c-drive-0', 'c-drive-1'] : ['c-drive-1'])).toEqual(expected);
  });
});
