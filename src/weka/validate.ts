// Every value that ends up in a Weka argv passes through one of these first. Arguments are argv
// elements, never shell text, so the danger is not injection but a value the tool would read as
// something else: a path outside /dev, a "UUID" starting with "--", a size of 1e3.
import { WekaInputError } from './errors.js';

const DEVICE_PATH = /^\/dev\/[A-Za-z0-9._/-]+$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// Kubernetes object names are at most 253 characters; Weka names follow the same shape here.
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const MAX_DEVICE_PATH = 255;

export function isUUID(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function isDevicePath(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_DEVICE_PATH || !DEVICE_PATH.test(value)) return false;
  // "/dev/../etc/passwd" matches the character class; reject empty, "." and ".." segments.
  const segments = value.slice('/dev/'.length).split('/');
  return segments.every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

export function validDevicePath(value: unknown): string {
  if (!isDevicePath(value)) {
    throw new WekaInputError(
      'device path',
      value,
      'expected /dev/NAME made of letters, digits, ".", "_", "-" and "/" segments',
    );
  }
  return value;
}

/** A virtual UUID, physical UUID, drive UUID or cluster GUID: 8-4-4-4-12 hex digits. */
export function validUUID(field: string, value: unknown): string {
  if (!isUUID(value))
    throw new WekaInputError(field, value, 'expected a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx');
  return value;
}

export function validSizeGiB(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WekaInputError('size in GiB', value, 'expected a positive integer');
  }
  return value;
}

export function validContainerId(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new WekaInputError('container ID', value, 'expected a non-negative integer');
  }
  return value;
}

/** A TCP port. */
export function validPort(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > 65535) {
    throw new WekaInputError(field, value, 'expected an integer port from 1 to 65535');
  }
  return value;
}

/** Cluster and container names: must not start with "-", which the tool would parse as an option. */
export function validName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw new WekaInputError(
      field,
      value,
      'expected 1-253 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
  }
  return value;
}

export function validHostname(value: unknown): string {
  if (typeof value !== 'string' || !HOSTNAME.test(value)) {
    throw new WekaInputError('hostname', value, 'expected a DNS-style host name');
  }
  return value;
}

/** UUIDs are compared case-insensitively: the tools accept either case. */
export function sameUUID(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
