// A WekaCluster's device sets (Rook's StorageClassDeviceSets, design document 003), as plain data:
// which nodes each set has devices on, the block-mode claims of each device, and the device pod
// that holds them on their node.
//
// Every claim of a set on a node is attached to one device pod on that node. A pod's volumes never
// change, and the node's ssdproxy serves every tenant on the node, so the claims are not attached
// to the proxy pod (a new set would mean stopping the proxy under every tenant). The device pod
// keeps its claims attached; the operator signs each device for the proxy inside the device pod, by
// the path the pod sees it at, and the proxy, which sees the node's devices, then serves it like a
// local drive. Claims and pods live in the operator's namespace (a pod can only use claims of its
// own namespace); the pods are owned by their Node, the claims by nobody: the cluster's teardown
// deletes them once no virtual drive is left on their devices.
import { MIN_CHUNK_GIB } from '../allocation/constants.js';
import type {
  NodeSelectorRequirement,
  StorageClassDeviceSet,
  VolumeClaimTemplate,
} from '../api/schemas/device-sets.js';
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL, WEKA_POD_CONTAINER } from '../api/names.js';
import { nodeOwner, type OwnerReference } from './pods.js';
import { quantityValue } from '../api/quantity.js';

export const DEVICE_SET_ROLE = 'device-set';
/** Labels on a set's claims and device pods: whose and which set; and the annotation naming their node. */
export const DEVICE_SET_LABEL = 'weka.weka.io/device-set';
export const CLUSTER_UID_LABEL = 'weka.weka.io/cluster-uid';
export const DEVICE_NODE_ANNOTATION = 'weka.weka.io/node';
/**
 * The operator's finalizer on every claim of a device set: a claim deleted by anyone else stays
 * (and its volume is not reclaimed, which may wipe it) until the cluster's teardown has found
 * nothing on its device, nor allocated on it; only that release takes the finalizer off.
 */
export const DEVICE_CLAIM_FINALIZER = 'weka.weka.io/device-in-use';
/** Where a device pod sees its claims. */
export const DEVICE_SET_DIR = '/dev/weka-set';

export interface DeviceSetCluster {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly image: string;
  readonly imagePullSecret?: string | undefined;
}

export interface DeviceClaim {
  /** The PVC's name, in the operator's namespace. */
  readonly name: string;
  readonly template: string;
  readonly index: number;
  /** The device pod that holds the claim. */
  readonly pod: string;
  /** Where that pod sees the claim's volume. */
  readonly devicePath: string;
  readonly storage: string;
}

/** A template's name in claim names and device paths ("data" when it has none, as in Rook). */
export function templateName(template: VolumeClaimTemplate): string {
  return template.metadata?.name ?? 'data';
}

/** The drive type a set declares (TLC unless its config says QLC). */
export function deviceSetDriveType(set: StorageClassDeviceSet): 'TLC' | 'QLC' {
  return set.config?.['driveType'] === 'QLC' ? 'QLC' : 'TLC';
}

/** FNV-1a, 32 bits, in hex: a short, stable tag for names (no Node built-ins: workflows may use it). */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * The base of the names of a set's objects on a node, `weka-devset-<cluster>-<set>-<hash of the
 * cluster's uid and the node>`: short enough for a label value, unique per cluster and node.
 */
function deviceSetBase(cluster: Pick<DeviceSetCluster, 'name' | 'uid'>, set: string, node: string): string {
  const base = cluster.name.slice(0, 24).replace(/[^a-z0-9]+$/, '');
  return `weka-devset-${base}-${set}-${shortHash(`${cluster.uid}\0${node}`)}`;
}

/** The device pod of one device of a set on a node. */
export function devicePodName(
  cluster: Pick<DeviceSetCluster, 'name' | 'uid'>,
  set: string,
  node: string,
  index: number,
): string {
  return `${deviceSetBase(cluster, set, node)}-${index}`;
}

/**
 * The set's claims on a node: `count` devices, one claim per template each. Each device has its
 * own pod, so that a set that grows adds pods and never replaces one: a device pod holds its
 * volumes attached to the node for as long as the proxy may serve them.
 */
export function deviceSetClaims(
  cluster: Pick<DeviceSetCluster, 'name' | 'uid'>,
  set: StorageClassDeviceSet,
  node: string,
): DeviceClaim[] {
  const claims: DeviceClaim[] = [];
  for (let index = 0; index < set.count; index++)
    for (const template of set.volumeClaimTemplates) {
      const name = templateName(template);
      claims.push({
        name: `${devicePodName(cluster, set.name, node, index)}-${name}`,
        template: name,
        index,
        pod: devicePodName(cluster, set.name, node, index),
        devicePath: `${DEVICE_SET_DIR}/${name}`,
        storage: template.spec.resources.requests.storage,
      });
    }
  return claims;
}

