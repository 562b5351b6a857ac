// Typed calls for forming a Weka cluster in the simulator's dialect: create a cluster (its GUID
// is what virtual drives are signed for) and add containers to it (their IDs are what drives are
// added to). Each has a list call so a retry can find what an earlier attempt created.
import { commandText, type WekaCall } from './call.js';
import {
  expectArray,
  expectObject,
  intField,
  parseJsonOutput,
  stringField,
  uuidField,
  type OutputContext,
} from './json-output.js';
import { validHostname, validName, validPort, validUUID } from './validate.js';
import { WEKA_TOOL } from './cluster-drive.js';

export interface WekaClusterInfo {
  readonly name: string;
  readonly guid: string;
}

export interface WekaContainerInfo {
  readonly containerId: number;
  readonly name: string;
  readonly hostname: string;
  readonly clusterGUID: string;
  /** The container's ports, when the tool lists them. */
  readonly basePort?: number;
  readonly agentPort?: number;
}

export interface ContainerAddRequest {
  readonly clusterGUID: string;
  readonly name: string;
  readonly hostname: string;
  /** First of the container's block of ports on its host, as `weka local setup container --base-port` takes it. */
  readonly basePort: number;
  /** The port of the container's agent on its host. */
  readonly agentPort: number;
}

export function clusterCreateCall(name: string): WekaCall<WekaClusterInfo> {
  const argv = [WEKA_TOOL, 'cluster', 'create', validName('cluster name', name), '--json'];
  return { argv, parse: (stdout) => parseClusterCreate(stdout, commandText(argv)) };
}

export function clusterListCall(): WekaCall<WekaClusterInfo[]> {
  const argv = [WEKA_TOOL, 'cluster', 'list', '--json'];
  return { argv, parse: (stdout) => parseClusterList(stdout, commandText(argv)) };
}

export function containerAddCall(req: ContainerAddRequest): WekaCall<WekaContainerInfo> {
  const argv = [
    WEKA_TOOL,
    'cluster',
    'container',
    'add',
    '--cluster-guid',
    validUUID('cluster GUID', req.clusterGUID),
    '--name',
    validName('container name', req.name),
    '--hostname',
    validHostname(req.hostname),
    '--base-port',
    String(validPort('base port', req.basePort)),
    '--agent-port',
    String(validPort('agent port', req.agentPort)),
    '--json',
  ];
  return { argv, parse: (stdout) => parseContainerAdd(stdout, commandText(argv)) };
}

export function containerListCall(clusterGUID: string): WekaCall<WekaContainerInfo[]> {
  const argv = [
    WEKA_TOOL,
    'cluster',
    'container',
    'list',
    '--cluster-guid',
    validUUID('cluster GUID', clusterGUID),
    '--json',
  ];
  return { argv, parse: (stdout) => parseContainerList(stdout, commandText(argv)) };
}

export function parseClusterCreate(stdout: string, command = `${WEKA_TOOL} cluster create`): WekaClusterInfo {
  const ctx: OutputContext = { command, stdout };
  return readCluster(ctx, parseJsonOutput(ctx), 'output');
}

export function parseClusterList(stdout: string, command = `${WEKA_TOOL} cluster list`): WekaClusterInfo[] {
  const ctx: OutputContext = { command, stdout };
  return expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => readCluster(ctx, entry, `output[${i}]`));
}

export function parseContainerAdd(stdout: string, command = `${WEKA_TOOL} cluster container add`): WekaContainerInfo {
  const ctx: OutputContext = { command, stdout };
  return readContainer(ctx, parseJsonOutput(ctx), 'output');
}

export function parseContainerList(
  stdout: string,
  command = `${WEKA_TOOL} cluster container list`,
): WekaContainerInfo[] {
  const ctx: OutputContext = { command, stdout };
  return expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => readContainer(ctx, entry, `output[${i}]`));
}

function readCluster(ctx: OutputContext, value: unknown, where: string): WekaClusterInfo {
  const obj = expectObject(ctx, value, where);
  return { name: stringField(ctx, obj, 'name', where), guid: uuidField(ctx, obj, 'guid', where) };
}

/** One container entry of `container add|list --json`; extra fields (such as `status`) are ignored. */
export function readContainer(ctx: OutputContext, value: unknown, where: string): WekaContainerInfo {
  const obj = expectObject(ctx, value, where);
  const port = (key: 'basePort' | 'agentPort') =>
    obj[key] === undefined ? {} : { [key]: intField(ctx, obj, key, where, 1) };
  return {
    containerId: intField(ctx, obj, 'containerId', where, 0),
    name: stringField(ctx, obj, 'name', where),
    hostname: stringField(ctx, obj, 'hostname', where),
    clusterGUID: uuidField(ctx, obj, 'clusterGUID', where),
    ...port('basePort'),
    ...port('agentPort'),
  };
}
