// The simulated `weka` CLI: just enough of `weka cluster` to form clusters and to add and remove
// drives backed by virtual drives signed on this node's devices.
import { integerArg, parseArgs, positionals, required, type ParsedArgs } from './args.js';
import type { ClusterState, ContainerRecord, DriveRecord } from './cluster-state.js';
import { SimRefusal, UsageError, type ToolOutput } from './outcome.js';
import { uuidOption, type NodeView } from './sign-drive-tool.js';

export interface WekaContext {
  readonly node: NodeView;
  readonly clusters: ClusterState;
  readonly newUUID: () => string;
}

export const WEKA_USAGE = `usage:
  weka cluster create NAME [--json]
  weka cluster list [--json]
  weka cluster container add --cluster-guid GUID --name NAME --hostname HOST [--json]
  weka cluster container list --cluster-guid GUID [--json]
  weka cluster drive add CONTAINER_ID VIRTUAL_UUID [--json]
  weka cluster drive list CONTAINER_ID [--json]
  weka cluster drive remove DRIVE_UUID`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

export function runWeka(args: readonly string[], ctx: WekaContext): ToolOutput {
  const [top, group, action] = args;
  if (top === 'cluster') {
    if (group === 'create') return clusterCreate(args.slice(2), ctx);
    if (group === 'list') return clusterList(args.slice(2), ctx);
    const rest = args.slice(3);
    if (group === 'container' && action === 'add') return containerAdd(rest, ctx);
    if (group === 'container' && action === 'list') return containerList(rest, ctx);
    if (group === 'drive' && action === 'add') return driveAdd(rest, ctx);
    if (group === 'drive' && action === 'list') return driveList(rest, ctx);
    if (group === 'drive' && action === 'remove') return driveRemove(rest, ctx);
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
    stdout: output(parsed, cluster, `Created cluster ${cluster.name} with GUID ${cluster.guid}`),
    changes: [{ kind: 'cluster-create', ...cluster }],
  };
}

function clusterList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  positionals(parsed, []);
  const text = clusters.clusters.map((c) => `${c.name}\t${c.guid}`).join('\n');
  return { stdout: output(parsed, clusters.clusters, text), changes: [] };
}

function containerAdd(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--cluster-guid', '--name', '--hostname'], flags: ['--json'] });
  positionals(parsed, []);
  const clusterGUID = uuidOption(required(parsed, '--cluster-guid'), '--cluster-guid');
  const name = required(parsed, '--name');
  const hostname = required(parsed, '--hostname');
  if (!NAME.test(name)) throw new UsageError(`invalid container name ${JSON.stringify(name)}`);
  if (!HOSTNAME.test(hostname)) throw new UsageError(`invalid hostname ${JSON.stringify(hostname)}`);
  requireCluster(clusters, clusterGUID);
  if (clusters.containers.some((c) => c.clusterGUID === clusterGUID && c.name === name)) {
    throw new SimRefusal(`cluster ${clusterGUID} already has a container named ${name}`);
  }
  const container: ContainerRecord = { containerId: clusters.nextContainerId++, clusterGUID, name, hostname };
  clusters.containers.push(container);
  return {
    stdout: output(parsed, container, `Added container ${name} with ID ${container.containerId}`),
    changes: [{ kind: 'container-add', ...container }],
  };
}

function containerList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--cluster-guid'], flags: ['--json'] });
  positionals(parsed, []);
  const clusterGUID = uuidOption(required(parsed, '--cluster-guid'), '--cluster-guid');
  requireCluster(clusters, clusterGUID);
  const list = clusters.containers.filter((c) => c.clusterGUID === clusterGUID);
  const text = list.map((c) => `${c.containerId}\t${c.name}\t${c.hostname}`).join('\n');
  return { stdout: output(parsed, list, text), changes: [] };
}

