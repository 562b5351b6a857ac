// Writes crds/*.yaml from the TypeBox schemas in src/api (`npm run crds`), and the Helm chart's
// templated copies of them (crds/chart-templates.ts; a chart cannot reach outside its own directory).
// With --check it writes nothing and exits 1 when a committed file differs from what it would
// write (`npm run crds:check`, run by CI), so the YAML can never drift from the schemas.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCrdFiles, renderCrdYaml } from '../src/api/crds.js';
import { CHART_CRD_TEMPLATE_DIR, renderChartCrdTemplate } from './chart-templates.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');

/** Every generated file, by path from the repository root. */
const wantedFiles = buildCrdFiles().flatMap(({ fileName, crd }) => [
  { path: join('crds', fileName), content: renderCrdYaml(crd) },
  { path: join(CHART_CRD_TEMPLATE_DIR, fileName), content: renderChartCrdTemplate(crd) },
]);

const drifting: string[] = [];
for (const { path: shown, content } of wantedFiles) {
  const path = join(repoRoot, shown);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (current === content) continue;
  if (check) {
    drifting.push(`${shown}${current === undefined ? ' (missing)' : ''}`);
  } else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    console.log(`wrote ${shown}`);
  }
}

// A CRD no longer generated (a kind removed or renamed) must not stay behind in either directory.
const wantedPaths = new Set(wantedFiles.map((f) => f.path));
for (const dir of ['crds', CHART_CRD_TEMPLATE_DIR]) {
  const present = existsSync(join(repoRoot, dir)) ? readdirSync(join(repoRoot, dir)) : [];
  for (const file of present.filter((f) => f.endsWith('.yaml'))) {
    if (!wantedPaths.has(join(dir, file))) drifting.push(`${join(dir, file)} (not generated: delete it)`);
  }
}

if (drifting.length > 0) {
  console.error(
    `These CRD files differ from the schemas in src/api/schemas:\n  ${drifting.join('\n  ')}\nRun \`npm run crds\` and commit the result.`,
  );
  process.exit(1);
}
if (check) console.log(`crds/*.yaml and ${CHART_CRD_TEMPLATE_DIR}/*.yaml are up to date with src/api/schemas.`);
