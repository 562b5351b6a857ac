// What a sign-drives spec turns into, and the specs refused before any device is touched.
import { describe, expect, it } from 'vitest';
import {
  labelSelectorText,
  signDrivesRequest,
  unsupportedTypeMessage,
  type OperationSpecInput,
} from '../../../src/lifecycle/sign-drives-request.js';

const spec = (payload: Record<string, unknown>, action = 'sign-drives'): OperationSpecInput =>
  ({
    action,
    payload: {
      signDrivesPayload: {
        type: 'device-paths',
        nodeSelector: { pool: 'a' },
        devicePaths: ['/dev/nvme0n1'],
        shared: true,
        ...payload,
      },
    },
  }) as OperationSpecInput;

const reasonOf = (input: OperationSpecInput) => {
  const result = signDrivesRequest(input);
  return result.ok ? 'ok' : result.reason;
};

describe('signDrivesRequest', () => {
  it('accepts shared device-paths signing and drops repeated paths', () => {
    const result = signDrivesRequest(spec({ devicePaths: ['/dev/nvme0n1', '/dev/nvme1n1', '/dev/nvme0n1'] }));
    expect(result).toEqual({
      ok: true,
      request: { nodeSelector: { pool: 'a' }, type: 'device-paths', devicePaths: ['/dev/nvme0n1', '/dev/nvme1n1'] },
    });
  });

  it('refuses exclusive signing, whether shared is false or unset', () => {
    const refused = signDrivesRequest(spec({ shared: false }));
    expect(refused).toMatchObject({ ok: false, reason: 'ExclusiveSigningUnsupported' });
    expect(!refused.ok && refused.message).toMatch(/only shared: true \(proxy signing\) is supported/);
    expect(reasonOf(spec({ shared: undefined }))).toBe('ExclusiveSigningUnsupported');
  });

  it('refuses other actions, a missing payload, an empty selector and unknown types', () => {
    expect(reasonOf(spec({}, 'force-resign-drives'))).toBe('UnsupportedAction');
    expect(reasonOf({ action: 'sign-drives', payload: {} })).toBe('MissingPayload');
    expect(reasonOf(spec({ nodeSelector: {} }))).toBe('MissingNodeSelector');
    expect(reasonOf(spec({ nodeSelector: undefined }))).toBe('MissingNodeSelector');
    expect(reasonOf(spec({ type: 'every-drive' }))).toBe('UnknownSigningType');
  });

  it('refuses device-paths without paths or with a path outside /dev', () => {
    expect(reasonOf(spec({ devicePaths: [] }))).toBe('MissingDevicePaths');
    expect(reasonOf(spec({ devicePaths: ['/dev/../etc/passwd'] }))).toBe('InvalidDevicePath');
    expect(reasonOf(spec({ devicePaths: ['nvme0n1'] }))).toBe('InvalidDevicePath');
  });

  it('accepts the types it cannot run yet, which fail per node with a message naming the type', () => {
    const result = signDrivesRequest(spec({ type: 'all-not-root', devicePaths: undefined }));
    expect(result).toMatchObject({ ok: true, request: { type: 'all-not-root', devicePaths: [] } });
    expect(unsupportedTypeMessage('all-not-root')).toMatch(/all-not-root is not supported yet/);
    expect(unsupportedTypeMessage('device-paths')).toBeUndefined();
  });
});

describe('labelSelectorText', () => {
  it('requires every label', () => {
    expect(labelSelectorText({ a: 'b', 'weka.io/drive-sharing': 'true' })).toBe('a=b,weka.io/drive-sharing=true');
  });
});
