import { describe, expect, it } from 'vitest';
import { imageEnv, runtimeEnv } from '../../bench/image-env.js';

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
});
