#!/usr/bin/env node
// weka-sim: answers the argv of weka-sign-drive and weka against a node's state directory.
// It runs once per simulated CLI call, so it imports nothing heavier than Node built-ins.
import { runSimulator } from './cli.js';

const result = await runSimulator(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.exitCode;
