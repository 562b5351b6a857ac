// A Weka cluster's health, as `weka status --json` prints it (the reference reads the same fields:
// weka/weka-operator internal/services/weka.go, WekaStatusResponse), and the verdict of whether a
// disruption (restarting a node's ssdproxy) may go ahead: the reference's gate
// (internal/controllers/operations/proxy_disruption_gate.go, internal/services/cluster_health.go)
// lets one through only when the cluster is OK or REDISTRIBUTING, fully protected, moving no data,
// and every drive is ACTIVE.
import { commandText, type WekaCall } from './call.js';
import { WEKA_TOOL } from './cluster-drive.js';
import {
  booleanField,
  expectArray,
  expectObject,
  fail,
  intField,
  parseJsonOutput,
  stringField,
  type JsonObject,
  type OutputContext,
} from './json-output.js';

export interface ActiveOfTotal {
  readonly active: number;
  readonly total: number;
}

/** One line of the rebuild's protection state: how much data has lost how many of its copies. */
export interface ProtectionState {
  readonly numFailures: number;
  readonly percent: number;
}

export interface ClusterStatus {
  /** OK, REDISTRIBUTING, PARTIALLY_PROTECTED, REBUILDING, ... (Weka's set is open). */
  readonly status: string;
  readonly drives: ActiveOfTotal;
  readonly driveContainers: ActiveOfTotal;
  readonly rebuild: {
    readonly movingData: boolean;
    readonly progressPercent: number;
    readonly protectionState: readonly ProtectionState[];
  };
}

/** The statuses in which a disruption may go ahead. */
export const HEALTHY_CLUSTER_STATUSES: readonly string[] = ['OK', 'REDISTRIBUTING'];

export function clusterStatusCall(): WekaCall<ClusterStatus> {
  const argv = [WEKA_TOOL, 'status', '--json'];
  return { argv, parse: (stdout) => parseClusterStatus(stdout, commandText(argv)) };
}

export function parseClusterStatus(stdout: string, command = `${WEKA_TOOL} status --json`): ClusterStatus {
  const ctx: OutputContext = { command, stdout };
  const top = expectObject(ctx, parseJsonOutput(ctx), 'output');
  const rebuild = expectObject(ctx, top['rebuild'], 'output.rebuild');
  const containers = expectObject(ctx, top['containers'], 'output.containers');
  return {
    status: stringField(ctx, top, 'status', 'output'),
    drives: activeOfTotal(ctx, top['drives'], 'output.drives'),
    driveContainers: activeOfTotal(ctx, containers['drives'], 'output.containers.drives'),
    rebuild: {
      movingData: booleanField(ctx, rebuild, 'movingData', 'output.rebuild'),
      progressPercent: numberField(ctx, rebuild, 'progressPercent', 'output.rebuild'),
      protectionState: protectionStates(ctx, rebuild),
    },
  };
}

/**
 * Why a disruption must wait, one reason per failed check; empty when it may go ahead. An allow
 * list throughout: a status or drive state this code does not know is not healthy.
 */
export function unhealthyReasons(s: ClusterStatus): string[] {
  const reasons: string[] = [];
  if (!HEALTHY_CLUSTER_STATUSES.includes(s.status))
    reasons.push(`status is ${s.status} (a disruption waits for ${HEALTHY_CLUSTER_STATUSES.join(' or ')})`);
  const unprotected = s.rebuild.protectionState.filter((p) => p.numFailures > 0 && p.percent > 0);
  if (unprotected.length > 0) {
    const worst = unprotected.reduce((a, b) => (b.percent > a.percent ? b : a));
    reasons.push(`not fully protected (${worst.percent}% of the data has lost ${worst.numFailures} copies)`);
  }
  if (s.rebuild.movingData) reasons.push(`a rebuild is moving data (${s.rebuild.progressPercent}% done)`);
  if (s.drives.active !== s.drives.total) reasons.push(`${s.drives.active} of ${s.drives.total} drives are active`);
  if (s.driveContainers.active !== s.driveContainers.total)
    reasons.push(`${s.driveContainers.active} of ${s.driveContainers.total} drive containers are active`);
  return reasons;
}

function activeOfTotal(ctx: OutputContext, value: unknown, where: string): ActiveOfTotal {
  const obj = expectObject(ctx, value, where);
  return { active: intField(ctx, obj, 'active', where, 0), total: intField(ctx, obj, 'total', where, 0) };
}

/**
 * The reference declares the protection state without a JSON name, and Go matches member names
 * without regard to case, so the member is found the same way here; absent means nothing lost.
 */
function protectionStates(ctx: OutputContext, rebuild: JsonObject): ProtectionState[] {
  const key = Object.keys(rebuild).find((k) => k.toLowerCase() === 'protectionstate');
  if (key === undefined || rebuild[key] === null) return [];
  return expectArray(ctx, rebuild[key], `output.rebuild.${key}`).map((entry, i) => {
    const where = `output.rebuild.${key}[${i}]`;
    const obj = expectObject(ctx, entry, where);
    return {
      numFailures: intField(ctx, obj, 'numFailures', where, 0),
      percent: numberField(ctx, obj, 'percent', where),
    };
  });
}

function numberField(ctx: OutputContext, obj: JsonObject, key: string, where: string): number {
  const value = obj[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(ctx, `${where}.${key} is not a number`);
  return value;
}
