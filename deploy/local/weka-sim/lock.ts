// A cross-process lock built on O_EXCL file creation, so concurrent simulator processes on one
// node never interleave read-modify-write cycles. The lock file holds "PID TOKEN". A lock whose
// PID is dead (the holder crashed) or that is older than any command could hold it (PID reuse)
// is stale and may be broken; breaking goes through a second O_EXCL "breaker" file and re-reads
// the lock under it, so two waiters cannot both break it and delete a fresh lock by mistake.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';

export interface LockOptions {
  /** Give up waiting after this long. */
  readonly acquireTimeoutMs?: number;
  /** A lock older than this is stale even if its PID is alive (the PID may have been reused). */
  readonly maxHoldMs?: number;
}

export class LockTimeoutError extends Error {}

const DEFAULT_ACQUIRE_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_HOLD_MS = 15_000;

let tokens = 0;

export async function withLock<T>(lockPath: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  // Unique among live holders: the PID tells processes apart, the count the locks of one process.
  const token = `${process.pid} ${Date.now()}-${tokens++}`;
  await acquire(lockPath, token, options);
  try {
    return await fn();
  } finally {
    release(lockPath, token);
  }
}

async function acquire(lockPath: string, token: string, options: LockOptions): Promise<void> {
  const deadline = Date.now() + (options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS);
  const maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lockPath, token)) return;
    breakIfStale(lockPath, maxHoldMs);
    if (Date.now() > deadline) throw new LockTimeoutError(`timed out waiting for lock ${lockPath}`);
    // Jittered backoff up to ~25 ms: holders keep the lock for a few milliseconds.
    await sleep(Math.min(25, 1 + attempt) * (0.5 + Math.random()));
  }
}

function tryCreate(path: string, content: string): boolean {
  let fd;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    writeFileSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function breakIfStale(lockPath: string, maxHoldMs: number): void {
  const seen = readIfExists(lockPath);
  if (seen === undefined || !isStale(lockPath, seen, maxHoldMs)) return;
  const breaker = `${lockPath}.break`;
  if (!tryCreate(breaker, String(process.pid))) {
    // Another waiter is breaking it. A breaker left by a crash mid-break is itself stale by age.
    if (ageMs(breaker) > maxHoldMs) unlinkIfExists(breaker);
    return;
  }
  try {
    // Only delete the lock we judged stale, not one a faster waiter created since.
    if (readIfExists(lockPath) === seen) unlinkIfExists(lockPath);
  } finally {
    unlinkIfExists(breaker);
  }
}

function isStale(lockPath: string, content: string, maxHoldMs: number): boolean {
  const age = ageMs(lockPath);
  if (age > maxHoldMs) return true;
  const pid = Number(content.split(' ')[0]);
  // Empty content: the holder has created the file and is about to write its PID.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  return !isProcessAlive(pid);
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(err) === 'EPERM';
  }
}

function release(lockPath: string, token: string): void {
  // If the lock was broken as stale while we held it (we were stuck longer than maxHoldMs),
  // it now belongs to someone else and must not be deleted.
  if (readIfExists(lockPath) === token) unlinkIfExists(lockPath);
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return 0;
    throw err;
  }
}

function unlinkIfExists(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
}

export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
