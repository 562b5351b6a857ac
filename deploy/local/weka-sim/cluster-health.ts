// A test knob: make a simulated cluster look unhealthy to `weka status --json` (weka-status.ts),
// so a test can watch the operator wait for it, and make it healthy again. The override lives on
// the cluster's record in the shared cluster state, so every node under the root sees it; like
// every other write of that state it is made under the node lock and then the cluster lock.
import { mkdirSync } from 'node:fs';
import { integerArg, optional, parseArgs, positionals, type ParsedArgs } from './args.js';
import { loadClusters, requireCluster, saveClusters, type ClusterHealthOverride } from './cluster-state.js';
import { withLock } from './lock.js';
import type { SimPaths } from './node-records.js';
import { uuidOption } from './node-view.js';
import { UsageError, type ToolOutput } from './outcome.js';

export const CLUSTER_HEALTH_USAGE = `usage:
  weka-sim --state DIR cluster-health GUID [--status S] [--moving-data] [--progress P] [--failures N --percent P]
  weka-sim --state DIR cluster-health GUID --clear`;

/**
 * The `cluster-health` subcommand. Setting replaces the cluster's whole override (what is not
 * given reads as healthy) and is refused for a cluster there is not; clearing removes it, and is
 * done already when the cluster has none or is gone. Call under the node lock.
 */
export async function runClusterHealthCommand(args: readonly string[], paths: SimPaths): Promise<ToolOutput> {
  const parsed = parseArgs(args, {
    values: ['--status', '--progress', '--failures', '--percent'],
    flags: ['--moving-data', '--clear'],
  });
  const [guidText] = positionals(parsed, ['GUID']);
  const guid = uuidOption(guidText!, 'GUID');
  const clear = parsed.flags.has('--clear');
  if (clear && (parsed.values.size > 0 || parsed.flags.size > 1))
    throw new UsageError(`--clear takes no other options\n${CLUSTER_HEALTH_USAGE}`);
  const health = clear ? undefined : overrideOf(parsed);
  mkdirSync(paths.clustersDir, { recursive: true });
  return withLock(paths.clustersLock, () => {
    const clusters = loadClusters(paths);
    if (health) {
      requireCluster(clusters, guid).health = health;
      saveClusters(paths, clusters);
      return {
        stdout: `Cluster ${guid} health set: ${JSON.stringify(health)}\n`,
        changes: [{ kind: 'cluster-health-set', guid, health }],
      };
    }
    const cluster = clusters.clusters.find((c) => c.guid === guid);
    if (!cluster?.health) return { stdout: `Cluster ${guid} has no health override\n`, changes: [] };
    delete cluster.health;
    saveClusters(paths, clusters);
    return { stdout: `Cluster ${guid} health override cleared\n`, changes: [{ kind: 'cluster-health-clear', guid }] };
  });
}

function overrideOf(parsed: ParsedArgs): ClusterHealthOverride {
  const status = optional(parsed, '--status');
  const progress = optional(parsed, '--progress');
  const failures = optional(parsed, '--failures');
  const percent = optional(parsed, '--percent');
  const movingData = parsed.flags.has('--moving-data');
  if (parsed.values.size === 0 && !movingData) throw new UsageError(`nothing to set\n${CLUSTER_HEALTH_USAGE}`);
  if (status !== undefined && !/^[A-Z][A-Z_]*$/.test(status))
    throw new UsageError(`--status must be a status word such as REBUILDING, got ${JSON.stringify(status)}`);
  if ((failures === undefined) !== (percent === undefined))
    throw new UsageError(`--failures and --percent go together\n${CLUSTER_HEALTH_USAGE}`);
  return {
    ...(status !== undefined ? { status } : {}),
    ...(movingData ? { movingData: true as const } : {}),
    ...(progress !== undefined ? { progressPercent: percentArg('--progress', progress) } : {}),
    ...(failures !== undefined && percent !== undefined
      ? {
          protection: { numFailures: integerArg('--failures', failures, 1), percent: percentArg('--percent', percent) },
        }
      : {}),
  };
}

/** A percentage, 0 to 100, decimals allowed. */
function percentArg(option: string, text: string): number {
  const value = Number(text);
  if (!/^\d*\.?\d+$/.test(text) || !(value >= 0 && value <= 100))
    throw new UsageError(`${option} must be a percentage between 0 and 100, got ${JSON.stringify(text)}`);
  return value;
}
