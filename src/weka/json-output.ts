// Strict readers for the JSON the tools print. Anything unexpected becomes a WekaOutputError that
// names the command, says which field was wrong and quotes the output.
import { WekaOutputError } from './errors.js';
import { isUUID } from './validate.js';

export type JsonObject = Readonly<Record<string, unknown>>;

/** Where a value came from, so an error can say which command and which field. */
export interface OutputContext {
  readonly command: string;
  readonly stdout: string;
}

/**
 * The JSON a tool printed. Weka's tools may print warnings before it (docs/weka-interface.md,
 * `weka-sign-drive list`): the JSON then starts at the first line that opens an object or array.
 */
export function parseJsonOutput(ctx: OutputContext): unknown {
  if (ctx.stdout.trim() === '') throw new WekaOutputError(ctx.command, 'no output', ctx.stdout);
  try {
    return JSON.parse(ctx.stdout) as unknown;
  } catch {
    const start = ctx.stdout.search(/^[ \t]*[[{]/m);
    if (start > 0) {
      try {
        return JSON.parse(ctx.stdout.slice(start)) as unknown;
      } catch {
        // Not JSON after the warnings either.
      }
    }
    throw new WekaOutputError(ctx.command, 'not valid JSON', ctx.stdout);
  }
}

export function expectObject(ctx: OutputContext, value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(ctx, `${where} is not an object`);
  return value as JsonObject;
}

export function expectArray(ctx: OutputContext, value: unknown, where: string): readonly unknown[] {
  if (!Array.isArray(value)) fail(ctx, `${where} is not an array`);
  return value;
}

export function stringField(ctx: OutputContext, obj: JsonObject, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string' || value === '') fail(ctx, `${where}.${key} is not a non-empty string`);
  return value;
}

export function uuidField(ctx: OutputContext, obj: JsonObject, key: string, where: string): string {
  const value = obj[key];
  if (!isUUID(value)) fail(ctx, `${where}.${key} is not a UUID`);
  return value;
}

/** An integer field; `min` is 0 for IDs and capacities, 1 for sizes. */
export function intField(ctx: OutputContext, obj: JsonObject, key: string, where: string, min: number): number {
  const value = obj[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    fail(ctx, `${where}.${key} is not an integer >= ${min}`);
  }
  return value;
}

export function booleanField(ctx: OutputContext, obj: JsonObject, key: string, where: string): boolean {
  const value = obj[key];
  if (typeof value !== 'boolean') fail(ctx, `${where}.${key} is not a boolean`);
  return value;
}

export function fail(ctx: OutputContext, reason: string): never {
  throw new WekaOutputError(ctx.command, reason, ctx.stdout);
}
