import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTROL_PLANES, integrationControlPlanes } from '../../integration/control-planes.js';
import { LONG_FILES } from '../../sequencer.js';

describe('how many integration files run at a time', () => {
  it('is the default unless WEKA_TEST_CONTROL_PLANES says otherwise', () => {
    expect(integrationControlPlanes({})).toBe(DEFAULT_CONTROL_PLANES);
    expect(integrationControlPlanes({ WEKA_TEST_CONTROL_PLANES: '' })).toBe(DEFAULT_CONTROL_PLANES);
    expect(integrationControlPlanes({ WEKA_TEST_CONTROL_PLANES: '1' })).toBe(1);
    expect(integrationControlPlanes({ WEKA_TEST_CONTROL_PLANES: '2' })).toBe(2);
  });

  it.each(['0', '-1', '1.5', 'two', '9'])('refuses WEKA_TEST_CONTROL_PLANES=%s with a message naming it', (raw) => {
    expect(() => integrationControlPlanes({ WEKA_TEST_CONTROL_PLANES: raw })).toThrow(/WEKA_TEST_CONTROL_PLANES/);
  });
});

describe('the long files the sequencer starts first', () => {
  it('are integration test files that exist, each named once', () => {
    for (const file of LONG_FILES) {
      expect(file).toMatch(/^test\/integration\/.*\.test\.ts$/);
      expect(existsSync(file), file).toBe(true);
    }
    expect(new Set(LONG_FILES).size).toBe(LONG_FILES.length);
  });
});
