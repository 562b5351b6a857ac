// Writes crds/*.yaml from the TypeBox schemas in src/api (`npm run crds`), and identical copies
// into the Helm chart's crds/ directory (Helm installs CRDs only from there, and a chart cannot
// reach outside its own directory).
// With --check it writes nothing and exits 1 when a committed file differs from what it would
// write (`npm run crds:check`, run by CI), so the YAML can never drift from the schemas.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCrdFiles, renderCrdYaml } from '../src/api/crds.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** Every directory that holds the CRDs; the first is the canonical one. */
const CRD_OUTPUT_DIRS = ['crds', 'deploy/helm/weka-drives-operator/crds'];
const check = process.argv.includes('--check');

const drifting: string[] = [];
for (const dir of CRD_OUTPUT_DIRS) {
  for (const { fileName, crd } of buildCrdFiles()) {
    const path = join(repoRoot, dir, fileName);
    const shown = relative(repoRoot, path);
    const wanted = renderCrdYaml(crd);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (current === wanted) continue;
    if (check) {
      drifting.push(`${shown}${current === undefined ? ' (missing)' : ''}`);
    } else {
      mkdirSync(join(repoRoot, dir), { recursive: true });
      writeFileSync(path, wanted);
      console.log(`wrote ${shown}`);
    }
  }
}

if (drifting.length > 0) {
  console.error(
    `These CRD files differ from the schemas in src/api/schemas:\n  ${drifting.join('\n  ')}\nRun \`npm run crds\` and commit the result.`,
  );
  process.exit(1);
}
if (check) {
  console.log('crds/*.yaml are up to date with src/api/schemas.');
  console.log(`So are the copies in ${CRD_OUTPUT_DIRS.slice(1).join(', ')}.`);
}
