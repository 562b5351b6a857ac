import { defineConfig } from 'vitest/config';
import { integrationControlPlanes } from './test/integration/control-planes.js';
import { LongFilesFirst } from './test/sequencer.js';

// Unit tests run in parallel forks and touch no server. Integration test files run as many at a
// time as there are local control planes, which the global setup boots: each file uses the one of
// its worker (test/support/harness.ts), so two files never share one.
const workers = integrationControlPlanes();

// Every Node.js process the suite starts (a fork per test file, the operator processes, the tools the
// tests run) would read and parse a NODE_EXTRA_CA_CERTS bundle at its start: about 60 ms of CPU each
// for a distribution's bundle. The tests dial only the local servers, whose CA they are given
// explicitly, so the workers, which pass their environment on, start without it.
delete process.env['NODE_EXTRA_CA_CERTS'];

export default defineConfig({
  test: {
    pool: 'forks',
    sequence: { sequencer: LongFilesFirst },
    // Shared by both projects: the pool is one, and its worker ids pick the control planes.
    poolOptions: { forks: { maxForks: workers, minForks: 1 } },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
          // Some unit tests start a process (helm, the bundler, sh); beside the integration files on
          // two cores one can take more than the default 5 s. A bound against a hang, not a measure.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          // The workflows alone, with their activities stubbed, on one shared Temporal server.
          name: 'workflows',
          include: ['test/workflows/**/*.test.ts'],
          pool: 'forks',
          globalSetup: ['test/workflows/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
