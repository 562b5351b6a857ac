// The chaos files are the heaviest of the integration suite: 30 containers or more over several
// kwok nodes, operator replicas, fault storms, some on a control plane of their own. Side by side
// on two cores, three or four of them starve each other and everything else of CPU until their
// waits run out. They run at most HEAVY_SLOTS at a time: a file takes a slot before its test and
// gives it back after its cleanup, waiting for one meanwhile (its worker idles; the others go on).
// A slot is a directory made in the suite's own folder: mkdir is atomic across processes.
import { mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { sleep } from './async.js';

export const HEAVY_SLOTS = 2;

/** The longest a file waits for a slot: the longest chaos file, on a slow machine, with margin. */
const SLOT_WAIT_MS = 1_800_000;

/** Takes one of `slots` slots in `dir`, waiting while all are taken; resolves to its release. */
export async function takeSlot(dir: string, slots: number, pollMs = 1_000): Promise<() => Promise<void>> {
  for (;;) {
    for (let i = 0; i < slots; i++) {
      const path = join(dir, `slot-${i}`);
      try {
        await mkdir(path);
        return () => rmdir(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    await sleep(pollMs);
  }
}

/**
 * Makes the calling test file one of the heavy ones. Call it first at the top of the file, so its
 * release runs after the file's other afterAll hooks (vitest runs them last registered first).
 */
export function runAsHeavyFile(): void {
  let release: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const started = Date.now();
    release = await takeSlot(inject('heavySlotsDir'), HEAVY_SLOTS);
    const waited = Date.now() - started;
    if (waited > 1_000) console.log(`heavy file: waited ${waited} ms for one of ${HEAVY_SLOTS} slots`);
  }, SLOT_WAIT_MS);
  afterAll(async () => {
    await release?.();
  });
}
