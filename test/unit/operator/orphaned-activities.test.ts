import { describe, expect, it } from 'vitest';
import { isOrphaned, workerIdentity, type ThisProcess } from '../../../src/operator/orphaned-activities.js';

const STARTED = 1_000_000;
const self: ThisProcess = {
  pid: 7,
  hostname: 'operator-0',
  startedMs: STARTED,
  alive: (pid) => pid === 7 || pid === 9,
};

describe('isOrphaned', () => {
  it.each([
    ['a dead pid of this host', workerIdentity(8, 'operator-0'), STARTED - 5, true],
    [
      'this pid, before this process started (a restarted container)',
      workerIdentity(7, 'operator-0'),
      STARTED - 5,
      true,
    ],
    ['this pid, since this process started (its own attempt)', workerIdentity(7, 'operator-0'), STARTED + 5, false],
    ['a live process of this host', workerIdentity(9, 'operator-0'), STARTED - 5, false],
    ['a process of another host', workerIdentity(8, 'operator-1'), STARTED - 5, false],
    ['a host whose name ends like this one', workerIdentity(8, 'x-operator-0'), STARTED - 5, false],
    ['an identity of another form', 'worker-a', STARTED - 5, false],
    ['no identity', '', STARTED - 5, false],
  ])('%s: %s', (_what, identity, lastStartedMs, orphaned) => {
    expect(isOrphaned({ lastWorkerIdentity: identity, lastStartedMs }, self)).toBe(orphaned);
  });
});
