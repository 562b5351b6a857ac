// The operator process's configuration, read from its environment (the Helm chart sets it).
// Every malformed value is reported by variable name; nothing falls back silently.
import type { AllocationSettings } from '../allocation/settings.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../allocation/settings.js';
import { MAX_VIRTUAL_DRIVES_PER_CORE_CEILING } from '../allocation/constants.js';
import { POD_PRIORITY_CLASS } from '../manifests/pod-resources.js';
import {
  DEFAULT_ALLOWED_IMAGES,
  describeAllowedImages,
  imageAllowed,
  parseAllowedImages,
} from '../manifests/image-policy.js';

export interface OperatorConfig {
  taskQueue: string;
  operatorNamespace: string;
  proxyImage: string;
  /**
   * The images the operator creates pods from (src/manifests/image-policy.ts): repositories, any
   * tag or digest of each, or prefixes ending in "/". The proxy image must pass it.
   */
  allowedImages: string[];
  /** The priority class of the pods the operator makes (the chart creates it); "" for none. */
  podPriorityClass: string;
  settings: AllocationSettings;
  logLevel: LogLevelName;
  /** Port of /metrics, /healthz and /readyz; 0 turns the endpoint off. */
  httpPort: number;
  /** Address the endpoint binds: 0.0.0.0 in a pod, 127.0.0.1 in tests. */
  httpAddress: string;
  runWorker: boolean;
  runWatcher: boolean;
  /** How long a cluster member's node may be NotReady before the member is replaced elsewhere. */
  nodeLossGraceSeconds: number;
  /** Seconds between two sweeps of the drive verification over the nodes; 0 turns it off. */
  driveVerificationSeconds: number;
  /** How many Temporal SDK metric updates Core holds until the operator next drains them. */
  sdkMetricsBufferSize: number;
  /**
   * Workflows each of the two workers keeps in memory between their tasks (Temporal's
   * maxCachedWorkflows). A parked container beyond it is evicted and replayed from its history
   * when it is next signalled, so the operator's memory does not grow with idle containers.
   */
  maxCachedWorkflows: number;
  /**
   * Drive containers the watcher brings up at once (src/operator/bring-up-admission.ts); the
   * rest wait their turn with a Queued condition. Unset, half the workflow cache.
   */
  maxConcurrentBringUps: number;
  /** How long one bring-up counts against that limit at most (a parked container holds none). */
  bringUpHoldSeconds: number;
  /**
   * A bundle of the workflow code made beforehand from the same sources (the sandbox and the test
   * harness make one for many operator starts); unset, the compiled operator loads the one made at
   * build time and an operator run from source bundles when it starts.
   */
  workflowBundlePath: string | undefined;
}

/** The workers' cache, which memory follows (docs/performance.md, "5. Scale"; docs/production.md, "3. Install"). */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 250;

/**
 * Half the cache: the bring-ups in flight stay cached between their workflow tasks with room
 * left for the mutexes and the parked containers that wake (docs/performance.md, "5. Scale").
 */
export function defaultMaxConcurrentBringUps(maxCachedWorkflows: number): number {
  return Math.max(1, Math.floor(maxCachedWorkflows / 2));
}

/** A bring-up that has not settled in this long is waiting for something, not working. */
export const DEFAULT_BRINGUP_HOLD_SECONDS = 60;

