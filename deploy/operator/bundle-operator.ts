// Bundles the compiled operator (dist/deploy/operator/main.js) into one file next to it,
// main.bundle.js, which the image and `npm start` run: Node then reads one file instead of the
// thousands of modules @kubernetes/client-node alone is made of, and the operator starts about half
// a second sooner, which is what a restarted pod's interrupted decisions wait for. `npm run build`
// runs it from dist/ after tsc. The other dependencies stay outside: Temporal's worker starts
// threads and loads a native module from its own files, and the rest are small.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const INLINED = new Set(['@kubernetes/client-node']);

const pkg = JSON.parse(readFileSync(here('../../../package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const external = Object.keys(pkg.dependencies)
  .filter((d) => !INLINED.has(d))
  .flatMap((d) => [d, `${d}/*`]);
const outfile = here('main.bundle.js');
const started = Date.now();
await build({
  entryPoints: [here('main.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  sourcemap: true,
  logLevel: 'warning',
  // The CommonJS modules inlined with client-node call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
console.log(
  `operator bundled into ${outfile} (${(statSync(outfile).size / 1e6).toFixed(1)} MB, ${Date.now() - started} ms)`,
);
