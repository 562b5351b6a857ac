// The node annotations of drives signed for exclusive use, in the Weka operator's own format so that
// either operator reads what the other wrote: a JSON list of serials, and a list of the serials an
// administrator blocked (a failing drive, say). The node's `weka.io/drives` resource counts the
// difference.
import type { MalformedAnnotationError } from './shared-drives.js';

export const EXCLUSIVE_DRIVES_ANNOTATION = 'weka.io/weka-drives';
export const BLOCKED_DRIVES_ANNOTATION = 'weka.io/blocked-drives';
/**
 * Shared drives blocked by physical UUID, a JSON list like the serials (the Weka operator's
 * `weka.io/blocked-drives-physical-uuids`, internal/consts/consts.go).
 */
export const BLOCKED_PHYSICAL_UUIDS_ANNOTATION = 'weka.io/blocked-drives-physical-uuids';
/** Extended resource: how many exclusive drives the node offers. */
export const EXCLUSIVE_DRIVES_RESOURCE = 'weka.io/drives';

export type SerialsDecodeResult =
  { readonly ok: true; readonly serials: string[] } | { readonly ok: false; readonly error: MalformedAnnotationError };

/** Sorted and without repeats, so that writing the same drives writes the same text. */
export function encodeSerialsAnnotation(serials: readonly string[]): string {
  return JSON.stringify([...new Set(serials)].sort());
}

/** Reads a list of serials; an absent annotation is an empty list. Never throws. */
export function decodeSerialsAnnotation(key: string, text: string | undefined): SerialsDecodeResult {
  if (text === undefined || text.trim() === '') return { ok: true, serials: [] };
  const bad = (problem: string): SerialsDecodeResult => ({
    ok: false,
    error: { type: 'MalformedAnnotation', message: `annotation ${key} ${problem}` },
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return bad(`is not JSON (${cause instanceof Error ? cause.message : String(cause)})`);
  }
  if (!Array.isArray(parsed)) return bad('must be a JSON list of drive serials');
  const index = parsed.findIndex((entry) => typeof entry !== 'string' || entry.trim() === '');
  if (index >= 0) return bad(`entry ${index} is not a serial (a non-empty string): ${JSON.stringify(parsed[index])}`);
  return { ok: true, serials: [...new Set(parsed as string[])] };
}

/** The `weka.io/drives` count: signed serials that are not blocked. */
export function exclusiveDrivesResource(signed: readonly string[], blocked: readonly string[]): Record<string, string> {
  const out = new Set(blocked);
  return { [EXCLUSIVE_DRIVES_RESOURCE]: String(new Set(signed.filter((s) => !out.has(s))).size) };
}
