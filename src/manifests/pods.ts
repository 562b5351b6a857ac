// The pods the operator creates, as plain manifests: a drive container's pod and a node's
// ssdproxy pod. Both run on their node and see the node's ssdproxy directory.
//
// A drive container's pod asks the scheduler for what its node's mutex gave it (the GiB of its
// virtual drives, per drive type, or its whole drives), so that the scheduler and a namespace's
// ResourceQuota count it; it is pinned to its node by affinity, as DaemonSets pin theirs, and
// tolerates every taint, since a person named that node. The proxy pod asks for no drives: it owns
// the node's physical drives whoever uses them, and is bound to the node directly. Both ask for
// CPU, memory and huge pages (pod-resources.ts).
import { EXCLUSIVE_DRIVES_RESOURCE } from '../annotations/exclusive-drives.js';
import type { WekaContainer } from '../api/index.js';
import type { ContainerAllocation } from '../allocation/types.js';
import { CLUSTER_UID_LABEL } from './disruption-budget.js';
import { driveContainerResources, type PodResources } from './pod-resources.js';
import {
  wekaContainerName,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  ROLE_LABEL,
  SSDPROXY_HOST_PATH,
  SHARED_DRIVES_CAPACITY_QLC,
  SHARED_DRIVES_CAPACITY_TLC,
  SSDPROXY_MOUNT_PATH,
  WEKA_POD_CONTAINER,
} from '../api/names.js';

export interface PodManifest {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
  };
  spec: {
    nodeName?: string;
    hostPID?: boolean;
    affinity?: { nodeAffinity: NodeAffinity };
    tolerations?: Array<{ operator: 'Exists' }>;
    restartPolicy: 'Always';
    priorityClassName?: string;
    containers: Array<{
      name: string;
      image: string;
      securityContext: { privileged: boolean };
      env: EnvVar[];
      resources?: { requests: Record<string, string>; limits: Record<string, string> };
      volumeMounts: Array<{ name: string; mountPath: string }>;
    }>;
    volumes: Volume[];
    imagePullSecrets?: Array<{ name: string }>;
  };
}

export type EnvVar = { name: string; value: string } | { name: string; valueFrom: { fieldRef: { fieldPath: string } } };

type Volume =
  | { name: string; hostPath: { path: string; type?: 'DirectoryOrCreate' | 'File' } }
  | { name: string; emptyDir: { medium: string } };

/** An owner whose deletion makes Kubernetes' garbage collector delete what it owns. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** A node as the owner of what exists only for it (its proxy): gone with the node. */
export function nodeOwner(node: { name: string; uid: string }): OwnerReference {
  return { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid };
}

interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: Array<{ matchFields: Array<{ key: 'metadata.name'; operator: 'In'; values: string[] }> }>;
  };
}

export interface WekaPodInput {
  name: string;
  namespace: string;
  node: string;
  image: string;
  role: 'drive' | 'ssdproxy';
  /** The WekaContainer the pod belongs to, recorded for people and tools. */
  owner: string;
  /** Its uid, so a pod is never taken for another object's of the same name (OWNER_UID_LABEL). */
  ownerUID?: string | undefined;
  /** The uid of the WekaCluster it is a member of, which the cluster's disruption budget selects by. */
  clusterUID?: string | undefined;
  imagePullSecret?: string | undefined;
  /** A drive container's ports, given by its node's mutex before the pod is made. */
  ports?: { wekaPort: number; agentPort: number } | undefined;
  /** Where a standalone drive container joins its Weka cluster through (spec.joinIps): JOIN_IPS. */
  joinIps?: readonly string[] | undefined;
  /** Whose deletion deletes the pod too (a proxy's node). */
  owners?: OwnerReference[] | undefined;
  /** The extended resources a drive container's pod asks for (podRequests). */
  requests?: Readonly<Record<string, string>> | undefined;
  /** Its CPU, memory and huge pages, and what Weka is told it may use (pod-resources.ts). */
  resources?: PodResources | undefined;
  /** The priority class it runs with (the chart's, POD_PRIORITY_CLASS); none when unset. */
  priorityClass?: string | undefined;
}

