// Names shared by the workflows, the activities and the watcher: the finalizer, the field managers, and the objects the operator creates.

/** Added by the watcher, removed by the last activity of a teardown. */
export const FINALIZER = 'weka.weka.io/teardown';

/** One server-side-apply field manager per writer of Status (docs/api.md, "Who writes what"). */
export const FIELD_MANAGER = {
  allocator: 'weka-drives-allocator',
  workflow: 'weka-drives-workflow',
  watcher: 'weka-drives-watcher',
  nodeSigner: 'weka-drives-signer',
  migration: 'weka-drives-migration',
} as const;

/** Label on everything the operator creates (pods, proxy containers). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'weka-drives-operator';
export const ROLE_LABEL = 'weka.weka.io/role';

/** The node annotation holding the node's signed shared drives. */
export const SHARED_DRIVES_CAPACITY_TLC = 'weka.io/shared-drives-capacity';
export const SHARED_DRIVES_CAPACITY_QLC = 'weka.io/shared-drives-capacity-qlc';

/** Host directory through which drive containers reach the node's ssdproxy, and where they see it. */
export const SSDPROXY_HOST_PATH = '/opt/k8s-weka/ssdproxy/';
export const SSDPROXY_MOUNT_PATH = '/host-binds/ssdproxy';

/** The container name inside every pod the operator creates (exec targets it). */
export const WEKA_POD_CONTAINER = 'weka';

/** The node's ssdproxy WekaContainer and its pod share this name, in the operator's namespace. */
export function proxyName(node: string): string {
  return `weka-drives-proxy-${node}`;
}

/**
 * A container's name inside its Weka cluster. Kubernetes names never contain "_", so
 * namespace and name stay unambiguous.
 */
export function wekaContainerName(namespace: string, name: string): string {
  return `${namespace}_${name}`;
}

export interface ObjectRef {
  namespace: string;
  name: string;
}

export function refText(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** Longest Kubernetes object name (a DNS subdomain). */
const MAX_NAME = 253;

/**
 * The name of the Event the watcher records for one action on one object. Every replica's
 * watcher sees the same change and takes the same action (the workflow id makes the action
 * itself happen once); naming the Event after the object's uid, the reason and which occurrence
 * it is (e.g. the generation signalled) makes the second replica's create an AlreadyExists
 * instead of a second Event. The uid keeps an object created again under the same name from
 * colliding with the Events its predecessor left.
 */
export function watcherEventName(
  obj: { name: string; uid: string },
  reason: string,
  occurrence: string | number,
): string {
  const label = (text: string): string => text.toLowerCase().replace(/[^0-9a-z-]/g, '');
  const uid = label(obj.uid).replaceAll('-', '').slice(0, 12);
  const suffix = [uid, label(reason), label(String(occurrence))].join('.');
  // The object's name is a DNS subdomain already; shortened, it must still end in a letter or digit.
  const base = obj.name.slice(0, MAX_NAME - suffix.length - 1).replace(/[^0-9a-z]+$/, '');
  return `${base}.${suffix}`;
}

/**
 * Set to "true" on a WekaContainer whose teardown cannot reach its pod (the node is down but its
 * Node object remains), by a person who has checked the node: the teardown then finishes without
 * the pod and records what may be left on the devices and in the Weka cluster.
 */
export const TEARDOWN_WITHOUT_POD_ANNOTATION = 'weka.weka.io/teardown-without-pod';

/** On an ssdproxy's WekaContainer: the uid of the rotate-ssdproxy campaign that holds it. */
export const ROTATION_CAMPAIGN_ANNOTATION = 'weka.weka.io/rotation-campaign';

/**
 * On an ssdproxy's WekaContainer: the image it ran before the campaign that holds it changed its
 * image (written with the change, cleared when a campaign claims the proxy), so that a restart
 * retried after the change still reports it.
 */
export const ROTATED_FROM_ANNOTATION = 'weka.weka.io/rotated-from';
