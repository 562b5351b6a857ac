#!/usr/bin/env node
// weka-sim's command line: answers one argv of weka-sign-drive, weka or an admin command against a
// node's state directory, for a person or a script (the local control plane bundles it, bundle.ts;
// its shims reach the same runSimulator through server.ts). It loads as few Node.js modules as it
// can: node:fs (loaded with Node.js itself) and node:path, synchronous file calls, and output
// written to the file descriptors, since process.stdout alone would load the stream modules.
import { writeSync } from 'node:fs';
import { runSimulator } from './cli.js';

async function main(argv: string[]): Promise<void> {
  const result = await runSimulator(argv);
  writeAll(1, result.stdout);
  writeAll(2, result.stderr);
  process.exitCode = result.exitCode;
}

/** Writes all of text to fd, waiting out a full non-blocking pipe. */
function writeAll(fd: number, text: string): void {
  let rest = Buffer.from(text);
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

void main(process.argv.slice(2));
