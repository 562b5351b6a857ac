import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// vitest.config.ts drops NODE_EXTRA_CA_CERTS before the pool starts: with it, every Node.js process
// the suite starts parses the bundle it names. This fails on a machine whose environment sets it.
describe('the test workers', () => {
  it('start without NODE_EXTRA_CA_CERTS, and so do the processes they start', () => {
    expect(process.env['NODE_EXTRA_CA_CERTS']).toBeUndefined();
    const child = execFileSync(process.execPath, ['-p', "process.env.NODE_EXTRA_CA_CERTS ?? 'unset'"], {
      encoding: 'utf8',
    });
    expect(child.trim()).toBe('unset');
  });
});
