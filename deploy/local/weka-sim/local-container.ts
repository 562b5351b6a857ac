// The Weka container of the pod a `weka` command runs in, and how clusters are made of such
// containers (docs/weka-interface.md, "The cluster"): the pod's image sets its container up from
// the pod's environment, a stem in no cluster unless JOIN_IPS names containers of one;
// `weka cluster create <ip>… --host-ips <ip:port>,…` makes one cluster of stems; a stem given
// join addresses (`weka local resources join-ips`, `apply -f`) joins at `weka local restart`;
// `weka local run wapi … container-get-identity` says what it belongs to. Addresses are data
// here: a container is found by the management IP its pod's environment gave it and its base port.
import { parseHostAddress } from '../../../src/weka/cluster-formation.js';
import { optional, parseArgs, positionals } from './args.js';
import type { ClusterState, ContainerRecord, LocalContainerRecord, PodWekaEnv, WekaContext } from './cluster-state.js';
import { SimRefusal, ToolExit, UsageError, type Change, type ToolOutput } from './outcome.js';
import { portClash } from './ports.js';

const NO_CLUSTER = '00000000-0000-0000-0000-000000000000';

/**
 * The pod's Weka container, set up (or brought up to date) from its environment: a new one with
 * JOIN_IPS joins at once, as the image's `weka local setup container --join-ips` and start do.
 */
export function localContainer(ctx: WekaContext, changes: Change[] = []): LocalContainerRecord {
  const pod = ctx.pod;
  if (!pod)
    throw new ToolExit(
      75,
      'weka: no local Weka container: this pod has no NAME, PORT and AGENT_PORT in its exec environment (yet)\n',
    );
  const host = ctx.node.nodeName;
  let local = ctx.clusters.locals.find((l) => l.hostname === host && l.name === pod.name);
  if (!local) {
    local = { hostname: host, name: pod.name, basePort: pod.basePort, agentPort: pod.agentPort };
    ctx.clusters.locals.push(local);
    if (pod.joinIps?.length) local.joinIps = [...pod.joinIps];
  }
  refresh(local, pod);
  // A stem that has join addresses keeps trying to join.
  if (local.joinIps?.length && !memberOf(ctx.clusters, local)) changes.push(...start(ctx.clusters, local));
  return local;
}

function refresh(local: LocalContainerRecord, pod: PodWekaEnv): void {
  local.basePort = pod.basePort;
  local.agentPort = pod.agentPort;
  if (pod.ip) local.ip = pod.ip;
}

/** The cluster member a local container is, if it is one. */
export function memberOf(clusters: ClusterState, local: LocalContainerRecord): ContainerRecord | undefined {
  return clusters.containers.find((c) => c.hostname === local.hostname && c.name === local.name);
}

/** `weka local run wapi -H localhost:<agent port>/jrpc -W container-get-identity --container-name N --json`. */
export function runLocalWapi(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, {
    values: ['--host', '--wapi-method', '--container-name'],
    flags: ['--json'],
    aliases: { '-H': '--host', '-W': '--wapi-method' },
  });
  positionals(parsed, []);
  const method = optional(parsed, '--wapi-method');
  if (method !== 'container-get-identity') throw new UsageError(`unknown wapi method ${JSON.stringify(method)}`);
  const name = optional(parsed, '--container-name');
  if (!name) throw new UsageError('container-get-identity needs --container-name NAME');
  const changes: Change[] = [];
  if (ctx.pod) localContainer(ctx, changes);
  const host = /^(?:localhost|127\.0\.0\.1):(\d+)\/jrpc$/.exec(optional(parsed, '--host') ?? '');
  const local = ctx.clusters.locals.find((l) => l.hostname === ctx.node.nodeName && l.name === name);
  if (!host || !local || local.agentPort !== Number(host[1]))
    throw new ToolExit(
      1,
      `weka: no agent of container ${name} answers at ${optional(parsed, '--host') ?? '(no -H)'}\n`,
    );
  const member = memberOf(ctx.clusters, local);
  const value = member
    ? { cluster_guid: member.clusterGUID, host_id: member.containerId }
    : { cluster_guid: NO_CLUSTER, host_id: 0 };
  return { stdout: `${JSON.stringify({ value, has_value: true, exception: null })}\n`, changes };
}

/** `weka local resources join-ips ADDR…` and `weka local resources apply -f`. */
export function runLocalResources(args: readonly string[], ctx: WekaContext): ToolOutput {
  const [verb, ...rest] = args;
  const changes: Change[] = [];
  const local = localContainer(ctx, changes);
  if (verb === 'join-ips') {
    const parsed = parseArgs(rest, {});
    if (parsed.positionals.length === 0) throw new UsageError('join-ips needs at least one IP:PORT');
    for (const text of parsed.positionals)
      if (!parseHostAddress(text)) throw new UsageError(`invalid join address ${JSON.stringify(text)}`);
    local.stagedJoinIps = [...parsed.positionals];
    return { stdout: '', changes };
  }
  if (verb === 'apply') {
    parseArgs(rest, { flags: ['-f', '--force'] });
    if (local.stagedJoinIps) {
      local.joinIps = local.stagedJoinIps;
      delete local.stagedJoinIps;
      changes.push({ kind: 'join-ips', name: local.name, hostname: local.hostname, joinIps: local.joinIps });
    }
    return { stdout: '', changes };
  }
  throw new UsageError(`unknown command "weka local resources ${verb ?? ''}"`);
}

