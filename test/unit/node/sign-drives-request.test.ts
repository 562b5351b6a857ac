// What a sign-drives spec turns into, and the specs refused before any device is touched.
import { describe, expect, it } from 'vitest';
import {
  labelSelectorText,
  signDrivesRequest,
  signingRequestFor,
  type OperationSpecInput,
} from '../../../src/node/sign-drives-request.js';

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
      request: {
        nodeSelector: { pool: 'a' },
        type: 'device-paths',
        devicePaths: ['/dev/nvme0n1', '/dev/nvme1n1'],
        mode: 'proxy',
        options: {},
      },
    });
  });

  it('reads shared false or unset as exclusive signing, and carries the options', () => {
    expect(signDrivesRequest(spec({ shared: false }))).toMatchObject({ ok: true, request: { mode: 'exclusive' } });
    expect(signDrivesRequest(spec({ shared: undefined }))).toMatchObject({ ok: true, request: { mode: 'exclusive' } });
    const options = { allowEraseNonWekaPartitions: true, skipTrimFormat: true };
    expect(signDrivesRequest(spec({ options }))).toMatchObject({ ok: true, request: { options } });
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

  it('accepts every signing type; only device-paths carries paths', () => {
    for (const type of ['all-not-root', 'aws-all', 'gcp-all'])
      expect(signDrivesRequest(spec({ type, devicePaths: undefined }))).toMatchObject({
        ok: true,
        request: { type, devicePaths: [] },
      });
  });
});

describe('signingRequestFor', () => {
  const asked = { namespace: 'ns', name: 'op', uid: 'u1' };
  const live = { uid: 'u1', deleting: false, spec: spec({}) };

  it('gives the request of a live operation that selects the node', () => {
    expect(signingRequestFor(asked, live, { pool: 'a' })).toMatchObject({ ok: true, request: { mode: 'proxy' } });
  });

  it('refuses a missing, replaced or deleting operation and a node it does not select', () => {
    const refusal = (r: ReturnType<typeof signingRequestFor>) => (r.ok ? 'ok' : r.refusal);
    expect(refusal(signingRequestFor(asked, null, { pool: 'a' }))).toMatch(/does not exist/);
    expect(refusal(signingRequestFor(asked, { ...live, uid: 'u2' }, { pool: 'a' }))).toMatch(/does not exist/);
    expect(refusal(signingRequestFor(asked, { ...live, deleting: true }, { pool: 'a' }))).toMatch(/being deleted/);
    expect(refusal(signingRequestFor(asked, live, { pool: 'b' }))).toMatch(/does not select this node/);
  });
});

describe('labelSelectorText', () => {
  it('requires every label', () => {
    expect(labelSelectorText({ a: 'b', 'weka.io/drive-sharing': 'true' })).toBe('a=b,weka.io/drive-sharing=true');
  });
});
