// Ports as half-open blocks [port, port + count) and the one search every port allocator uses.

export interface PortBlock {
  readonly port: number;
  readonly count: number;
}

export const MAX_PORT = 65535;

/**
 * The lowest start s in [fromPort, toPort - size + 1] such that [s, s + size) overlaps no taken
 * block, i.e. the first free gap, including the one before the first taken block.
 */
export function lowestFreeStart(
  taken: readonly PortBlock[],
  fromPort: number,
  toPort: number,
  size: number,
): number | undefined {
  const sorted = [...taken].filter((block) => block.count > 0).sort((a, b) => a.port - b.port);
  let candidate = fromPort;
  for (const block of sorted) {
    const end = block.port + block.count;
    if (end <= candidate) continue;
    if (block.port >= candidate + size) break;
    candidate = end;
  }
  return candidate + size - 1 <= toPort ? candidate : undefined;
}
