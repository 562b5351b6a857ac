// The releases the repository records (deploy/releases.json, oldest first): each version with the
// commit its image and chart are built from. A release's own commit cannot hold its hash, so the
// commit after it records it (docs/releasing.md).
import { readFileSync } from 'node:fs';

export interface Release {
  readonly version: string;
  readonly commit: string;
  readonly date: string;
}

const file = new URL('../../deploy/releases.json', import.meta.url);

export const RELEASES: readonly Release[] = JSON.parse(readFileSync(file, 'utf8')) as Release[];

/** The newest release older than the code checked out (whose package.json says `current`). */
export function previousRelease(current: string): Release | undefined {
  return RELEASES.filter((r) => r.version !== current).at(-1);
}
