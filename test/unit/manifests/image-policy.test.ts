// The image allow-list: which images the operator creates pods from. An entry is a repository
// (any tag or digest of it passes, nothing else) or, ending in "/", a registry or path prefix.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ALLOWED_IMAGES,
  imageAllowed,
  imageNotAllowedMessage,
  parseAllowedImages,
} from '../../../src/manifests/image-policy.js';

const WEKA = 'quay.io/weka.io/weka-in-container';
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

describe('imageAllowed', () => {
  const cases: Array<[string, string[], boolean]> = [
    // a repository entry: the repository itself, with any tag and/or digest
    [WEKA, [WEKA], true],
    [`${WEKA}:4.4.10`, [WEKA], true],
    [`${WEKA}:4.4.10.183`, [WEKA], true],
    [`${WEKA}:latest`, [WEKA], true],
    [`${WEKA}@${DIGEST}`, [WEKA], true],
    [`${WEKA}:4.4.10@${DIGEST}`, [WEKA], true],
    // ... and nothing that merely starts with the same characters
    [`${WEKA}-evil:1`, [WEKA], false],
    [`${WEKA}evil`, [WEKA], false],
    [`${WEKA}/evil:1`, [WEKA], false],
    [`${WEKA}.evil.example/x:1`, [WEKA], false],
    [`quay.io/weka.io/weka-in-containe:1`, [WEKA], false],
    // a tag or digest that is not one (the runtime would not parse it; neither do we)
    [`${WEKA}:`, [WEKA], false],
    [`${WEKA}:4.4/../evil`, [WEKA], false],
    [`${WEKA}:-bad`, [WEKA], false],
    [`${WEKA}@sha256:short`, [WEKA], false],
    [`${WEKA}:1:2`, [WEKA], false],
    [`${WEKA}:${'a'.repeat(129)}`, [WEKA], false],
    [`${WEKA}:${'a'.repeat(128)}`, [WEKA], true],
    // another repository, another registry, the same name elsewhere
    ['docker.io/weka/weka-in-container:4.4', [WEKA], false],
    ['weka-in-container:4.4', [WEKA], false],
    ['evil.example/quay.io/weka.io/weka-in-container:4.4', [WEKA], false],
    ['', [WEKA], false],
    // a prefix entry (ending in "/"): any repository below it, whole path components only
    ['registry.example.com/weka/weka-in-container:4.4', ['registry.example.com/weka/'], true],
    ['registry.example.com/weka/mirror/weka-in-container@' + DIGEST, ['registry.example.com/weka/'], true],
    ['registry.example.com/weka-evil/x:1', ['registry.example.com/weka/'], false],
    ['registry.example.com/weka/', ['registry.example.com/weka/'], false],
    ['registry.example.com/weka//x:1', ['registry.example.com/weka/'], false],
    ['registry.example.com/weka/UPPER:1', ['registry.example.com/weka/'], false],
    // a registry with a port
    ['localhost:5000/weka-in-container:4.4', ['localhost:5000/weka-in-container'], true],
    ['localhost:5000/weka-in-container-evil:4.4', ['localhost:5000/weka-in-container'], false],
    // several entries: any one of them
    [`mirror.example/weka:1`, [WEKA, 'mirror.example/weka'], true],
    [`${WEKA}:1`, [WEKA, 'mirror.example/weka'], true],
    ['other.example/weka:1', [WEKA, 'mirror.example/weka'], false],
    // no entry: nothing passes
    [`${WEKA}:1`, [], false],
  ];
  it.each(cases)('%s with %j: %s', (image, allowed, expected) => {
    expect(imageAllowed(image, allowed)).toBe(expected);
  });

  it('allows the default proxy image by default', () => {
    expect(DEFAULT_ALLOWED_IMAGES).toEqual([WEKA]);
    expect(imageAllowed('quay.io/weka.io/weka-in-container:4.4.10.183', DEFAULT_ALLOWED_IMAGES)).toBe(true);
  });
});

describe('parseAllowedImages', () => {
  it('reads a comma-separated list, trimming blanks', () => {
    expect(parseAllowedImages(` ${WEKA} , registry.example.com/weka/ ,`)).toEqual({
      ok: true,
      allowed: [WEKA, 'registry.example.com/weka/'],
    });
    expect(parseAllowedImages('localhost:5000/weka')).toEqual({ ok: true, allowed: ['localhost:5000/weka'] });
  });

  const refused: Array<[string, RegExp]> = [
    ['', /at least one/],
    [' , ', /at least one/],
    [`${WEKA}:4.4`, /"quay.io\/weka.io\/weka-in-container:4.4".*without a tag or digest/],
    [`${WEKA}@${DIGEST}`, /without a tag or digest/],
    ['Quay.io/Weka', /not a repository/],
    ['quay.io/weka io', /not a repository/],
    ['/', /not a repository/],
    ['quay.io//weka', /not a repository/],
  ];
  it.each(refused)('refuses %j', (text, message) => {
    const parsed = parseAllowedImages(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});

describe('imageNotAllowedMessage', () => {
  it('names the image, the allowed entries and how to change them', () => {
    const message = imageNotAllowedMessage('evil.example/x:1', [WEKA, 'mirror.example/']);
    expect(message).toContain('evil.example/x:1');
    expect(message).toContain(`${WEKA} (any tag or digest)`);
    expect(message).toContain('mirror.example/ (any repository under it)');
    expect(message).toContain('allowedImages');
    expect(message).toContain('WEKA_ALLOWED_IMAGES');
  });
});
