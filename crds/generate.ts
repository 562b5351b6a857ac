// Writes crds/*.yaml from the TypeBox schemas in src/api (`npm run crds`).
// With --check it writes nothing and exits 1 when a committed file differs from what it would
// write (`npm run crds:check`, run by CI), so the YAML can never drift from the schemas.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCrdFiles, renderCrdYaml } from '../src/api/crds.js';

const crdDir = fileURLToPath(new URL('.', import.meta.url));
const check = process.argv.includes('--check');

const drifting: string[] = [];
for (const { fileName, crd } of buildCrdFiles()) {
  const path = join(crdDir, fileName);
  const wanted = renderCrdYaml(crd);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (current === wanted) continue;
  if (check) {
    drifting.push(`crds/${fileName}${current === undefined ? ' (missing)' : ''}`);
  } else {
    writeFileSync(path, wanted);
    console.log(`wrote crds/${fileName}`);
  }
}

if (drifting.length > 0) {
  console.error(
    `These CRD files differ from the schemas in src/api/schemas:\n  ${drifting.join('\n  ')}\nRun \`npm run crds\` and commit the result.`,
  );
  process.exit(1);
}
if (check) console.log('crds/*.yaml are up to date with src/api/schemas.');
