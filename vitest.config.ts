import { defineConfig } from 'vitest/config';

// Unit tests run in parallel forks and touch no server. Integration tests share one local
// control plane (kube-apiserver, etcd, kwok, Temporal) that the global setup boots once.
export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
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
          // One control plane on two cores: test files run one at a time, in one fork.
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