/** `weka local restart --force`: a stem with join addresses joins the cluster they lead to (localContainer). */
export function runLocalRestart(args: readonly string[], ctx: WekaContext): ToolOutput {
  parseArgs(args, { flags: ['--force'] });
  const changes: Change[] = [];
  localContainer(ctx, changes);
  return { stdout: '', changes };
}

/**
 * A stem starting: joins the cluster of the first of its join addresses that is a member's. None
 * is, or that cluster has a container of its name: it stays a stem, and tries again later.
 */
function start(clusters: ClusterState, local: LocalContainerRecord): Change[] {
  const through = (local.joinIps ?? []).map((text) => addressed(clusters, text)).find((m) => m !== undefined);
  if (!through) return [];
  // A cluster has one container of a name: another of it stays out while that one is in.
  if (clusters.containers.some((c) => c.clusterGUID === through.clusterGUID && c.name === local.name)) return [];
  return [join(clusters, local, through.clusterGUID)];
}

/**
 * The cluster member at ip:port, if any. A host keeps the record of a container whose pod is gone,
 * and the pod made again may get its address: the one in a cluster is the one listening there.
 */
function addressed(clusters: ClusterState, text: string): ContainerRecord | undefined {
  const address = parseHostAddress(text);
  if (!address) return undefined;
  return clusters.locals
    .filter((l) => l.ip === address.ip && l.basePort === address.port)
    .map((l) => memberOf(clusters, l))
    .find((m) => m !== undefined);
}

function join(clusters: ClusterState, local: LocalContainerRecord, clusterGUID: string): Change {
  const clash = portClash(clusters.containers, local.hostname, local);
  if (clash !== undefined) throw new SimRefusal(`cannot start ${local.name} on ${local.hostname}: ${clash}`);
  const container: ContainerRecord = {
    containerId: clusters.nextContainerId++,
    clusterGUID,
    name: local.name,
    hostname: local.hostname,
    basePort: local.basePort,
    agentPort: local.agentPort,
    status: 'ACTIVE',
  };
  clusters.containers.push(container);
  const { name, hostname, basePort, agentPort } = local;
  return {
    kind: 'container-add',
    containerId: container.containerId,
    clusterGUID,
    name,
    hostname,
    basePort,
    agentPort,
  };
}

/**
 * `weka cluster create IP… --host-ips IP:PORT,…`, run in a stem: one new cluster of the stems at
 * those addresses, each then a member. Refused from a container already in a cluster, and when an
 * address leads to no stem.
 */
export function runClusterCreate(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--host-ips', '--admin-password'], flags: ['--json'] });
  const changes: Change[] = [];
  const here = localContainer(ctx, changes);
  if (memberOf(ctx.clusters, here))
    throw new SimRefusal(`container ${here.name} is already in a cluster; run weka status there`);
  const hostIps = (optional(parsed, '--host-ips') ?? '').split(',').filter((t) => t !== '');
  if (hostIps.length === 0) throw new UsageError('cluster create needs --host-ips IP:PORT,...');
  if (parsed.positionals.length !== hostIps.length)
    throw new UsageError(`${parsed.positionals.length} host names for ${hostIps.length} --host-ips`);
  const stems = hostIps.map((text, i) => {
    const address = parseHostAddress(text);
    if (!address || address.ip !== parsed.positionals[i])
      throw new UsageError(`--host-ips ${JSON.stringify(text)} does not match host ${parsed.positionals[i]}`);
    const local = ctx.clusters.locals.find((l) => l.ip === address.ip && l.basePort === address.port);
    if (!local) throw new SimRefusal(`no Weka container answers at ${text}`);
    if (memberOf(ctx.clusters, local)) throw new SimRefusal(`the container at ${text} is already in a cluster`);
    return local;
  });
  const guid = ctx.newUUID();
  ctx.clusters.clusters.push({ name: '', guid });
  changes.push({ kind: 'cluster-create', guid, hosts: hostIps });
  for (const local of stems) changes.push(join(ctx.clusters, local, guid));
  return { stdout: '', changes };
}

/** `weka cluster update --cluster-name NAME`, of the cluster the pod's container is in. */
export function runClusterUpdate(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--cluster-name'] });
  positionals(parsed, []);
  const name = optional(parsed, '--cluster-name');
  if (!name) throw new UsageError('cluster update needs --cluster-name NAME');
  const changes: Change[] = [];
  const member = memberOf(ctx.clusters, localContainer(ctx, changes));
  if (!member) throw new SimRefusal('this container is not in a cluster');
  const cluster = ctx.clusters.clusters.find((c) => c.guid === member.clusterGUID)!;
  cluster.name = name;
  changes.push({ kind: 'cluster-name', guid: cluster.guid, name });
  return { stdout: '', changes };
}

/** The cluster the pod's container is in, for commands that talk to "the" cluster. */
export function clusterOfPod(ctx: WekaContext): string {
  const member = memberOf(ctx.clusters, localContainer(ctx));
  if (!member) throw new SimRefusal('this container is not in a cluster');
  return member.clusterGUID;
}
