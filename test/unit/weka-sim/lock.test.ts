import { execFile } from 'node:child_process';
import { access, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockTimeoutError, withLock } from '../../../deploy/local/weka-sim/lock.js';
import { simRoot } from './helpers.js';

/** The PID of a process that has exited, as a crashed lock holder would leave behind. */
async function deadPid(): Promise<number> {
  const child = execFile(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('weka-sim lock', () => {
  it('serialises critical sections in one process', async () => {
    const lock = join(await simRoot(), 'lock');
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        withLock(lock, async () => {
          maxInside = Math.max(maxInside, ++inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    await expect(access(lock)).rejects.toThrow();
  });

  it('breaks a lock left by a process that died', async () => {
    const lock = join(await simRoot(), 'lock');
    await writeFile(lock, `${await deadPid()} leftover`);
    await expect(withLock(lock, async () => 'ran', { acquireTimeoutMs: 2000 })).resolves.toBe('ran');
  });

  it('waits for a live holder and times out rather than breaking its lock', async () => {
    const lock = join(await simRoot(), 'lock');
    await writeFile(lock, `${process.pid} someone-else`);
    await expect(withLock(lock, async () => 'ran', { acquireTimeoutMs: 200 })).rejects.toThrow(LockTimeoutError);
    expect(await readFile(lock, 'utf8')).toBe(`${process.pid} someone-else`);
  });

  it('breaks a lock held longer than any command could, even if its PID is alive (PID reuse)', async () => {
    const lock = join(await simRoot(), 'lock');
    await writeFile(lock, `${process.pid} ancient`);
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await expect(withLock(lock, async () => 'ran', { acquireTimeoutMs: 2000, maxHoldMs: 10_000 })).resolves.toBe('ran');
  });

  it('releases the lock when the critical section throws', async () => {
    const lock = join(await simRoot(), 'lock');
    await expect(withLock(lock, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(access(lock)).rejects.toThrow();
  });
});
