// The simulator writes its answer straight to file descriptors 1 and 2 (main.ts): an answer longer
// than a pipe holds, to a pipe another process left non-blocking, must still arrive whole.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSimulator, simRoot } from './helpers.js';

/** Reads the FIFO's non-blocking read end until the writer has gone and nothing is left, slowly. */
async function drainSlowly(fd: number, exited: () => boolean): Promise<string> {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(4096);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      n = -1;
    }
    if (n > 0) chunks.push(Buffer.from(buf.subarray(0, n)));
    else if (n === 0 && exited()) return Buffer.concat(chunks).toString();
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('the simulator’s output', () => {
  let simArgs: string[] = [];
  beforeAll(async () => {
    simArgs = await buildSimulator();
  });

  it('arrives whole through a non-blocking pipe that is read slowly', async () => {
    const fifo = join(await simRoot(), 'stderr.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    // A refused command echoes its unknown name on stderr: 100 KB, more than a pipe holds (64 KiB).
    const name = `x${'y'.repeat(100_000)}`;
    const child = spawn(process.execPath, [...simArgs, '--state', join(fifo, '..', 'node'), name], {
      stdio: ['ignore', 'ignore', writer],
    });
    // Node.js gives a child blocking stdio; a socket opened on the parent's copy sets the shared
    // pipe non-blocking again, as a parent that is itself a Node.js process writing there would.
    new Socket({ fd: writer, readable: false }).destroy();
    let code: number | null = null;
    const done = new Promise<void>((resolve) => child.on('exit', (c) => ((code = c), resolve())));
    const text = await drainSlowly(reader, () => code !== null);
    await done;
    closeSync(reader);
    expect(code).toBe(64);
    expect(text).toContain(`unknown command "${name}"`);
    expect(text.length).toBeGreaterThan(100_000);
  });
});
