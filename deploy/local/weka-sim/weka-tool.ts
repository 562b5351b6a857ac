// The simulated `weka` CLI: just enough of `weka cluster` to form clusters, to add and remove
// drives (weka-drives.ts: virtual drives signed on this node's devices, or whole exclusive
// devices of this node), and to take containers out again.
import { integerArg, jsonOrText, optional, parseArgs, positionals, required } from './args.js';
import { requireCluster, type ContainerRecord, type WekaContext } from './cluster-state.js';
import { SimRefusal, UsageError, type ToolOutput } from './outcome.js';
import { portClash, portsArgs } from './ports.js';
import { uuidOption } from './node-view.js';
import { driveAdd, driveDeactivate, driveList, driveRemove } from './weka-drives.js';

export const WEKA_USAGE = `usage:
  weka cluster create NAME [--json]
  weka cluster list [--json]
  weka cluster destroy CLUSTER_GUID
  weka cluster container add --cluster-guid GUID --name NAME --hostname HOST --base-port PORT --agent-port PORT [--json]
  weka cluster container list [CONTAINER_ID...] [--cluster-guid GUID] [--json]
  weka cluster container CONTAINER_ID [--json]
  weka cluster container deactivate CONTAINER_ID... [--no-wait] [--skip-resource-validation]
  weka cluster container remove CONTAINER_ID [--no-unimprint] [--no-wait]
  weka cluster drive add CONTAINER_ID VIRTUAL_UUID --pool POOL  (a virtual drive signed on this node)
  weka cluster drive add CONTAINER_ID DEVICE_PATH               (a whole device of this node, signed exclusive)
  weka cluster drive [DRIVE_UUID...] [--container CONTAINER_ID...] [--json]
  weka cluster drive deactivate DRIVE_UUID... [-f|--force]
  weka cluster drive remove DRIVE_UUID... [-f|--force]`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

export function runWeka(args: readonly string[], ctx: WekaContext): ToolOutput {
  const [top, group, action] = args;
  if (top === 'cluster') {
    if (group === 'create') return clusterCreate(args.slice(2), ctx);
    if (group === 'list') return clusterList(args.slice(2), ctx);
    if (group === 'destroy') return clusterDestroy(args.slice(2), ctx);
    const rest = args.slice(3);
    if (group === 'container' && action === 'add') return containerAdd(rest, ctx);
    if (group === 'container' && action === 'list') return containerList(rest, ctx);
    if (group === 'container' && action === 'deactivate') return containerDeactivate(rest, ctx);
    if (group === 'container' && action === 'remove') return containerRemove(rest, ctx);
    if (group === 'container' && /^\d+$/.test(action ?? '')) return containerShow(args.slice(2), ctx);
    if (group === 'drive' && action === 'add') return driveAdd(rest, ctx);
    if (group === 'drive' && action === 'deactivate') return driveDeactivate(rest, ctx);
    if (group === 'drive' && action === 'remove') return driveRemove(rest, ctx);
    if (group === 'drive') return driveList(args.slice(2), ctx);
  }
  throw new UsageError(`unknown command ${JSON.stringify(args.slice(0, 3).join(' '))}\n${WEKA_USAGE}`);
}

function clusterCreate(args: readonly string[], { clusters, newUUID }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [name] = positionals(parsed, ['NAME']);
  if (!NAME.test(name!)) throw new UsageError(`invalid cluster name ${JSON.stringify(name)}`);
  if (clusters.clusters.some((c) => c.name === name)) throw new SimRefusal(`cluster ${name} already exists`);
  const cluster = { name: name!, guid: newUUID() };
  clusters.clusters.push(cluster);
  return {
    stdout: jsonOrText(parsed, cluster, `Created cluster ${cluster.name} with GUID ${cluster.guid}`),
    changes: [{ kind: 'cluster-create', ...cluster }],
  };
}

function clusterList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  positionals(parsed, []);
  const text = clusters.clusters.map((c) => `${c.name}\t${c.guid}`).join('\n');
  return { stdout: jsonOrText(parsed, clusters.clusters, text), changes: [] };
}

/**
 * Destroys an empty cluster: its name is then free to be created again. Refuses while any
 * container is still in it (active or not): each must leave first, its drives removed.
 */
