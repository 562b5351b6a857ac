// The operator's version, from the package.json it ships with (next to src/ in a checkout, next to
// dist/ in the image).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function operatorVersion(): string {
  for (const candidate of ['../../package.json', '../../../package.json']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (!existsSync(path)) continue;
    const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown; version?: unknown };
    if (pkg.name === 'weka-drives-operator' && typeof pkg.version === 'string') return pkg.version;
  }
  return 'unknown';
}
