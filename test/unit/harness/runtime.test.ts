// The suite runs on the maintained LTS the image runs, whatever Node started npm: package.json pins
// the `node` package, whose binary npm's scripts find first on their PATH.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const dockerfile = readFileSync(new URL('../../../deploy/Dockerfile', import.meta.url), 'utf8');

describe('the runtime', () => {
  it('is the Node LTS package.json pins, and the image runs the same major', () => {
    const pinned = pkg.devDependencies['node']!;
    expect(process.versions.node).toBe(pinned);
    const major = pinned.split('.')[0];
    expect(Number(major)).toBeGreaterThanOrEqual(22);
    expect(dockerfile).toContain(`ARG NODE_IMAGE=node:${major}-bookworm-slim`);
    expect(pkg.devDependencies['@types/node']!.split('.')[0]).toBe(major);
  });
});