function driveAdd(args: readonly string[], { node, clusters, newUUID }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText, uuidText] = positionals(parsed, ['CONTAINER_ID', 'VIRTUAL_UUID']);
  const container = requireContainer(clusters, integerArg('CONTAINER_ID', idText!, 0));
  const virtualUUID = uuidOption(uuidText!, 'VIRTUAL_UUID');
  const signed = [...node.devices.values()].flatMap((d) => d.virtualDrives.map((vd) => ({ device: d.devicePath, vd })));
  const found = signed.find((s) => s.vd.virtualUUID === virtualUUID);
  if (!found) throw new SimRefusal(`virtual UUID ${virtualUUID} is not signed on any device of node ${node.nodeName}`);
  if (found.vd.ownerClusterGUID !== container.clusterGUID) {
    throw new SimRefusal(
      `virtual drive ${virtualUUID} on ${found.device} is signed for cluster ${found.vd.ownerClusterGUID}, but container ${container.containerId} is in cluster ${container.clusterGUID}`,
    );
  }
  const added = clusters.drives.find((d) => d.virtualUUID === virtualUUID);
  if (added)
    throw new SimRefusal(
      `virtual drive ${virtualUUID} is already added as drive ${added.driveUUID} of container ${added.containerId}`,
    );
  const drive: DriveRecord = {
    driveUUID: newUUID(),
    virtualUUID,
    containerId: container.containerId,
    sizeGiB: found.vd.sizeGiB,
    node: node.nodeName,
    status: 'ACTIVE',
  };
  clusters.drives.push(drive);
  return {
    stdout: output(
      parsed,
      publicDrive(drive),
      `Added drive ${drive.driveUUID} (virtual ${virtualUUID}) to container ${container.containerId}`,
    ),
    changes: [{ kind: 'drive-add', driveUUID: drive.driveUUID, virtualUUID, containerId: container.containerId }],
  };
}

function driveList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText] = positionals(parsed, ['CONTAINER_ID']);
  const container = requireContainer(clusters, integerArg('CONTAINER_ID', idText!, 0));
  const drives = clusters.drives.filter((d) => d.containerId === container.containerId).map(publicDrive);
  const text = drives.map((d) => `${d.driveUUID}\t${d.virtualUUID}\t${d.sizeGiB} GiB\t${d.status}`).join('\n');
  return { stdout: output(parsed, drives, text), changes: [] };
}

function driveRemove(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, {});
  const [uuidText] = positionals(parsed, ['DRIVE_UUID']);
  const driveUUID = uuidOption(uuidText!, 'DRIVE_UUID');
  const index = clusters.drives.findIndex((d) => d.driveUUID === driveUUID);
  const drive = clusters.drives[index];
  if (!drive) throw new SimRefusal(`no drive with UUID ${driveUUID}`);
  clusters.drives.splice(index, 1);
  return {
    stdout: `Removed drive ${driveUUID}\n`,
    changes: [{ kind: 'drive-remove', driveUUID, virtualUUID: drive.virtualUUID, containerId: drive.containerId }],
  };
}

function requireCluster(clusters: ClusterState, guid: string): void {
  if (!clusters.clusters.some((c) => c.guid === guid)) throw new SimRefusal(`no cluster with GUID ${guid}`);
}

function requireContainer(clusters: ClusterState, containerId: number): ContainerRecord {
  const container = clusters.containers.find((c) => c.containerId === containerId);
  if (!container) throw new SimRefusal(`no container with ID ${containerId}`);
  return container;
}

/** What `drive list|add --json` shows: the record minus simulator bookkeeping. */
function publicDrive(d: DriveRecord): Omit<DriveRecord, 'node'> {
  return {
    driveUUID: d.driveUUID,
    virtualUUID: d.virtualUUID,
    containerId: d.containerId,
    sizeGiB: d.sizeGiB,
    status: d.status,
  };
}

function output(parsed: ParsedArgs, json: unknown, text: string): string {
  if (parsed.flags.has('--json')) return `${JSON.stringify(json, null, 2)}\n`;
  return text === '' ? '' : `${text}\n`;
}
