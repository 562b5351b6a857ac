/**
 * The smallest virtual drive, and the least free space that makes a physical drive usable:
 * 3 x 128 GiB (the drive-sharing design).
 */
export const MIN_CHUNK_GIB = 384;

// Upper bounds of a request: what no node, no setting and no status could ever give. The CRD's CEL
// rules (src/api/schemas/capacity.ts) and the allocator's validation (validate-request.ts) both
// use them, so a request the apiserver admits and the allocator refuses differs only by what the
// CRD cannot see (the operator's settings, the cluster template, the drive types a ratio makes
// active).

/**
 * The most virtual drives one container can hold: the most its status lists
 * (`status.allocations.virtualDrives`, `addedVirtualDrives` and `addedDrives` have this maxItems).
 * An allocation of more could never be written.
 */
export const MAX_VIRTUAL_DRIVES_PER_CONTAINER = 256;

/**
 * The most virtual drives per drive core any configuration of the operator allows: the ceiling of
 * `maxVirtualDrivesPerCore` (WEKA_MAX_VIRTUAL_DRIVES_PER_CORE accepts 1 to 64; the default is 8).
 * The CRD cannot see the operator's setting, so it refuses only what no setting allows; the
 * allocator refuses what the setting in force does not.
 */
export const MAX_VIRTUAL_DRIVES_PER_CORE_CEILING = 64;

/**
 * The largest virtual drive: 1 PiB. A virtual drive is carved from one physical drive, and the
 * largest NVMe drives today hold about 112 TiB (122.88 TB).
 */
export const MAX_DRIVE_CAPACITY_GIB = 1024 * 1024;

/**
 * The most one node can hold, so the most a container can ask for: 16 PiB (128 drives of 128 TiB,
 * far beyond any server today). It also keeps every sum of GiB the allocator makes a safe integer.
 */
export const MAX_NODE_CAPACITY_GIB = 16 * 1024 * 1024;

/**
 * The most ports one cluster's range may take: one tenant's share, so that at least 15 clusters
 * fit between 35000 and 65535 and no cluster can take every port from the others (which would
 * leave every later cluster and standalone container PortsExhausted).
 */
export const MAX_CLUSTER_PORT_RANGE = 2000;
