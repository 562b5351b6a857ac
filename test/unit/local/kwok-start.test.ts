import { describe, expect, it } from 'vitest';
import { kwokStartRetryable } from '../../../deploy/local/kwok.js';

// The tail of a kwok log after its CEL stage initialisation crashed: the first lines of the
// runtime's report ("fatal error: concurrent map writes") are above the 15 lines quoted.
const crashTail = `kwok(weka-node-8e2fa9c9) exited during start-up (exit 2); log: /tmp/x/logs/kwok-weka-node-8e2fa9c9.log
\t/root/go/pkg/mod/sigs.k8s.io/kwok@v0.8.0/pkg/utils/cel/environment.go:52 +0x25c
sigs.k8s.io/kwok/pkg/utils/lifecycle.(*Stage).init(0x25bda9f2600, 0x25bdae51050)
created by sigs.k8s.io/kwok/pkg/kwok/controllers.(*NodeController).Start in goroutine 1`;

describe('starting a node kwok again', () => {
  it.each([
    ['a Go runtime crash whose report scrolled out of the quoted tail', crashTail],
    [
      'a port taken by another socket',
      'kwok(n) exited during start-up (exit 1); log: l\nlisten tcp 127.0.0.1:4000: bind: address already in use',
    ],
  ])('retries after %s', (_, message) => {
    expect(kwokStartRetryable(message)).toBe(true);
  });

  it.each([
    ['a refused flag', 'kwok(n) exited during start-up (exit 1); log: l\nError: unknown flag: --bogus'],
    ['a start-up that timed out', 'kwok(n) was not ready within 30000 ms; log: l\n'],
  ])('gives up on %s', (_, message) => {
    expect(kwokStartRetryable(message)).toBe(false);
  });
});
