// Reads a WekaManualOperation's spec into what the sign-drives workflow does, or the reason it
// will not: signing erases drives, so anything unclear is refused before a device is touched.
// Types only from the schema: workflows import this file, and the schema module pulls in TypeBox.
import type { SIGN_DRIVES_ACTION as SignDrivesAction, SignDrivesPayload } from '../api/schemas/wekamanualoperation.js';
import { isDevicePath } from '../weka/validate.js';

const SIGN_DRIVES_ACTION: typeof SignDrivesAction = 'sign-drives';

/** The ways of choosing devices the Weka operator knows; only device-paths can run here so far. */
export const SIGNING_TYPES = ['device-paths', 'all-not-root', 'aws-all', 'gcp-all'] as const;
export type SigningType = (typeof SIGNING_TYPES)[number];

export const ONLY_SHARED_MESSAGE =
  'only shared: true (proxy signing) is supported; exclusive signing (shared: false or unset) is not';

export interface SignDrivesRequest {
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly type: SigningType;
  /** Unique, in the order given; empty unless type is device-paths. */
  readonly devicePaths: readonly string[];
}

export type SignDrivesRequestResult =
  | { readonly ok: true; readonly request: SignDrivesRequest }
  | { readonly ok: false; readonly reason: string; readonly message: string };

export interface OperationSpecInput {
  readonly action: string;
  readonly payload?: { readonly signDrivesPayload?: SignDrivesPayload | undefined } | undefined;
}

const refuse = (reason: string, message: string): SignDrivesRequestResult => ({ ok: false, reason, message });

export function signDrivesRequest(spec: OperationSpecInput): SignDrivesRequestResult {
  if (spec.action !== SIGN_DRIVES_ACTION) {
    return refuse(
      'UnsupportedAction',
      `action ${JSON.stringify(spec.action)} is not run by this operator; it runs only ${SIGN_DRIVES_ACTION}`,
    );
  }
  const payload = spec.payload?.signDrivesPayload;
  if (!payload) return refuse('MissingPayload', `${SIGN_DRIVES_ACTION} needs payload.signDrivesPayload`);
  const nodeSelector = payload.nodeSelector ?? {};
  // The CRD rejects this too; checked again because an empty selector would sign every node.
  if (Object.keys(nodeSelector).length === 0) {
    return refuse(
      'MissingNodeSelector',
      `${SIGN_DRIVES_ACTION} needs payload.signDrivesPayload.nodeSelector with at least one label: signing erases drives`,
    );
  }
  if (payload.shared !== true) return refuse('ExclusiveSigningUnsupported', ONLY_SHARED_MESSAGE);
  const type = SIGNING_TYPES.find((t) => t === payload.type);
  if (!type)
    return refuse(
      'UnknownSigningType',
      `type ${JSON.stringify(payload.type)} is not one of ${SIGNING_TYPES.join(', ')}`,
    );
  if (type !== 'device-paths')
    return { ok: true, request: { nodeSelector: { ...nodeSelector }, type, devicePaths: [] } };
  const devicePaths = [...new Set(payload.devicePaths ?? [])];
  if (devicePaths.length === 0)
    return refuse('MissingDevicePaths', 'type device-paths needs at least one entry in devicePaths');
  const invalid = devicePaths.find((path) => !isDevicePath(path));
  if (invalid !== undefined)
    return refuse('InvalidDevicePath', `device path ${JSON.stringify(invalid)} is not a path under /dev`);
  return { ok: true, request: { nodeSelector: { ...nodeSelector }, type, devicePaths } };
}

/** Why a node cannot be signed with this request, or undefined if it can. */
export function unsupportedTypeMessage(type: SigningType): string | undefined {
  if (type === 'device-paths') return undefined;
  return `type ${type} is not supported yet: this operator cannot list a node's devices, so it signs only the devicePaths of type device-paths`;
}

/** "a=b,c=d": the label selector the Kubernetes API takes. */
export function labelSelectorText(selector: Readonly<Record<string, string>>): string {
  return Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** What a sign-drive request names: the operation that asks, with its uid. */
export interface SigningOperationRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * Why signing `devicePath` on a node with `nodeLabels` is not what the operation, as read now,
 * asks for; undefined when it is. Signing destroys what a device held, so a request to sign is
 * carried out only for a live operation of that uid whose spec selects the node and lists the
 * device: a request alone (a signal anybody with access to the Temporal namespace can send) signs
 * nothing.
 */
export function signingRefusal(
  asked: SigningOperationRef,
  operation: { uid: string; deleting: boolean; spec: OperationSpecInput } | null,
  nodeLabels: Readonly<Record<string, string>>,
  devicePath: string,
): string | undefined {
  const what = `WekaManualOperation ${asked.namespace}/${asked.name}`;
  if (!operation || operation.uid !== asked.uid) return `${what} (uid ${asked.uid}) does not exist`;
  if (operation.deleting) return `${what} is being deleted`;
  const checked = signDrivesRequest(operation.spec);
  if (!checked.ok) return `${what} does not ask to sign drives: ${checked.message}`;
  const { nodeSelector, devicePaths } = checked.request;
  if (!Object.entries(nodeSelector).every(([key, value]) => nodeLabels[key] === value))
    return `${what} does not select this node (selector ${labelSelectorText(nodeSelector)})`;
  if (!devicePaths.includes(devicePath)) return `${what} does not list ${devicePath}`;
  return undefined;
}
