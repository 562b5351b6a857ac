// The operator against a Temporal namespace that is not set up for it: without its search
// attributes every workflow start would fail while /readyz stayed green, so it refuses to start,
// naming what is missing and the command that registers it; a namespace that does not exist is
// named too. Once the attributes are registered it starts.
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { operatorControlPlane, uniqueName } from '../support/harness.js';
import { COMPILED_OPERATOR, spawnOperator, type OperatorProcess } from '../support/operator-process.js';
import { startOperatorProcess } from '../support/operator.js';

const started: OperatorProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.kill()));
});

/** Runs the compiled operator on the namespace; resolves with its exit code once it ends by itself. */
async function exitCodeIn(namespace: string): Promise<{ code: number | string; output: string }> {
  const p = spawnOperator(operatorControlPlane(), {
    logName: uniqueName('operator-setup'),
    script: COMPILED_OPERATOR,
    env: {
      LOG_LEVEL: 'info',
      WEKA_HTTP_PORT: '0',
      WEKA_TASK_QUEUE: uniqueName('setup'),
      TEMPORAL_NAMESPACE: namespace,
    },
  });
  started.push(p);
  await eventually('the operator to give up', async () => (p.running() ? undefined : true), 60_000);
  return { code: await p.stop(), output: p.output() };
}

describe('a Temporal namespace not set up for the operator', () => {
  it(
    'is refused at start, saying what to register; once registered, the operator starts',
    { timeout: 120_000 },
    async () => {
      const connection = await Connection.connect({ address: operatorControlPlane().temporalAddress });
      try {
        const namespace = uniqueName('bare');
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs('1 day'),
        });
        await eventually('the namespace to be served', async () => {
          await connection.workflowService.describeNamespace({ namespace });
          return true;
        });

        const bare = await exitCodeIn(namespace);
        expect(bare.code, bare.output).toBe(2);
        const names = SEARCH_ATTRIBUTE_KEYS.map((k) => k.name);
        expect(bare.output).toContain(
          `Temporal namespace ${namespace} lacks the search attributes ${names.join(', ')}`,
        );
        expect(bare.output).toContain(`temporal operator search-attribute create --namespace ${namespace}`);
        expect(bare.output).not.toContain('worker running');

        const missing = await exitCodeIn(uniqueName('no-such'));
        expect(missing.code, missing.output).toBe(2);
        expect(missing.output).toMatch(/Temporal namespace no-such-\S+ does not exist/);

        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(
            names.map((n) => [n, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
          ),
        });
        started.push(
          await startOperatorProcess(
            { WEKA_TASK_QUEUE: uniqueName('setup'), TEMPORAL_NAMESPACE: namespace },
            'compiled',
          ),
        );
      } finally {
        await connection.close();
      }
    },
  );
});
