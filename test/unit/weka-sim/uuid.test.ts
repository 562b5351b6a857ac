import { describe, expect, it } from 'vitest';
import { randomUUID, uuidFromBytes } from '../../../deploy/local/weka-sim/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the simulator’s random UUIDs', () => {
  it('are version 4 UUIDs, each different', () => {
    const uuids = Array.from({ length: 200 }, () => randomUUID());
    for (const u of uuids) expect(u).toMatch(V4);
    expect(new Set(uuids).size).toBe(uuids.length);
  });

  it('set the version and variant bits and keep every other bit of the bytes', () => {
    expect(uuidFromBytes(new Uint8Array(16).fill(0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(uuidFromBytes(new Uint8Array(16))).toBe('00000000-0000-4000-8000-000000000000');
    expect(uuidFromBytes(Uint8Array.from({ length: 16 }, (_, i) => i))).toBe('00010203-0405-4607-8809-0a0b0c0d0e0f');
  });

  it('refuses anything but 16 bytes', () => {
    expect(() => uuidFromBytes(new Uint8Array(15))).toThrow(/16 bytes, not 15/);
  });
});
