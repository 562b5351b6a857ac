import { describe, expect, it } from 'vitest';
import { messageOf } from '../../../src/errors.js';

describe('messageOf', () => {
  it.each([
    { thrown: new Error('apiserver unavailable'), text: 'apiserver unavailable' },
    { thrown: new TypeError('not a function'), text: 'not a function' },
    { thrown: 'a string', text: 'a string' },
    { thrown: 503, text: '503' },
    { thrown: undefined, text: 'undefined' },
    { thrown: { code: 409 }, text: '[object Object]' },
  ])('$text', ({ thrown, text }) => {
    expect(messageOf(thrown)).toBe(text);
  });
});
