#!/usr/bin/env node
// `weka-drives plan`: the allocator on the command line. Everything but I/O lives in
// src/cli/plan-command.ts.
import { randomUUID } from 'node:crypto';
import { parseCommandLine, runPlan, usageOutcome, type CommandOutcome } from './plan-command.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<CommandOutcome> {
  const commandLine = parseCommandLine(process.argv.slice(2));
  if (commandLine.command === 'usage') return usageOutcome(commandLine.problem);
  return runPlan(await readStdin(), commandLine.human, randomUUID);
}

main().then(
  (outcome) => {
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    process.exitCode = outcome.exitCode;
  },
  (error: unknown) => {
    process.stderr.write(`weka-drives: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