/** Why a set cannot be claimed as written, or null: each claim must hold at least the smallest virtual drive. */
export function deviceSetProblem(set: StorageClassDeviceSet): { reason: string; message: string } | null {
  for (const template of set.volumeClaimTemplates) {
    const storage = template.spec.resources.requests.storage;
    const gib = quantityValue(storage) / 2 ** 30;
    if (!(gib >= MIN_CHUNK_GIB))
      return {
        reason: 'ClaimTooSmall',
        message: `device set ${set.name}: template ${templateName(template)} claims ${storage}, less than the smallest virtual drive (${MIN_CHUNK_GIB} GiB); nothing would be carved from it`,
      };
  }
  return null;
}

/** Whether a node's labels meet one requirement, as the scheduler reads a node affinity. */
export function meetsRequirement(req: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || !/^-?\d+$/.test(value) || values.length !== 1) return false;
      const [have, bound] = [Number(value), Number(values[0])];
      return req.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

/** The nodes, of those the cluster selects, that the set's placement takes (all of them without one), sorted. */
export function deviceSetNodes(
  set: StorageClassDeviceSet,
  nodes: readonly { name: string; labels: Readonly<Record<string, string>> }[],
): string[] {
  const terms = set.placement?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
  return nodes
    .filter((n) => !terms || terms.some((t) => t.matchExpressions.every((req) => meetsRequirement(req, n.labels))))
    .map((n) => n.name)
    .sort();
}

function labelsOf(cluster: DeviceSetCluster, set: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [ROLE_LABEL]: DEVICE_SET_ROLE,
    [CLUSTER_UID_LABEL]: cluster.uid,
    [DEVICE_SET_LABEL]: set,
  };
}

function annotationsOf(cluster: DeviceSetCluster, node: string): Record<string, string> {
  return { 'weka.weka.io/cluster': `${cluster.namespace}/${cluster.name}`, [DEVICE_NODE_ANNOTATION]: node };
}

/** The metadata of what a device set makes: named, labelled, annotated, owned by its Node. */
interface DeviceSetObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
}

export interface ClaimManifest {
  apiVersion: 'v1';
  kind: 'PersistentVolumeClaim';
  metadata: Omit<DeviceSetObjectMeta, 'ownerReferences'> & { finalizers: string[] };
  spec: {
    storageClassName?: string;
    volumeMode: 'Block';
    accessModes: ['ReadWriteOnce'];
    resources: { requests: { storage: string } };
  };
}

/** A template's labels or annotations without the operator's own keys, which a user must not forge. */
function usersOwn(map: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).filter(([key]) => !key.startsWith(OPERATOR_KEY_PREFIX)));
}
const OPERATOR_KEY_PREFIX = 'weka.weka.io/';

/**
 * A claim as the apiserver gets it: the template's labels and annotations, then the operator's.
 * No owner: a claim goes only when the cluster's teardown has found nothing on its device, never
 * with a Node object that is deleted (or registered again) while its devices hold virtual drives.
 */
export function claimManifest(
  cluster: DeviceSetCluster,
  set: StorageClassDeviceSet,
  node: { name: string; uid: string },
  claim: DeviceClaim,
  namespace: string,
): ClaimManifest {
  const template = set.volumeClaimTemplates.find((t) => templateName(t) === claim.template)!;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claim.name,
      namespace,
      labels: { ...usersOwn(template.metadata?.labels), ...labelsOf(cluster, set.name) },
      annotations: { ...usersOwn(template.metadata?.annotations), ...annotationsOf(cluster, node.name) },
      finalizers: [DEVICE_CLAIM_FINALIZER],
    },
    spec: {
      ...(template.spec.storageClassName !== undefined ? { storageClassName: template.spec.storageClassName } : {}),
      volumeMode: 'Block',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: claim.storage } },
    },
  };
}

export interface DevicePodManifest {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: DeviceSetObjectMeta;
  spec: {
    affinity: { nodeAffinity: unknown };
    tolerations: Array<{ operator: 'Exists' }>;
    restartPolicy: 'Always';
    containers: Array<{
      name: string;
      image: string;
      securityContext: { privileged: boolean };
      resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
      volumeDevices: Array<{ name: string; devicePath: string }>;
    }>;
    volumes: Array<{ name: string; persistentVolumeClaim: { claimName: string } }>;
    imagePullSecrets?: Array<{ name: string }>;
  };
}

