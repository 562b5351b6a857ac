// The simulated `weka` CLI: the pod's own Weka container and how clusters are made of such
// containers (local-container.ts), the drives of a cluster (weka-drives.ts: virtual drives signed
// on this node's devices, or whole exclusive devices of this node), taking containers out, and
// the state of a cluster (`weka status --json`, weka-status.ts).
import { integerArg, jsonOrText, parseArgs, positionals } from './args.js';
import type { WekaContext } from './cluster-state.js';
import {
  clusterOfPod,
  runClusterCreate,
  runClusterUpdate,
  runLocalResources,
  runLocalRestart,
  runLocalWapi,
} from './local-container.js';
import { SimRefusal, UsageError, type Change, type ToolOutput } from './outcome.js';
import { driveAdd, driveDeactivate, driveList, driveRemove } from './weka-drives.js';
import { runStatus } from './weka-status.js';

export const WEKA_USAGE = `usage:
  weka local run wapi -H localhost:AGENT_PORT/jrpc -W container-get-identity --container-name NAME --json
  weka local resources join-ips IP:PORT...
  weka local resources apply -f
  weka local restart --force
  weka cluster create IP... --host-ips IP:PORT,... [--admin-password P]
  weka cluster update --cluster-name NAME
  weka cluster container [CONTAINER_ID] [--json]
  weka cluster container deactivate CONTAINER_ID... [--no-wait] [--skip-resource-validation]
  weka cluster container remove CONTAINER_ID [--no-unimprint] [--no-wait]
  weka cluster drive add CONTAINER_ID VIRTUAL_UUID --pool POOL  (a virtual drive signed on this node)
  weka cluster drive add CONTAINER_ID DEVICE_PATH               (a whole device of this node, signed exclusive)
  weka cluster drive [DRIVE_UUID...] [--container CONTAINER_ID...] [--json]
  weka cluster drive deactivate DRIVE_UUID... [-f|--force]
  weka cluster drive remove DRIVE_UUID... [-f|--force]
  weka status --json  (the cluster of this pod's container; the text form is not modelled)`;

export function runWeka(args: readonly string[], ctx: WekaContext): ToolOutput {
  const [top, group, action] = args;
  if (top === 'local') {
    if (group === 'run' && action === 'wapi') return runLocalWapi(args.slice(3), ctx);
    if (group === 'resources') return runLocalResources(args.slice(2), ctx);
    if (group === 'restart') return runLocalRestart(args.slice(2), ctx);
  }
  if (top === 'status') return runStatus(args.slice(1), ctx);
  if (top === 'cluster') {
    if (group === 'create') return runClusterCreate(args.slice(2), ctx);
    if (group === 'update') return runClusterUpdate(args.slice(2), ctx);
    const rest = args.slice(3);
    if (group === 'container' && action === 'deactivate') return containerDeactivate(rest, ctx);
    if (group === 'container' && action === 'remove') return containerRemove(rest, ctx);
    if (group === 'container' && (action === undefined || action.startsWith('-') || /^\d+$/.test(action)))
      return containerShow(args.slice(2), ctx);
    if (group === 'drive' && action === 'add') return driveAdd(rest, ctx);
    if (group === 'drive' && action === 'deactivate') return driveDeactivate(rest, ctx);
    if (group === 'drive' && action === 'remove') return driveRemove(rest, ctx);
    if (group === 'drive') return driveList(args.slice(2), ctx);
  }
  throw new UsageError(`unknown command ${JSON.stringify(args.slice(0, 3).join(' '))}\n${WEKA_USAGE}`);
}

/**
 * The containers as the real CLI shows them (docs/weka-interface.md): the one of the ID (a list of
 * it, empty when the cluster has none of that ID), or with no ID every container of the cluster
 * the pod's container is in. The simulator keeps no uid or state of a container: left out.
 */