function clusterDestroy(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, {});
  const [guidText] = positionals(parsed, ['CLUSTER_GUID']);
  const guid = uuidOption(guidText!, 'CLUSTER_GUID');
  const index = clusters.clusters.findIndex((c) => c.guid === guid);
  const cluster = clusters.clusters[index];
  if (!cluster) throw new SimRefusal(`no cluster with GUID ${guid}`);
  const members = clusters.containers.filter((c) => c.clusterGUID === guid);
  if (members.length > 0) {
    const names = members.map((c) => `${c.containerId} (${c.name})`).join(', ');
    throw new SimRefusal(
      `cluster ${cluster.name} (${guid}) still has ${members.length} container(s): ${names}; remove them first (weka cluster container remove CONTAINER_ID)`,
    );
  }
  clusters.clusters.splice(index, 1);
  return {
    stdout: `Destroyed cluster ${cluster.name} (${guid})\n`,
    changes: [{ kind: 'cluster-destroy', name: cluster.name, guid }],
  };
}

function containerAdd(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, {
    values: ['--cluster-guid', '--name', '--hostname', '--base-port', '--agent-port'],
    flags: ['--json'],
  });
  positionals(parsed, []);
  const ports = portsArgs(required(parsed, '--base-port'), required(parsed, '--agent-port'));
  const clusterGUID = uuidOption(required(parsed, '--cluster-guid'), '--cluster-guid');
  const name = required(parsed, '--name');
  const hostname = required(parsed, '--hostname');
  if (!NAME.test(name)) throw new UsageError(`invalid container name ${JSON.stringify(name)}`);
  if (!HOSTNAME.test(hostname)) throw new UsageError(`invalid hostname ${JSON.stringify(hostname)}`);
  requireCluster(clusters, clusterGUID);
  if (clusters.containers.some((c) => c.clusterGUID === clusterGUID && c.name === name)) {
    throw new SimRefusal(`cluster ${clusterGUID} already has a container named ${name}`);
  }
  const clash = portClash(clusters.containers, hostname, ports);
  if (clash !== undefined) throw new SimRefusal(`cannot add ${name} on ${hostname}: ${clash}`);
  const container: ContainerRecord = {
    containerId: clusters.nextContainerId++,
    clusterGUID,
    name,
    hostname,
    ...ports,
    status: 'ACTIVE',
  };
  clusters.containers.push(container);
  return {
    stdout: jsonOrText(parsed, container, `Added container ${name} with ID ${container.containerId}`),
    changes: [{ kind: 'container-add', containerId: container.containerId, clusterGUID, name, hostname, ...ports }],
  };
}

/**
 * Lists the containers of a cluster (--cluster-guid), the containers with the given IDs, or both
 * filters at once. An unknown GUID is refused; an unknown ID is simply not listed: IDs are never
 * reused, so a probe reads an ID missing from the list as "removed".
 */
function containerList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--cluster-guid'], flags: ['--json'] });
  const ids = parsed.positionals.map((text) => integerArg('CONTAINER_ID', text, 0));
  const guidText = optional(parsed, '--cluster-guid');
  if (guidText === undefined && ids.length === 0) {
    throw new UsageError('container list needs --cluster-guid GUID or at least one CONTAINER_ID');
  }
  const clusterGUID = guidText === undefined ? undefined : uuidOption(guidText, '--cluster-guid');
  if (clusterGUID !== undefined) requireCluster(clusters, clusterGUID);
  const list = clusters.containers.filter(
    (c) =>
      (clusterGUID === undefined || c.clusterGUID === clusterGUID) && (ids.length === 0 || ids.includes(c.containerId)),
  );
  const text = list.map((c) => `${c.containerId}\t${c.name}\t${c.hostname}\t${c.status}`).join('\n');
  return { stdout: jsonOrText(parsed, list, text), changes: [] };
}

/**
 * One container as the real CLI shows it (docs/weka-interface.md): a list of it, empty when the
 * cluster has no container of that ID. The simulator keeps no host IP, uid or state of a
 * container, so those fields are left out.
 */
function containerShow(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText] = positionals(parsed, ['CONTAINER_ID']);
  const id = integerArg('CONTAINER_ID', idText!, 0);
  const list = clusters.containers
    .filter((c) => c.containerId === id)
    .map((c) => ({
      host_id: `HostId<${c.containerId}>`,
      hostname: c.hostname,
      container_name: c.name,
      status: c.status,
    }));
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
  return {
    stdout: `Removed container ${id} (${container.name})\n`,
    changes: [
      {
        kind: 'container-remove',
        containerId: id,
        clusterGUID: container.clusterGUID,
        name: container.name,
        hostname: container.hostname,
      },
    ],
  };
}
