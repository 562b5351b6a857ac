import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeSlot } from '../../support/heavy-files.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the slots of the heavy test files', () => {
  it('lets two files in at once and the third only when one gives its slot back', async () => {
    dir = await mkdtemp(join(tmpdir(), 'heavy-slots-'));
    const first = await takeSlot(dir, 2, 10);
    await takeSlot(dir, 2, 10);
    let third = false;
    const waiting = takeSlot(dir, 2, 10).then((release) => {
      third = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(third).toBe(false);
    await first();
    const release = await waiting;
    expect(third).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['slot-0', 'slot-1']);
    await release();
    expect(await readdir(dir)).toEqual(['slot-1']);
  });

  it('fails at once when its folder does not exist, rather than waiting for ever', async () => {
    await expect(takeSlot('/nonexistent/heavy-slots', 2, 10)).rejects.toThrow(/ENOENT/);
  });
});
