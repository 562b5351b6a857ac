// Which started activities a crashed operator process left behind. Temporal notices a dead worker's
// activity only when its heartbeat times out; a process that starts on the same host (the same pod,
// after a container restart) can tell sooner, from the worker identity the activity was last
// polled with: `<pid>@<hostname>`, the identity every operator worker polls with.

/** The identity an operator process's workers poll with. */
export function workerIdentity(pid: number, hostname: string): string {
  return `${pid}@${hostname}`;
}

export interface StartedActivity {
  /** The identity of the worker that polled its current attempt. */
  lastWorkerIdentity: string;
  /** When its current attempt started (ms since the epoch). */
  lastStartedMs: number;
}

export interface ThisProcess {
  pid: number;
  hostname: string;
  /** When this process started (ms since the epoch). */
  startedMs: number;
  /** Whether a process of this pid runs on this host now (a zombie does not). */
  alive(pid: number): boolean;
}

/**
 * Whether the activity's current attempt belongs to a process of this host that is gone: another
 * pid that no longer runs, or this very pid before this process started (a container restarted in
 * its pod often gets the same pid). Anything else (another host, a live process, an identity of
 * another form) is left to its heartbeat timeout.
 */
export function isOrphaned(activity: StartedActivity, self: ThisProcess): boolean {
  const match = /^(\d+)@(.+)$/.exec(activity.lastWorkerIdentity);
  if (!match || match[2] !== self.hostname) return false;
  const pid = Number(match[1]);
  if (pid === self.pid) return activity.lastStartedMs < self.startedMs;
  return !self.alive(pid);
}
