// The operator's log lines: what a log shipper and a person reading them get.
import { Writable } from 'node:stream';
import { asyncLocalStorage, type Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { operatorLogger, sdkLogger } from '../../../deploy/operator/logging.js';

function captured(level: 'info' | 'debug' = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().trim().split('\n'));
      done();
    },
  });
  return {
    logger: operatorLogger(level, sink),
    lines,
    parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('operator log lines', () => {
  it('name their level by its name and carry one component key in a child', () => {
    const { logger, lines, parsed } = captured();
    logger.child({ component: 'watcher' }).info({ kind: 'WekaContainer' }, 'listed');
    expect(parsed()[0]).toMatchObject({
      level: 'info',
      component: 'watcher',
      name: 'weka-drives-operator',
      msg: 'listed',
    });
    expect(lines[0]!.match(/"component"/g)).toHaveLength(1);
  });

  it('write an error as an object with its type, message and stack', () => {
    const { logger, parsed } = captured();
    logger.warn({ err: new TypeError('bad input') }, 'failed');
    const err = parsed()[0]!.err as Record<string, unknown>;
    expect(err).toMatchObject({ type: 'TypeError', message: 'bad input' });
    expect(String(err.stack)).toContain('TypeError: bad input');
  });

  it("write a Kubernetes API error as its status code and the apiserver's message, without the response", () => {
    const { logger, parsed } = captured();
    const apiError = Object.assign(
      new Error('HTTP-Code: 422 Message: Unknown API Status Code! Body: {...} Headers: {...}'),
      {
        code: 422,
        body: JSON.stringify({ kind: 'Status', reason: 'Invalid', message: 'spec.numDrives: must be at least 1' }),
        headers: { 'audit-id': 'x' },
      },
    );
    logger.warn({ err: apiError }, 'write refused');
    const err = parsed()[0]!.err as Record<string, unknown>;
    expect(err).toMatchObject({ code: 422, message: 'spec.numDrives: must be at least 1' });
    expect(err.headers).toBeUndefined();
    expect(err.body).toBeUndefined();
  });

  it('name the workflow and the activity of a line written inside an activity, and nothing outside one', () => {
    const { logger, parsed } = captured();
    const info = {
      activityType: 'allocateForContainers',
      attempt: 2,
      workflowExecution: { workflowId: 'weka-node/node-1', runId: 'r1' },
    };
    asyncLocalStorage.run({ info } as unknown as Context, () => logger.info({ node: 'node-1' }, 'allocated'));
    logger.info('outside');
    const [inside, outside] = parsed();
    expect(inside).toMatchObject({
      workflowId: 'weka-node/node-1',
      runId: 'r1',
      activity: 'allocateForContainers',
      attempt: 2,
    });
    expect(outside!.workflowId).toBeUndefined();
  });

  it("carry the Temporal SDK's lines at their level with their metadata", () => {
    const { logger, parsed } = captured('debug');
    const sdk = sdkLogger(logger.child({ component: 'temporal-sdk' }));
    sdk.warn('Workflow task failed', { sdkComponent: 'worker', workflowId: 'w1' });
    sdk.log('DEBUG', 'polling', { sdkComponent: 'core' });
    sdk.trace('not shown at debug');
    expect(parsed()).toEqual([
      expect.objectContaining({
        level: 'warn',
        component: 'temporal-sdk',
        sdkComponent: 'worker',
        workflowId: 'w1',
        msg: 'Workflow task failed',
      }),
      expect.objectContaining({ level: 'debug', sdkComponent: 'core', msg: 'polling' }),
    ]);
  });
});