/**
 * What a drive container's pod asks for: the GiB of its virtual drives per drive type, or the
 * number of its whole drives, in the units its node publishes them (node-drives.ts). A pod's
 * requests never change once it is made: a container that grows in place holds more than its pod
 * asked for until the pod is made again.
 */
export function podRequests(allocation: ContainerAllocation | undefined): Record<string, string> {
  if (!allocation) return {};
  const requests: Record<string, string> = {};
  const add = (name: string, amount: number) => {
    if (amount > 0) requests[name] = String(Number(requests[name] ?? 0) + amount);
  };
  for (const drive of allocation.virtualDrives)
    add(drive.type === 'QLC' ? SHARED_DRIVES_CAPACITY_QLC : SHARED_DRIVES_CAPACITY_TLC, drive.capacityGiB);
  add(EXCLUSIVE_DRIVES_RESOURCE, allocation.drives?.length ?? 0);
  return requests;
}

/**
 * A drive container's pod for what its node's ledger gave it: its ports (none before an
 * allocation) and the resources they are.
 */
export function driveContainerPod(
  c: WekaContainer,
  given: ContainerAllocation | undefined,
  priorityClass?: string,
): PodManifest {
  const { name = '', namespace = '', uid } = c.metadata;
  const ports =
    given?.wekaPort !== undefined && given.agentPort !== undefined
      ? { wekaPort: given.wekaPort, agentPort: given.agentPort }
      : undefined;
  return wekaPod({
    name,
    namespace,
    node: c.spec.nodeName ?? '',
    image: c.spec.image,
    role: 'drive',
    owner: `${namespace}/${name}`,
    ownerUID: uid,
    clusterUID: c.metadata.ownerReferences?.find((o) => o.kind === 'WekaCluster' && o.controller === true)?.uid,
    imagePullSecret: c.spec.imagePullSecret,
    ports,
    ...(!c.spec.cluster && c.spec.joinIps?.length ? { joinIps: c.spec.joinIps } : {}),
    requests: podRequests(given),
    resources: driveContainerResources({ driveCores: c.spec.driveCores ?? 1, numDrives: c.spec.numDrives ?? 0 }),
    priorityClass,
  });
}

/** Why the apiserver refused a pod, from its message: a used-up ResourceQuota, or anything else. */
export function podRefusalReason(message: string): 'QuotaExceeded' | 'PodRefused' {
  return /exceeded quota/i.test(message) ? 'QuotaExceeded' : 'PodRefused';
}

/** Where a pod runs: bound to the node (the proxy), or placed there by the scheduler (a drive container). */
function placement(input: WekaPodInput): Pick<PodManifest['spec'], 'nodeName' | 'affinity' | 'tolerations'> {
  if (input.role === 'ssdproxy') return { nodeName: input.node };
  const term = { matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: [input.node] }] };
  return {
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } },
    tolerations: [{ operator: 'Exists' }],
  };
}

/** The uid of the WekaContainer a drive container's pod belongs to. */
export const OWNER_UID_LABEL = 'weka.weka.io/container-uid';

/** The name and the namespace of the WekaContainer a pod runs, for label selectors (kubectl get pods -l). */
export const CONTAINER_NAME_LABEL = 'weka.weka.io/container-name';
export const CONTAINER_NAMESPACE_LABEL = 'weka.weka.io/container-namespace';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** An object name longer than a label value may be (63) is left out; the annotation names it in full. */
function ownerLabels(owner: string): Record<string, string> {
  const [namespace, name] = owner.split('/');
  const out: Record<string, string> = {};
  for (const [key, value] of [
    [CONTAINER_NAMESPACE_LABEL, namespace],
    [CONTAINER_NAME_LABEL, name],
  ] as const) {
    if (value && value.length <= 63 && LABEL_VALUE.test(value)) out[key] = value;
  }
  return out;
}

/** Whether the pod may belong to the object of `uid`: it carries that uid, or none at all. */
export function podOfObject(pod: { metadata?: { labels?: Record<string, string> } }, uid: string): boolean {
  const owner = pod.metadata?.labels?.[OWNER_UID_LABEL];
  return owner === undefined || owner === uid;
}

