// The simulator server's exchange (server.ts): a request is whole only once every field it
// announces has come, however the bytes are cut; an answer splits back into stderr and stdout.
import { describe, expect, it } from 'vitest';
import { decodeAnswer, decodeRequest, encodeAnswer, encodeRequest } from '../../../deploy/local/weka-sim/server.js';

describe("the simulator server's exchange", () => {
  it('reads a request only once every announced field has come, however its bytes are cut', () => {
    const argv = ['--state', '/tmp/a b', '--', 'weka-sign-drive', 'show', '', 'ünï'];
    const bytes = encodeRequest(argv);
    for (let cut = 0; cut < bytes.length; cut++) expect(decodeRequest(bytes.subarray(0, cut))).toBeUndefined();
    expect(decodeRequest(bytes)).toEqual({ argv });
    expect(decodeRequest(encodeRequest([]))).toEqual({ argv: [] });
  });

  it('refuses a request whose count is not a whole number', () => {
    expect(decodeRequest(Buffer.from('two\0a\0b\0'))).toEqual({ error: 'bad argument count "two"' });
    expect(decodeRequest(Buffer.from('-1\0'))).toEqual({ error: 'bad argument count "-1"' });
  });

  it('gives back the exit code, stderr and stdout it encoded, multi-byte text included', () => {
    for (const result of [
      { exitCode: 0, stdout: '{"devices":[]}\n', stderr: '' },
      { exitCode: 65, stdout: '', stderr: 'weka-sign-drive: refusé\n' },
      { exitCode: 75, stdout: 'partial\n', stderr: 'a\nb\n' },
    ])
      expect(decodeAnswer(encodeAnswer(result))).toEqual(result);
    expect(() => decodeAnswer(Buffer.from('garbage'))).toThrow(/malformed answer/);
  });
});
