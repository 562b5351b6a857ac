// @ts-check
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test-artifacts/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code is replayed by Temporal's sandbox: it must stay deterministic, so it may not
    // reach the file system, the network, processes or clocks through Node's built-ins.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflows must not use Node built-ins; do it in an activity.',
          })),
          patterns: [
            {
              group: ['@kubernetes/*', 'pino', '@temporalio/worker', '@temporalio/client', '@temporalio/activity'],
              message: 'Workflows only import @temporalio/workflow, the pure core and activity types.',
            },
            {
              group: ['**/activities/*', '!**/activities/*types*', '!**/activities/index*'],
              message: 'Import activities as types through proxyActivities only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflows are reached through the protocol module (src/protocol.ts) and the worker's
    // workflowsPath, never by importing their implementation: that would pull workflow code into
    // processes where it must not run, and let callers depend on its internals.
    files: ['**/*.ts'],
    ignores: ['workflows/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/workflows/*', '**/workflows/*/**'],
              message: 'Import the protocol (src/protocol.ts), not a workflow implementation.',
            },
          ],
        },
      ],
    },
  },
  {
    // The pure core: plain functions over plain data.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/protocol.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'src/ is the pure core: no I/O.' })),
          patterns: [
            {
              group: ['@kubernetes/*', '@temporalio/*', 'pino'],
              message: 'src/ is the pure core: no Kubernetes, Temporal or logging.',
            },
          ],
        },
      ],
    },
  },
);