function containerShow(args: readonly string[], ctx: WekaContext): ToolOutput {
  const { clusters } = ctx;
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText] = parsed.positionals;
  if (parsed.positionals.length > 1) throw new UsageError('expected at most one CONTAINER_ID');
  const id = idText === undefined ? undefined : integerArg('CONTAINER_ID', idText, 0);
  const guid = id === undefined ? clusterOfPod(ctx) : undefined;
  const list = clusters.containers
    .filter((c) => (id === undefined ? c.clusterGUID === guid : c.containerId === id))
    .map((c) => {
      const local = clusters.locals.find((l) => l.hostname === c.hostname && l.name === c.name);
      return {
        host_id: `HostId<${c.containerId}>`,
        hostname: c.hostname,
        container_name: c.name,
        ...(local?.ip ? { host_ip: local.ip } : {}),
        status: c.status,
      };
    });
  const text = list.map((c) => `${c.host_id}\t${c.container_name}\t${c.hostname}\t${c.status}`).join('\n');
  return { stdout: jsonOrText(parsed, list, text), changes: [] };
}

/** The container of this ID; refused as the real CLI refuses an unknown one (the reference matches the text). */
function hostOf(clusters: WekaContext['clusters'], containerId: number) {
  const container = clusters.containers.find((c) => c.containerId === containerId);
  if (!container) throw new SimRefusal(`Host HostId<${containerId}> not found`);
  return container;
}

/**
 * Marks the containers inactive: the cluster stops using them, and only an inactive container can
 * be removed. An already inactive one is left as it is. Any unknown ID refuses the whole command.
 * The real tool's wait and resource-validation options are accepted and change nothing here.
 */
function containerDeactivate(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--no-wait', '--skip-resource-validation'] });
  if (parsed.positionals.length === 0) throw new UsageError('expected CONTAINER_ID..., got no container IDs');
  const targets = parsed.positionals.map((text) => hostOf(clusters, integerArg('CONTAINER_ID', text, 0)));
  const changed = [...new Set(targets)].filter((c) => c.status !== 'INACTIVE');
  for (const container of changed) container.status = 'INACTIVE';
  return {
    stdout: targets.map((c) => `Container ${c.containerId} (${c.name}) is INACTIVE\n`).join(''),
    changes: changed.map((c) => ({
      kind: 'container-deactivate',
      containerId: c.containerId,
      clusterGUID: c.clusterGUID,
      name: c.name,
    })),
  };
}

/**
 * Removes an inactive container that has no drives left in the cluster; its name is then free to
 * join again, from any node. Refuses an active container and one whose drives are not all removed.
 */
function containerRemove(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--no-unimprint', '--no-wait'] });
  const [idText] = positionals(parsed, ['CONTAINER_ID']);
  const container = hostOf(clusters, integerArg('CONTAINER_ID', idText!, 0));
  const id = container.containerId;
  if (container.status !== 'INACTIVE') {
    throw new SimRefusal(
      `container ${id} (${container.name}) is ${container.status}; deactivate it first (weka cluster container deactivate ${id})`,
    );
  }
  const drives = clusters.drives.filter((d) => d.containerId === id);
  if (drives.length > 0) {
    throw new SimRefusal(
      `container ${id} (${container.name}) still has ${drives.length} drive(s) in the cluster (${drives
        .map((d) => d.driveUUID)
        .join(', ')}); remove them first (weka cluster drive deactivate, then remove)`,
    );
  }
  clusters.containers.splice(clusters.containers.indexOf(container), 1);
  // Unimprinted: reset to a stem that joins nothing by itself (without, it is out of reach).
  if (!parsed.flags.has('--no-unimprint')) {
    const local = clusters.locals.find((l) => l.hostname === container.hostname && l.name === container.name);
    if (local) {
      delete local.joinIps;
      delete local.stagedJoinIps;
    }
  }
  const changes: Change[] = [
    {
      kind: 'container-remove',
      containerId: id,
      clusterGUID: container.clusterGUID,
      name: container.name,
      hostname: container.hostname,
    },
  ];
  // A cluster is made of its containers: with the last one gone, so is it.
  if (!clusters.containers.some((c) => c.clusterGUID === container.clusterGUID)) {
    const index = clusters.clusters.findIndex((c) => c.guid === container.clusterGUID);
    const [gone] = index >= 0 ? clusters.clusters.splice(index, 1) : [];
    if (gone) changes.push({ kind: 'cluster-gone', name: gone.name, guid: gone.guid });
  }
  return { stdout: `Removed container ${id} (${container.name})\n`, changes };
}
