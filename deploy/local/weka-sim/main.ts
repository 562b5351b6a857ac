#!/usr/bin/env node
// weka-sim: answers the argv of weka-sign-drive and weka against a node's state directory.
// It runs once per simulated CLI call, so it imports nothing heavier than Node built-ins, and the
// local control plane runs it from a V8 startup snapshot of its single-file bundle (bundle.ts):
// built from this file, the snapshot holds every module already loaded, and this is its main.
import { startupSnapshot } from 'node:v8';
import { runSimulator } from './cli.js';

async function main(argv: string[]): Promise<void> {
  const result = await runSimulator(argv);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

// Nothing runs while the snapshot is built: what ran then (a random UUID pool, say) would be
// frozen into every process started from it.
if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(() => main(process.argv.slice(1)));
else void main(process.argv.slice(2));
