import { describe, expect, it } from 'vitest';
import {
  NON_RETRYABLE_WEKA_ERRORS,
  WEKA_COMMAND_FAILED,
  WEKA_COMMAND_REFUSED,
  WEKA_DEVICE_NOT_LISTED,
  WEKA_INPUT_ERROR,
  WEKA_OUTPUT_ERROR,
  WekaCommandFailed,
  WekaCommandRefused,
  WekaDeviceNotListed,
  WekaInputError,
  WekaOutputError,
  classifyExit,
  commandText,
  completeCall,
  quoteOutput,
  readDriveCall,
  signProxyCall,
} from '../../../src/weka/index.js';

describe('exit code classification', () => {
  it('treats usage, data and config errors as refusals and everything else as transient', () => {
    expect(classifyExit(0)).toBe('success');
    expect([64, 65, 78].map(classifyExit)).toEqual(['refused', 'refused', 'refused']);
    expect([1, 2, 70, 75, 124, 137, 255].map(classifyExit)).toEqual(Array(7).fill('transient'));
  });
});

describe('completeCall', () => {
  const call = signProxyCall('/dev/nvme0n1');

  it('returns the parsed output on exit 0', () => {
    const read = readDriveCall('/dev/nvme0n1');
    const stdout = JSON.stringify({
      command: 'list',
      timestamp: '2024-01-01T00:00:00Z',
      devices: [
        {
          path: '/dev/nvme0n1',
          status: 'excluded',
          physical_uuid: '',
          hardware: { serial_number: 'S1', model: 'M', size_bytes: 10 * 2 ** 30, iu_size: 4096 },
          weka_info: null,
        },
      ],
    });
    expect(completeCall(read, { stdout, stderr: '', exitCode: 0 })).toMatchObject({
      devicePath: '/dev/nvme0n1',
      serial: 'S1',
      capacityGiB: 10,
    });
    const other = captureError(() => completeCall(readDriveCall('/dev/nvme1n1'), { stdout, stderr: '', exitCode: 0 }));
    expect(other).toBeInstanceOf(WekaDeviceNotListed);
    expect(other.message).toContain('weka-sign-drive list -j: no device /dev/nvme1n1 (listed: /dev/nvme0n1)');
  });

  it('throws WekaCommandRefused with the command and stderr on a refusal exit code', () => {
    const error = captureError(() => completeCall(call, { stdout: '', stderr: 'already signed\n', exitCode: 65 }));
    expect(error).toBeInstanceOf(WekaCommandRefused);
    expect(error.message).toContain('weka-sign-drive sign proxy -- /dev/nvme0n1');
    expect(error.message).toContain('already signed');
    expect((error as WekaCommandRefused).exitCode).toBe(65);
  });

  it('throws WekaCommandFailed on any other non-zero exit code', () => {
    const error = captureError(() => completeCall(call, { stdout: '', stderr: 'simulated failure', exitCode: 75 }));
    expect(error).toBeInstanceOf(WekaCommandFailed);
    expect(error.name).toBe(WEKA_COMMAND_FAILED);
  });
});

describe('error names', () => {
  it('pins each error name to its exported constant so Temporal policies can match on it', () => {
    expect(new WekaInputError('f', 1, 'r').name).toBe(WEKA_INPUT_ERROR);
    expect(new WekaOutputError('c', 'r', 'o').name).toBe(WEKA_OUTPUT_ERROR);
    expect(new WekaCommandRefused('c', 65, '').name).toBe(WEKA_COMMAND_REFUSED);
    expect(new WekaCommandFailed('c', 75, '').name).toBe(WEKA_COMMAND_FAILED);
    expect(new WekaDeviceNotListed('c', '/dev/x', []).name).toBe(WEKA_DEVICE_NOT_LISTED);
  });

  it('lists everything but a transient failure as non-retryable', () => {
    expect([...NON_RETRYABLE_WEKA_ERRORS].sort()).toEqual(
      [WEKA_COMMAND_REFUSED, WEKA_DEVICE_NOT_LISTED, WEKA_INPUT_ERROR, WEKA_OUTPUT_ERROR].sort(),
    );
  });
});

describe('message helpers', () => {
  it('quotes arguments that are not plain words', () => {
    expect(commandText(['weka', 'cluster', 'create', 'a b'])).toBe('weka cluster create "a b"');
  });

  it('truncates long output and says how much was left out', () => {
    const quoted = quoteOutput('x'.repeat(1000), 10);
    expect(quoted).toBe('"xxxxxxxxxx" (… 990 more characters)');
  });
});

function captureError(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}