export type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export function parseOperatorConfig(env: Env): { ok: true; config: OperatorConfig } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const text = (name: string, fallback: string): string => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? fallback : v;
  };
  /** Unset gives the fallback; set, even to "", is taken as it is ("" says none). */
  const given = (name: string, fallback: string): string => env[name]?.trim() ?? fallback;
  const optional = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const v = optional(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      errors.push(`${name} must be a whole number from ${min} to ${max}, got "${v}"`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const v = optional(name)?.toLowerCase();
    if (v === undefined) return fallback;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    errors.push(`${name} must be true or false, got "${env[name]}"`);
    return fallback;
  };
  const ratioText = optional('WEKA_DRIVE_TYPES_RATIO');
  let driveTypesRatio = DEFAULT_ALLOCATION_SETTINGS.driveTypesRatio;
  if (ratioText !== undefined) {
    const m = /^(\d+):(\d+)$/.exec(ratioText);
    if (!m || Number(m[1]) + Number(m[2]) === 0)
      errors.push(
        `WEKA_DRIVE_TYPES_RATIO must look like TLC:QLC with at least one part above 0, such as 1:10, got "${ratioText}"`,
      );
    else driveTypesRatio = { tlc: Number(m[1]), qlc: Number(m[2]) };
  }
  const logLevel = text('LOG_LEVEL', 'info') as LogLevelName;
  if (!LOG_LEVELS.includes(logLevel))
    errors.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  let allowedImages = [...DEFAULT_ALLOWED_IMAGES];
  const allowedText = optional('WEKA_ALLOWED_IMAGES');
  if (allowedText !== undefined) {
    const parsed = parseAllowedImages(allowedText);
    if (parsed.ok) allowedImages = parsed.allowed;
    else errors.push(`WEKA_ALLOWED_IMAGES ${parsed.error}`);
  }
  const proxyImage = text('WEKA_PROXY_IMAGE', 'quay.io/weka.io/weka-in-container:4.4.10.183');
  if (!imageAllowed(proxyImage, allowedImages))
    errors.push(
      `WEKA_PROXY_IMAGE "${proxyImage}" is not allowed by WEKA_ALLOWED_IMAGES (${describeAllowedImages(allowedImages)}): ` +
        'the operator would refuse to create the ssdproxy pods from it',
    );
  const maxCachedWorkflows = integer('WEKA_MAX_CACHED_WORKFLOWS', DEFAULT_MAX_CACHED_WORKFLOWS, 2, 1_000_000);
  const config: OperatorConfig = {
    taskQueue: text('WEKA_TASK_QUEUE', 'weka-drives'),
    operatorNamespace: text('WEKA_OPERATOR_NAMESPACE', 'weka-operator-system'),
    proxyImage,
    allowedImages,
    podPriorityClass: given('WEKA_POD_PRIORITY_CLASS', POD_PRIORITY_CLASS),
    settings: {
      driveTypesRatio,
      maxVirtualDrivesPerCore: integer(
        'WEKA_MAX_VIRTUAL_DRIVES_PER_CORE',
        DEFAULT_ALLOCATION_SETTINGS.maxVirtualDrivesPerCore,
        1,
        MAX_VIRTUAL_DRIVES_PER_CORE_CEILING,
      ),
      enforceMinDrivesPerTypePerCore: bool(
        'WEKA_ENFORCE_MIN_DRIVES_PER_TYPE_PER_CORE',
        DEFAULT_ALLOCATION_SETTINGS.enforceMinDrivesPerTypePerCore,
      ),
    },
    logLevel,
    httpPort: integer('WEKA_HTTP_PORT', 8080, 0, 65535),
    httpAddress: text('WEKA_HTTP_ADDRESS', '0.0.0.0'),
    runWorker: bool('WEKA_RUN_WORKER', true),
    runWatcher: bool('WEKA_RUN_WATCHER', true),
    nodeLossGraceSeconds: integer('WEKA_NODE_LOSS_GRACE_SECONDS', 300, 0, 7 * 24 * 3600),
    driveVerificationSeconds: integer('WEKA_DRIVE_VERIFICATION_SECONDS', 600, 0, 24 * 3600),
    sdkMetricsBufferSize: integer('WEKA_SDK_METRICS_BUFFER_SIZE', 100_000, 10, 10_000_000),
    maxCachedWorkflows,
    maxConcurrentBringUps: integer(
      'WEKA_MAX_CONCURRENT_BRINGUPS',
      defaultMaxConcurrentBringUps(maxCachedWorkflows),
      1,
      1_000_000,
    ),
    bringUpHoldSeconds: integer('WEKA_BRINGUP_HOLD_SECONDS', DEFAULT_BRINGUP_HOLD_SECONDS, 1, 24 * 3600),
    workflowBundlePath: optional('WEKA_WORKFLOW_BUNDLE'),
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}
