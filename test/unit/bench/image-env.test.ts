import { describe, expect, it } from 'vitest';
import {
  ensureImagePreloads,
  imageDockerfile,
  imageEnv,
  PRELOAD_PACKAGES,
  preloadedLibraries,
  runtimeEnv,
  runtimeStage,
} from '../../bench/image-env.js';

describe('the image environment the benchmarks give the operator', () => {
  it('takes the ENV lines of the last stage only, quoted or not', () => {
    const dockerfile = [
      'FROM node AS build',
      'ENV BUILD_ONLY=1',
      'FROM node AS runtime',
      'ENV NODE_ENV=production',
      'ENV NODE_OPTIONS="--max-semi-space-size=8 --no-warnings"',
      'RUN echo ENV NOT=this',
    ].join('\n');
    expect(runtimeEnv(dockerfile)).toEqual({
      NODE_ENV: 'production',
      NODE_OPTIONS: '--max-semi-space-size=8 --no-warnings',
    });
  });

  it("reads deploy/Dockerfile's runtime stage", () => {
    expect(imageEnv()).toMatchObject({ NODE_ENV: 'production' });
  });

  it('reads LD_PRELOAD as ld.so does, by spaces or colons', () => {
    expect(preloadedLibraries({ LD_PRELOAD: ' liba.so.1:libb.so.2  libc.so ' })).toEqual([
      'liba.so.1',
      'libb.so.2',
      'libc.so',
    ]);
    expect(preloadedLibraries({})).toEqual([]);
  });

  it('installs, in the runtime stage, the Debian package of every library the image preloads', () => {
    const libraries = preloadedLibraries(imageEnv());
    expect(libraries).toContain('libjemalloc.so.2');
    const stage = runtimeStage(imageDockerfile());
    for (const lib of libraries) {
      const pkg = PRELOAD_PACKAGES[lib];
      expect(pkg, lib).toBeDefined();
      expect(stage).toMatch(new RegExp(`apt-get install [^\\n]*\\s${pkg}(\\s|$)`, 'm'));
    }
  });

  it('refuses to benchmark with a preloaded library it cannot install', async () => {
    await expect(ensureImagePreloads({ LD_PRELOAD: 'libnotknown.so.1' })).rejects.toThrow(
      /preloads libnotknown\.so\.1, and image-env\.ts names no Debian package/,
    );
  });
});
