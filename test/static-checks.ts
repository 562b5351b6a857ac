// `npm run checks`: the static checks npm test runs before vitest (formatting, types, lint, the
// generated CRDs), side by side. Each is one Node.js process that uses one core, so on two cores
// running them together takes about half as long as one after the other. Each check's output is
// printed whole when it ends, so the outputs never interleave; the run fails if any check fails.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export interface Check {
  name: string;
  command: string;
  args: string[];
}

export interface CheckResult {
  name: string;
  ok: boolean;
  /** The exit code, or the signal that ended the check. */
  exit: number | string;
  output: string;
  seconds: number;
}

/** The npm scripts of package.json that `npm test` runs before vitest. */
export const STATIC_CHECKS: Check[] = ['format:check', 'typecheck', 'lint', 'crds:check'].map((script) => ({
  name: script,
  command: 'npm',
  args: ['run', '--silent', script],
}));

/** Runs one check to its end, its stdout and stderr collected in the order they arrive. */
export function runCheck(check: Check, cwd: string): Promise<CheckResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(check.command, check.args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const done = (exit: number | string, extra = ''): void =>
      resolve({
        name: check.name,
        ok: exit === 0,
        exit,
        output: Buffer.concat(chunks).toString('utf8') + extra,
        seconds: (performance.now() - started) / 1000,
      });
    child.on('error', (err) => done(-1, `could not start ${check.command}: ${err.message}\n`));
    child.on('close', (code, signal) => done(code ?? signal ?? -1));
  });
}

/** How one finished check is printed: a header line with its outcome and time, then its output. */
export function formatResult(r: CheckResult): string {
  const outcome = r.ok ? 'passed' : `FAILED (exit ${r.exit})`;
  const header = `── ${r.name}: ${outcome} in ${r.seconds.toFixed(1)} s`;
  const body = r.output.trimEnd();
  return body === '' ? `${header}\n` : `${header}\n${body}\n`;
}

/** Runs every check at once, printing each as it ends; resolves to the names of those that failed. */
export async function runChecks(
  checks: Check[],
  cwd: string,
  print: (text: string) => void = (t) => process.stdout.write(t),
): Promise<string[]> {
  const results = await Promise.all(
    checks.map(async (check) => {
      const r = await runCheck(check, cwd);
      print(formatResult(r));
      return r;
    }),
  );
  return results.filter((r) => !r.ok).map((r) => r.name);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const failed = await runChecks(STATIC_CHECKS, process.cwd());
  if (failed.length > 0) {
    console.error(`static checks failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}
