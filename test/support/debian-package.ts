// Debian packages the tests and benchmarks need on the machine (Chromium for the browser test, the
// allocator the image preloads for the benchmarks), installed by
// deploy/local/tools/ensure-debian-package.sh when missing: as root, from the distribution's mirror.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ENSURE_PACKAGE = fileURLToPath(new URL('../../deploy/local/tools/ensure-debian-package.sh', import.meta.url));

/** Installs `pkg` unless `file` exists (apt-get, a minute the first time); rejects with the script's reason. */
export async function ensureDebianPackage(pkg: string, file: string): Promise<void> {
  try {
    await run('bash', [ENSURE_PACKAGE, pkg, file], { timeout: 600_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error((e.stderr ?? '').trim() || e.message);
  }
}
