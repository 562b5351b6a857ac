// Error text for logs and messages: what was thrown may be anything.

/** The message of an Error, or the text of anything else that was thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
