// Typed calls for forming a Weka cluster and joining containers to it, as Weka does it
// (docs/weka-interface.md, "The cluster"): each pod runs its own Weka container, which starts as a
// "stem" that belongs to no cluster. The cluster is created once, from one stem, naming the stems
// it is made of by management IP and port (`weka cluster create … --host-ips`); a stem joins later
// by being given the addresses of containers already in the cluster (`weka local resources
// join-ips`, applied and restarted). What a container belongs to is read from its own agent
// (`container-get-identity`): the cluster's GUID, which virtual drives are signed for, and the
// container's ID in it, which drives are added to.
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import { WEKA_TOOL } from './cluster-drive.js';
import { WekaInputError } from './errors.js';
import {
  booleanField,
  expectObject,
  fail,
  intField,
  parseJsonOutput,
  stringField,
  type OutputContext,
} from './json-output.js';
import { isUUID, validName, validPort } from './validate.js';

/** The GUID an identity carries while its container is in no cluster. */
export const NO_CLUSTER_GUID = '00000000-0000-0000-0000-000000000000';

/** A Weka container's address as Weka takes it: its management IP and its base (Weka) port. */
export interface WekaHostAddress {
  readonly ip: string;
  readonly port: number;
}

/** What a container's agent says it belongs to. */
export type ContainerIdentity =
  | { readonly state: 'member'; readonly clusterGUID: string; readonly containerId: number }
  /** Set up and running, in no cluster yet. */
  | { readonly state: 'stem' }
  /** The agent has no answer yet (the container is starting): ask again later. */
  | { readonly state: 'unknown'; readonly reason: string };

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const IPV6 = /^[0-9A-Fa-f:]+$/;

/** An IPv4 or IPv6 address, as the downward API gives a pod's. */
export function validIp(field: string, value: unknown): string {
  if (typeof value !== 'string' || !(IPV4.test(value) || (value.includes(':') && IPV6.test(value))))
    throw new WekaInputError(field, value, 'expected an IPv4 or IPv6 address');
  return value;
}

/** `ip:port`, IPv6 in brackets, as `--host-ips` and `join-ips` take an address. */
export function hostAddressText({ ip, port }: WekaHostAddress): string {
  const address = validIp('management IP', ip);
  const checked = validPort('Weka port', port);
  return address.includes(':') ? `[${address}]:${checked}` : `${address}:${checked}`;
}

/** Reads `ip:port` (IPv6 in brackets), as spec.joinIps lists them; undefined if it is not one. */
export function parseHostAddress(text: string): WekaHostAddress | undefined {
  const match = /^(?:\[([0-9A-Fa-f:]+)\]|([0-9.]+)):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const ip = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (!(IPV4.test(ip) || (match[1] !== undefined && IPV6.test(ip))) || port < 1 || port > 65535) return undefined;
  return { ip, port };
}

/**
 * `weka local run wapi -H localhost:<agent port>/jrpc -W container-get-identity --container-name
 * <name> --json`, run in the container's own pod: its agent answers for it.
 */
export function containerIdentityCall(name: string, agentPort: number): WekaCall<ContainerIdentity> {
  const argv = [
    WEKA_TOOL,
    'local',
    'run',
    'wapi',
    '-H',
    `localhost:${validPort('agent port', agentPort)}/jrpc`,
    '-W',
    'container-get-identity',
    '--container-name',
    validName('container name', name),
    '--json',
  ];
  return { argv, parse: (stdout) => parseContainerIdentity(stdout, commandText(argv)) };
}

/**
 * `{"value": {"cluster_guid": "…", "host_id": N}, "has_value": true, "exception": null}`: a member
 * of the cluster of that GUID under ID N; an empty or all-zero GUID is a stem; no value is an
 * agent that cannot say yet (REF funcs_cluster_joining.go 19-86). Unknown fields are ignored.
 */
export function parseContainerIdentity(stdout: string, command = `${WEKA_TOOL} local run wapi`): ContainerIdentity {
  const ctx: OutputContext = { command, stdout };
  const obj = expectObject(ctx, parseJsonOutput(ctx), 'output');
  const hasValue = booleanField(ctx, obj, 'has_value', 'output');
  const exception = obj['exception'];
  if (!hasValue || obj['value'] === null || obj['value'] === undefined) {
    const reason = typeof exception === 'string' && exception !== '' ? exception : 'the agent has no identity yet';
    return { state: 'unknown', reason };
  }
  const value = expectObject(ctx, obj['value'], 'output.value');
  const guid = value['cluster_guid'] === '' ? '' : stringField(ctx, value, 'cluster_guid', 'output.value');
  if (guid === '' || guid === NO_CLUSTER_GUID) return { state: 'stem' };
  if (!isUUID(guid)) fail(ctx, 'output.value.cluster_guid is not a UUID');
  return {
    state: 'member',
    clusterGUID: guid.toLowerCase(),
    containerId: intField(ctx, value, 'host_id', 'output.value', 0),
  };
}

/**
 * `weka cluster create <ip>… --host-ips <ip:port>,…`: one cluster of the stems at those addresses,
 * run in one of them. Its output is not read (REF weka_cluster.go 88-192); the identity is.
 */
export function clusterCreateCall(hosts: readonly WekaHostAddress[]): WekaCall<void> {
  if (hosts.length === 0) throw new WekaInputError('hosts', hosts, 'a cluster needs at least one container');
  const addresses = hosts.map(hostAddressText);
  const argv = [WEKA_TOOL, 'cluster', 'create', ...hosts.map((h) => h.ip), '--host-ips', addresses.join(',')];
  return { argv, parse: ignoreOutput };
}

/** `weka cluster update --cluster-name <name>`: the name is not an argument of `create`. */
export function clusterNameCall(name: string): WekaCall<void> {
  return {
    argv: [WEKA_TOOL, 'cluster', 'update', '--cluster-name', validName('cluster name', name)],
    parse: ignoreOutput,
  };
}

/**
 * A stem's way into an existing cluster, in its own pod, as the reference does it for a container
 * left a stem (REF funcs_cluster_joining.go 88-142): the addresses of containers in the cluster,
 * then apply them, then restart the container, which then joins.
 */
export function joinCalls(joinIps: readonly WekaHostAddress[]): WekaCall<void>[] {
  if (joinIps.length === 0) throw new WekaInputError('join IPs', joinIps, 'expected at least one address');
  return [
    { argv: [WEKA_TOOL, 'local', 'resources', 'join-ips', ...joinIps.map(hostAddressText)], parse: ignoreOutput },
    { argv: [WEKA_TOOL, 'local', 'resources', 'apply', '-f'], parse: ignoreOutput },
    { argv: [WEKA_TOOL, 'local', 'restart', '--force'], parse: ignoreOutput },
  ];
}
