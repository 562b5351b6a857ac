// Loads the sample manifests under deploy/samples for the unit and integration tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const SAMPLES_DIR = fileURLToPath(new URL('../../../deploy/samples/', import.meta.url));

export interface SampleManifest {
  file: string;
  kind: string;
  name: string;
  manifest: Record<string, unknown>;
}

export function loadSamples(): SampleManifest[] {
  const files = readdirSync(SAMPLES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(SAMPLES_DIR, file), 'utf8')).map((doc) => {
      const manifest = doc.toJS() as Record<string, unknown>;
      const metadata = manifest['metadata'] as { name: string };
      return { file, kind: String(manifest['kind']), name: metadata.name, manifest };
    }),
  );
}