export function wekaPod(input: WekaPodInput): PodManifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [ROLE_LABEL]: input.role,
        ...ownerLabels(input.owner),
        ...(input.ownerUID ? { [OWNER_UID_LABEL]: input.ownerUID } : {}),
        ...(input.clusterUID ? { [CLUSTER_UID_LABEL]: input.clusterUID } : {}),
      },
      annotations: { 'weka.weka.io/container': input.owner },
      ...(input.owners?.length ? { ownerReferences: input.owners } : {}),
    },
    spec: {
      ...placement(input),
      // The ssdproxy is where the operator reads the host's disks and mounts before it signs one
      // (nsenter --target 1 -- lsblk): PID 1 is the host's only in a pod sharing its PID namespace.
      ...(input.role === 'ssdproxy' ? { hostPID: true } : {}),
      restartPolicy: 'Always',
      ...(input.priorityClass ? { priorityClassName: input.priorityClass } : {}),
      containers: [
        {
          name: WEKA_POD_CONTAINER,
          image: input.image,
          // Weka containers drive NVMe devices and huge pages directly.
          securityContext: { privileged: true },
          env: wekaEnv(input),
          ...podResources(input),
          volumeMounts: [
            ...HOST_MOUNTS.map(({ name, mountPath }) => ({ name, mountPath })),
            { name: 'hugepages', mountPath: '/dev/hugepages' },
            { name: 'ssdproxy', mountPath: SSDPROXY_MOUNT_PATH },
          ],
        },
      ],
      volumes: [
        ...HOST_MOUNTS.map(({ name, hostPath }) => ({ name, hostPath })),
        { name: 'hugepages', emptyDir: { medium: 'HugePages-2Mi' } },
        { name: 'ssdproxy', hostPath: { path: SSDPROXY_HOST_PATH, type: 'DirectoryOrCreate' } },
      ],
      ...(input.imagePullSecret ? { imagePullSecrets: [{ name: input.imagePullSecret }] } : {}),
    },
  };
}

/** CPU, memory and huge pages, and the drives: extended resources cannot be overcommitted, a request equals its limit. */
function podResources(input: WekaPodInput): { resources?: Omit<PodResources, 'wekaMemory'> } {
  const drives = input.requests ?? {};
  const resources = {
    requests: { ...input.resources?.requests, ...drives },
    limits: { ...input.resources?.limits, ...drives },
  };
  return Object.keys(resources.requests).length > 0 ? { resources } : {};
}

/**
 * The host's directories a Weka container uses, where the reference's pods mount them
 * (internal/controllers/resources/pod.go 232-276, 446-501): its devices, sysfs, the host's /run,
 * and the host's os-release for the drivers it loads.
 */
const HOST_MOUNTS = [
  { name: 'dev', mountPath: '/dev', hostPath: { path: '/dev' } },
  { name: 'sys', mountPath: '/sys', hostPath: { path: '/sys' } },
  { name: 'run', mountPath: '/host/run', hostPath: { path: '/run' } },
  {
    name: 'osrelease',
    mountPath: '/hostside/etc/os-release',
    hostPath: { path: '/etc/os-release', type: 'File' as const },
  },
];

/** The Weka container's name (NAME): a drive container's as in its cluster; the proxy's is its mode, as the reference names it. */
function wekaName(input: WekaPodInput): string {
  if (input.role === 'ssdproxy') return 'ssdproxy';
  const [namespace = '', name = ''] = input.owner.split('/');
  return wekaContainerName(namespace, name);
}

/**
 * The environment the weka-in-container image is run with, as the reference sets it (pod.go
 * 279-412): the Weka container's name, mode, ports and memory; networking over UDP, the
 * reference's default when no network device is named; and what the downward API tells of the
 * pod (its node, its address for management, its identity).
 */
function wekaEnv(input: WekaPodInput): EnvVar[] {
  const field = (name: string, fieldPath: string): EnvVar => ({ name, valueFrom: { fieldRef: { fieldPath } } });
  return [
    { name: 'NAME', value: wekaName(input) },
    { name: 'MODE', value: input.role },
    ...(input.ownerUID ? [{ name: 'WEKA_CONTAINER_ID', value: input.ownerUID }] : []),
    ...(input.ports ? portEnv(input.ports) : []),
    ...(input.joinIps?.length ? [{ name: 'JOIN_IPS', value: input.joinIps.join(',') }] : []),
    ...(input.resources ? [{ name: 'MEMORY', value: input.resources.wekaMemory }] : []),
    { name: 'NETWORK_DEVICE', value: 'udp' },
    { name: 'UDP_MODE', value: 'false' },
    field('NODE_NAME', 'spec.nodeName'),
    field('MANAGEMENT_IP', 'status.podIP'),
    field('POD_ID', 'metadata.uid'),
    field('POD_NAME', 'metadata.name'),
    field('POD_NAMESPACE', 'metadata.namespace'),
  ];
}

