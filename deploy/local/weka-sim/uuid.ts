// Random (version 4) UUIDs from the kernel's random source. node:crypto would do the same, but
// loading it costs a simulated command about 6 ms (OpenSSL's start-up), more than a tenth of
// the command.
import { closeSync, openSync, readSync } from 'node:fs';

export function randomUUID(): string {
  const bytes = Buffer.alloc(16);
  const fd = openSync('/dev/urandom', 'r');
  try {
    for (let read = 0; read < bytes.length;) read += readSync(fd, bytes, read, bytes.length - read, null);
  } finally {
    closeSync(fd);
  }
  return uuidFromBytes(bytes);
}

/** The RFC 9562 version 4 UUID of 16 random bytes: the version and variant bits set, the rest kept. */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error(`a UUID takes 16 bytes, not ${bytes.length}`);
  const b = Uint8Array.from(bytes);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(b).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
