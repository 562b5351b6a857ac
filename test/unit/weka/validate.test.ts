import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  validContainerId,
  validDevicePath,
  validHostname,
  validName,
  validSizeGiB,
  validUUID,
} from '../../../src/weka/index.js';

const UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('device path validation', () => {
  it.each(['/dev/nvme0n1', '/dev/nvme10n1p2', '/dev/disk/by-id/nvme-Samsung_SSD_980.1', '/dev/sda'])(
    'accepts %s',
    (path) => {
      expect(validDevicePath(path)).toBe(path);
    },
  );

  it.each([
    ['outside /dev', '/etc/passwd'],
    ['relative', 'dev/nvme0n1'],
    ['bare /dev/', '/dev/'],
    ['parent segment', '/dev/../etc/passwd'],
    ['dot segment', '/dev/./nvme0n1'],
    ['empty segment', '/dev//nvme0n1'],
    ['trailing slash', '/dev/disk/'],
    ['shell command separator', '/dev/nvme0n1; rm -rf /'],
    ['command substitution', '/dev/$(reboot)'],
    ['backticks', '/dev/`id`'],
    ['space', '/dev/nvme0 n1'],
    ['newline', '/dev/nvme0n1\n--force'],
    ['glob', '/dev/nvme*'],
    ['too long', `/dev/${'a'.repeat(300)}`],
  ])('rejects %s', (_why, path) => {
    expect(() => validDevicePath(path)).toThrow(WekaInputError);
  });

  it('rejects non-strings', () => {
    expect(() => validDevicePath(42)).toThrow(WekaInputError);
    expect(() => validDevicePath(undefined)).toThrow(WekaInputError);
  });
});

describe('UUID validation', () => {
  it('accepts lower- and upper-case UUIDs', () => {
    expect(validUUID('virtual UUID', UUID)).toBe(UUID);
    expect(validUUID('virtual UUID', UUID.toUpperCase())).toBe(UUID.toUpperCase());
  });

  it.each([
    '',
    'not-a-uuid',
    `${UUID}0`,
    `{${UUID}}`,
    UUID.replace(/-/g, ''),
    `--${UUID.slice(2)}`,
    `${UUID} `,
    'g'.repeat(8) + UUID.slice(8),
  ])('rejects %j', (value) => {
    expect(() => validUUID('virtual UUID', value)).toThrow(/invalid virtual UUID/);
  });
});

describe('size and ID validation', () => {
  it('accepts positive integer sizes only', () => {
    expect(validSizeGiB(1)).toBe(1);
    for (const bad of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, '100']) {
      expect(() => validSizeGiB(bad)).toThrow(WekaInputError);
    }
  });

  it('accepts non-negative integer container IDs only', () => {
    expect(validContainerId(0)).toBe(0);
    expect(validContainerId(17)).toBe(17);
    for (const bad of [-1, 0.5, '3', Number.NaN]) expect(() => validContainerId(bad)).toThrow(WekaInputError);
  });
});

describe('name validation', () => {
  it('accepts Kubernetes-style names', () => {
    expect(validName('cluster name', 'weka-cluster.a_1')).toBe('weka-cluster.a_1');
    expect(validHostname('node-1.example')).toBe('node-1.example');
  });

  it('rejects names the tool would read as options or that carry shell syntax', () => {
    for (const bad of ['--force', '-x', '', 'a b', 'a;b', 'x'.repeat(254)]) {
      expect(() => validName('cluster name', bad)).toThrow(WekaInputError);
    }
    for (const bad of ['-node', 'node-', 'node_1', 'a b']) expect(() => validHostname(bad)).toThrow(WekaInputError);
  });

  it('names the field and quotes the value in the message', () => {
    expect(() => validName('container name', '--force')).toThrow('invalid container name "--force"');
  });
});