/**
 * The image sets its Weka container up on PORT (--base-port) and its agent on AGENT_PORT; its
 * `weka` CLI reaches that container through WEKA_PORT.
 */
export function portEnv({ wekaPort, agentPort }: { wekaPort: number; agentPort: number }): EnvVar[] {
  return [
    { name: 'PORT', value: String(wekaPort) },
    { name: 'WEKA_PORT', value: String(wekaPort) },
    { name: 'AGENT_PORT', value: String(agentPort) },
  ];
}

/** The variables that must match for a running pod to be kept (decidePod): its ports. */
export function identityEnv(env: readonly EnvVar[]): Array<{ name: string; value: string }> {
  const ports = new Set(['PORT', 'WEKA_PORT', 'AGENT_PORT']);
  return env.flatMap((e) => ('value' in e && ports.has(e.name) ? [{ name: e.name, value: e.value }] : []));
}

/** What of a pod the operator looks at to decide what to do about it. */
export interface PodFacts {
  uid?: string | undefined;
  phase?: string | undefined;
  /** The status' reason and message (Evicted, Shutdown, NodeLost, ...). */
  reason?: string | undefined;
  message?: string | undefined;
  /** Set once the pod is being deleted. */
  deletionTimestamp?: Date | string | undefined;
  /** The environment of its Weka container. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Why the scheduler cannot place it (its PodScheduled condition, reason Unschedulable). */
  unschedulable?: string | undefined;
  /** Why its container waits to start (ErrImagePull: ..., CrashLoopBackOff: ...). */
  waiting?: string | undefined;
}

/**
 * What to do about the pod that should run under a name:
 * - `create`: there is none;
 * - `keep`: it runs or is on its way to running (Pending, Running, Unknown: a node that stops
 *   reporting may come back), with the environment it should have;
 * - `wait-for-deletion`: it is being deleted; once it is gone it is created again;
 * - `replace`: it ended (Failed: evicted, its node shut down or rebooted; or Succeeded) and will
 *   never run again, since the operator's pods are meant to run for ever, or it runs on other
 *   ports than its container's: delete it (that pod, by its uid) and create it again.
 */
export type PodAction = 'create' | 'keep' | 'wait-for-deletion' | 'replace';

export function decidePod(
  pod: PodFacts | null | undefined,
  wantedEnv: readonly { name: string; value: string }[] = [],
): PodAction {
  if (!pod) return 'create';
  if (pod.deletionTimestamp !== undefined) return 'wait-for-deletion';
  return podEnded(pod) || !hasEnv(pod, wantedEnv) ? 'replace' : 'keep';
}

/**
 * Whether the pod's Weka container has every wanted variable (a drive container's ports): an
 * environment never changes, so a pod made on other ports (or before they were given) is made again.
 */
export function hasEnv(pod: PodFacts, wantedEnv: readonly { name: string; value: string }[]): boolean {
  return wantedEnv.every(({ name, value }) => pod.env?.[name] === value);
}

/** A pod in a terminal phase: its containers will not be started again. */
export function podEnded(pod: PodFacts): boolean {
  return pod.phase === 'Failed' || pod.phase === 'Succeeded';
}

/** "phase Failed (Evicted: The node was low on resource: memory.)", for logs and errors. */
export function describePod(pod: PodFacts | null | undefined): string {
  if (!pod) return 'missing';
  const why = [pod.reason, pod.message].filter((s) => s !== undefined && s !== '').join(': ');
  const waiting = pod.waiting ? `, its container waiting (${pod.waiting})` : '';
  const phase = `phase ${pod.phase ?? 'unknown'}${why ? ` (${why})` : ''}${waiting}`;
  return pod.deletionTimestamp !== undefined ? `being deleted, ${phase}` : phase;
}
