import { describe, expect, it } from 'vitest';
import {
  decodeSerialsAnnotation,
  encodeSerialsAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  exclusiveDrivesResource,
} from '../../../src/annotations/index.js';

describe('the exclusive-drives annotation (the Weka operator format: a JSON list of serials)', () => {
  it('reads what the Weka operator writes, and an absent annotation as no drives', () => {
    expect(decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, '["233447E40E3C","233447E40CFD"]')).toEqual({
      ok: true,
      serials: ['233447E40E3C', '233447E40CFD'],
    });
    expect(decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, undefined)).toEqual({ ok: true, serials: [] });
  });

  it('writes serials sorted and once, so the same drives always read the same', () => {
    expect(encodeSerialsAnnotation(['b', 'a', 'b'])).toBe('["a","b"]');
  });

  it.each([
    ['not JSON', '[a', /is not JSON/],
    ['an object', '{"a":1}', /must be a JSON list of drive serials/],
    ['an empty serial', '["a",""]', /entry 1 is not a serial/],
    ['a number', '[7]', /entry 0 is not a serial/],
  ])('refuses %s, naming the annotation', (_what, text, message) => {
    const decoded = decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, text);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) {
      expect(decoded.error.message).toMatch(message);
      expect(decoded.error.message).toContain('weka.io/weka-drives');
    }
  });

  it('counts the signed drives that are not blocked as weka.io/drives', () => {
    expect(exclusiveDrivesResource(['a', 'b', 'c', 'c'], ['b', 'x'])).toEqual({ 'weka.io/drives': '2' });
  });
});
