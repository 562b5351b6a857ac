// Error types that retrying cannot fix: bad input, unparseable output, a definite refusal by a
// Weka tool. Activities throw them as non-retryable ApplicationFailures; the retry policies list
// them too, so that an error of that type is never retried whatever threw it.
export const NON_RETRYABLE_ERRORS = [
  'WekaInputError',
  'WekaOutputError',
  'WekaCommandRefused',
  'InvalidObject',
  'NotFound',
];
