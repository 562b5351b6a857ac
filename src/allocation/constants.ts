/**
 * The smallest virtual drive, and the least free space that makes a physical drive usable:
 * 3 x 128 GiB (the drive-sharing design).
 */
export const MIN_CHUNK_GIB = 384;
