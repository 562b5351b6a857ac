// Reads a WekaManualOperation's spec into what the sign-drives workflow does, or the reason it
// will not: signing erases drives, so anything unclear is refused before a device is touched.
// Types only from the schema: workflows import this file, and the schema module pulls in TypeBox.
import type {
  SIGN_DRIVES_ACTION as SignDrivesAction,
  SignDrivesPayload,
  SignOptions,
} from '../api/schemas/wekamanualoperation.js';
import { isDevicePath } from '../weka/validate.js';

const SIGN_DRIVES_ACTION: typeof SignDrivesAction = 'sign-drives';

/** The ways of choosing devices, as the Weka operator names them (device-selection.ts). */
export const SIGNING_TYPES = ['device-paths', 'all-not-root', 'aws-all', 'gcp-all'] as const;
export type SigningType = (typeof SIGNING_TYPES)[number];

export interface SignDrivesRequest {
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly type: SigningType;
  /** Unique, in the order given; empty unless type is device-paths. */
  readonly devicePaths: readonly string[];
  /** For the ssdproxy (shared: true), or whole drives for one cluster each. */
  readonly mode: 'proxy' | 'exclusive';
  /** What signing may destroy; every option false unless set. */
  readonly options: SignOptions;
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
      `action ${JSON.stringify(spec.action)} is not run by this operator; it runs only ${SIGN_DRIVES_ACTION} and clean-stale-virtual-drives`,
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
  const type = SIGNING_TYPES.find((t) => t === payload.type);
  if (!type)
    return refuse(
      'UnknownSigningType',
      `type ${JSON.stringify(payload.type)} is not one of ${SIGNING_TYPES.join(', ')}`,
    );
  const common = {
    nodeSelector: { ...nodeSelector },
    mode: payload.shared === true ? ('proxy' as const) : ('exclusive' as const),
    options: { ...payload.options },
  };
  if (type !== 'device-paths') return { ok: true, request: { ...common, type, devicePaths: [] } };
  const devicePaths = [...new Set(payload.devicePaths ?? [])];
  if (devicePaths.length === 0)
    return refuse('MissingDevicePaths', 'type device-paths needs at least one entry in devicePaths');
  const invalid = devicePaths.find((path) => !isDevicePath(path));
  if (invalid !== undefined)
    return refuse('InvalidDevicePath', `device path ${JSON.stringify(invalid)} is not a path under /dev`);
  return { ok: true, request: { ...common, type, devicePaths } };
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
 * What the operation, as read now, asks of a node: the request when it is a live operation of
 * that uid whose spec selects the node, or why not. Signing destroys what a device held, so a
 * request to sign (a signal anybody with access to the Temporal namespace can send) signs nothing
 * by itself: the device must also be one the request chooses (chooseDevices) on the node as it
 * is now.
 */
export function signingRequestFor(
  asked: SigningOperationRef,
  operation: { uid: string; deleting: boolean; spec: OperationSpecInput } | null,
  nodeLabels: Readonly<Record<string, string>>,
): { ok: true; request: SignDrivesRequest } | { ok: false; refusal: string } {
  const what = `WekaManualOperation ${asked.namespace}/${asked.name}`;
  if (!operation || operation.uid !== asked.uid)
    return { ok: false, refusal: `${what} (uid ${asked.uid}) does not exist` };
  if (operation.deleting) return { ok: false, refusal: `${what} is being deleted` };
  const checked = signDrivesRequest(operation.spec);
  if (!checked.ok) return { ok: false, refusal: `${what} does not ask to sign drives: ${checked.message}` };
  const { nodeSelector } = checked.request;
  if (!Object.entries(nodeSelector).every(([key, value]) => nodeLabels[key] === value))
    return { ok: false, refusal: `${what} does not select this node (selector ${labelSelectorText(nodeSelector)})` };
  return { ok: true, request: checked.request };
}
