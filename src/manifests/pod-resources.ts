// What the operator's pods ask of their node besides drives: CPU, memory and the 2 MiB huge pages
// Weka runs on. Sized as the reference operator sizes them (weka/weka-operator at 8abf081:
// internal/controllers/allocator/templates.go 88-103 for a drive container's huge pages,
// internal/controllers/resources/pod.go 1142-1266 for its CPU and memory and 1235-1240 for the
// ssdproxy's, internal/controllers/resources/hugepages.go 18-26 for the ssdproxy's huge pages), so
// that neither pod is BestEffort: the kubelet evicts those first when a node runs short.
//
// A drive container's pod is Guaranteed (every request equals its limit): it runs Weka's drive
// processes on dedicated cores. The ssdproxy's pod is Burstable, as in the reference: it asks for
// little and may use more while it serves many drives.

/** The priority class the operator's pods run with; the Helm chart creates it (templates/priorityclass.yaml). */
export const POD_PRIORITY_CLASS = 'weka-drives-no-evict';
/** The highest value a class that is not the system's may have: below system-node-critical only. */
export const POD_PRIORITY_VALUE = 1_000_000_000;

/** The PriorityClass object: above every workload's, and it never preempts another pod to run. */
export function podPriorityClassObject() {
  return {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: POD_PRIORITY_CLASS },
    value: POD_PRIORITY_VALUE,
    preemptionPolicy: 'Never',
    globalDefault: false,
    description: 'Weka drive containers and ssdproxies: evicted last, never preempting another pod.',
  };
}

export interface PodResources {
  requests: Record<string, string>;
  limits: Record<string, string>;
  /**
   * What Weka is told it may use of the huge pages (the MEMORY the weka-in-container image reads):
   * the pod's huge pages less what Weka keeps for itself (internal/controllers/resources/pod.go
   * 1068-1118, the offsets as templates.go 98-103 sets them).
   */
  wekaMemory: string;
}

/** Huge pages Weka keeps for itself beyond what it is told to use (the reference's offsets). */
const DRIVE_HUGEPAGES_OFFSET_PER_DRIVE_MIB = 200;
const PROXY_HUGEPAGES_OFFSET_MIB = 2048;

export interface DriveContainerShape {
  /** Weka drive cores (spec.driveCores, 1 when unset). */
  driveCores: number;
  /** Fixed-size virtual drives or whole drives (spec.numDrives); 0 for a container sized by containerCapacity. */
  numDrives: number;
}

/**
 * A drive container's CPU, memory and huge pages, request equal to limit:
 * - CPU: two hyperthreads per drive core and one for the container's management process, as the
 *   reference's `dedicated_ht` policy (the `auto` policy on the hyperthreaded nodes Weka runs on);
 * - memory: 8000 MiB (buffers and management), 3000 MiB per core, 700 MiB per drive;
 * - huge pages: 1400 MiB per core and 200 MiB per drive, or 1600 MiB per core when the container's
 *   size is a capacity rather than a number of drives; Weka keeps 200 MiB per drive (per core for
 *   a capacity) for itself and is told it may use the rest.
 */
export function driveContainerResources({ driveCores, numDrives }: DriveContainerShape): PodResources {
  const cores = Math.max(1, driveCores);
  const drives = Math.max(0, numDrives);
  const hugepagesMiB = drives > 0 ? 1400 * cores + DRIVE_HUGEPAGES_OFFSET_PER_DRIVE_MIB * drives : 1600 * cores;
  const offsetMiB = DRIVE_HUGEPAGES_OFFSET_PER_DRIVE_MIB * (drives > 0 ? drives : cores);
  const amounts = {
    cpu: String(2 * cores + 1),
    memory: `${8000 + 3000 * cores + 700 * drives}Mi`,
    'hugepages-2Mi': `${hugepagesMiB}Mi`,
  };
  return { requests: { ...amounts }, limits: { ...amounts }, wekaMemory: `${hugepagesMiB - offsetMiB}MiB` };
}

/**
 * The ssdproxy's: huge pages for the node's shared drives (378 MiB, and 4 MiB per drive per TiB of
 * the largest, rounded up, plus a fixed 2048 MiB that Weka keeps for itself), request equal to
 * limit as Kubernetes requires; half a CPU and 2500 MB asked, up to two CPUs and 7500 MB.
 */
export function proxyResources(sharedDrives: readonly { capacityGiB: number }[]): PodResources {
  const largestTiB = Math.ceil(Math.max(0, ...sharedDrives.map((d) => d.capacityGiB)) / 1024);
  const usedMiB = 378 + 4 * sharedDrives.length * largestTiB;
  const hugepages = `${usedMiB + PROXY_HUGEPAGES_OFFSET_MIB}Mi`;
  return {
    requests: { cpu: '500m', memory: '2500M', 'hugepages-2Mi': hugepages },
    limits: { cpu: '2000m', memory: '7500M', 'hugepages-2Mi': hugepages },
    wekaMemory: `${usedMiB}MiB`,
  };
}