/**
 * The pod that holds the claims of one device of a set on a node. It is placed by the scheduler
 * (pinned to the node by affinity, tolerating every taint), never bound by name: a
 * WaitForFirstConsumer claim binds only once the scheduler has placed its first consumer.
 */
export function devicePod(
  cluster: DeviceSetCluster,
  set: StorageClassDeviceSet,
  node: { name: string; uid: string },
  index: number,
  namespace: string,
): DevicePodManifest {
  const claims = deviceSetClaims(cluster, set, node.name).filter((c) => c.index === index);
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.name] }] };
  const resources = set.resources && (set.resources.requests || set.resources.limits) ? set.resources : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: devicePodName(cluster, set.name, node.name, index),
      namespace,
      labels: labelsOf(cluster, set.name),
      annotations: annotationsOf(cluster, node.name),
      ownerReferences: [nodeOwner(node)],
    },
    spec: {
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } },
      tolerations: [{ operator: 'Exists' }],
      restartPolicy: 'Always',
      containers: [
        {
          name: WEKA_POD_CONTAINER,
          image: cluster.image,
          // Signing writes a Weka header on the whole device.
          securityContext: { privileged: true },
          ...(resources ? { resources: { ...resources } } : {}),
          // A volume's name is a DNS label; the template's name is one, and unique in the pod.
          volumeDevices: claims.map((c) => ({ name: c.template, devicePath: c.devicePath })),
        },
      ],
      volumes: claims.map((c) => ({ name: c.template, persistentVolumeClaim: { claimName: c.name } })),
      ...(cluster.imagePullSecret ? { imagePullSecrets: [{ name: cluster.imagePullSecret }] } : {}),
    },
  };
}

/** What of a claim the operator looks at. */
export interface ClaimFacts {
  readonly name: string;
  /** Pending, Bound, Lost; undefined when the claim does not exist. */
  readonly phase?: string | undefined;
  readonly storageClassName?: string | undefined;
}

/** One device of a set on a node as read: its claims, and its pod (null when there is none). */
export interface DeviceFacts {
  readonly index: number;
  readonly claims: readonly ClaimFacts[];
  readonly pod: { phase?: string | undefined; unschedulable?: string | undefined } | null;
}

export interface DeviceSetReadiness {
  /** The devices whose claims are bound and whose pod runs: ready to sign. */
  readonly ready: number[];
  /** What holds the others up, for the cluster's condition; null when every device is ready. */
  readonly problem: { reason: string; message: string } | null;
}

/**
 * Which devices of a set on a node are ready to sign, and what holds the others up: a
 * StorageClass that does not exist, a claim that does not bind (or lost its volume), a device pod
 * that does not run.
 */
export function deviceSetReadiness(input: {
  set: string;
  node: string;
  devices: readonly DeviceFacts[];
  missingClasses: readonly string[];
}): DeviceSetReadiness {
  const where = `device set ${input.set} on node ${input.node}`;
  const ready = input.devices
    .filter((d) => d.claims.every((c) => c.phase === 'Bound') && d.pod?.phase === 'Running')
    .map((d) => d.index);
  const claims = input.devices.flatMap((d) => d.claims);
  const some = (names: string[]) => names.slice(0, 4).join(', ') + (names.length > 4 ? ', ...' : '');
  const problem = (() => {
    if (input.missingClasses.length > 0)
      return {
        reason: 'StorageClassNotFound',
        message: `${where}: StorageClass ${input.missingClasses.join(', ')} does not exist; its claims cannot bind`,
      };
    const lost = claims.filter((c) => c.phase === 'Lost').map((c) => c.name);
    if (lost.length > 0) return { reason: 'ClaimLost', message: `${where}: claims ${some(lost)} lost their volume` };
    const unbound = claims.filter((c) => c.phase !== 'Bound').map((c) => c.name);
    if (unbound.length > 0) {
      const stuck = input.devices.find((d) => d.pod?.unschedulable)?.pod?.unschedulable;
      return {
        reason: 'ClaimPending',
        message:
          `${where}: ${unbound.length} of ${claims.length} claims are not bound (${some(unbound)})` +
          (stuck ? `; a device pod cannot be placed: ${stuck}` : ''),
      };
    }
    const stopped = input.devices.filter((d) => d.pod?.phase !== 'Running');
    if (stopped.length > 0)
      return {
        reason: 'DevicePodNotRunning',
        message: `${where}: the pods of devices ${stopped.map((d) => d.index).join(', ')} do not run`,
      };
    return null;
  })();
  return { ready, problem };
}
