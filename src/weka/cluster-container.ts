// Typed calls for taking a container out of its Weka cluster, the undo of joining it, as the
// reference operator does it (docs/weka-interface.md): read the one container
// (`weka cluster container <id> --json`), `weka cluster container deactivate <id>` unless it is
// INACTIVE, wait while it is DEACTIVATING (Weka moves its data away), then
// `weka cluster container remove <id>`. The cluster refuses to remove a container that is still
// active or still has drives, so a drive container's drives are removed first. Container IDs are
// never reused: an ID the cluster no longer lists was removed, and a retry after a lost answer
// finds it done; so is an ID the cluster answers `Host HostId<id> not found` for.
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import { WEKA_TOOL } from './cluster-drive.js';
import { expectArray, expectObject, fail, parseJsonOutput, stringField, type OutputContext } from './json-output.js';
import { validContainerId } from './validate.js';

/** The status a container has once `container deactivate` has finished. */
export const CONTAINER_INACTIVE = 'INACTIVE';
/** The status while Weka takes a deactivated container's data away. */
export const CONTAINER_DEACTIVATING = 'DEACTIVATING';

/** A container as `weka cluster container <id> --json` reports it. */
export interface WekaContainerState {
  readonly containerId: number;
  readonly name: string;
  readonly hostname: string;
  /** `INACTIVE` once deactivated, `DEACTIVATING` meanwhile; other values while it is in use. */
  readonly status: string;
}

export interface ContainerRemoveOptions {
  /**
   * `--no-unimprint`: remove the container from the cluster without resetting it remotely (to
   * "stem" mode). Only for a container that is unreachable; by default it is unimprinted.
   */
  readonly noUnimprint?: boolean;
}

/** The probe: the container with this ID, or an empty list once it has been removed. */
export function containerStatusCall(containerId: number): WekaCall<WekaContainerState[]> {
  const id = validContainerId(containerId);
  const argv = [WEKA_TOOL, 'cluster', 'container', String(id), '--json'];
  return { argv, parse: (stdout) => parseContainerStatus(stdout, id, commandText(argv)) };
}

/** What deactivate and remove print on stderr for a container the cluster does not have. */
export function hostNotFound(containerId: number): RegExp {
  return new RegExp(`Host HostId<${containerId}> not found`);
}

export function containerDeactivateCall(containerId: number): WekaCall<void> {
  const argv = [WEKA_TOOL, 'cluster', 'container', 'deactivate', String(validContainerId(containerId))];
  return { argv, parse: ignoreOutput };
}

export function containerRemoveCall(containerId: number, options: ContainerRemoveOptions = {}): WekaCall<void> {
  const argv = [WEKA_TOOL, 'cluster', 'container', 'remove', String(validContainerId(containerId))];
  if (options.noUnimprint) argv.push('--no-unimprint');
  return { argv, parse: ignoreOutput };
}

/**
 * Parses the probe's answer, `[{host_id, host_ip, hostname, container_name, uid, state, status}]`
 * (the reference's weka.go 282-290), where host_id reads `HostId<N>` and N is the container's ID;
 * every entry must be the container asked for. Unknown fields are ignored.
 */
export function parseContainerStatus(
  stdout: string,
  containerId: number,
  command = `${WEKA_TOOL} cluster container ${containerId} --json`,
): WekaContainerState[] {
  const list = parseContainerList(stdout, command);
  const ctx: OutputContext = { command, stdout };
  for (const [i, c] of list.entries())
    if (c.containerId !== containerId) fail(ctx, `output[${i}].host_id is not HostId<${containerId}>`);
  if (list.length > 1) fail(ctx, `container ${containerId} is listed ${list.length} times`);
  return list;
}

/** Every container of the cluster the pod's Weka container is in: `weka cluster container --json`. */
export function containerListCall(): WekaCall<WekaContainerState[]> {
  const argv = [WEKA_TOOL, 'cluster', 'container', '--json'];
  return { argv, parse: (stdout) => parseContainerList(stdout, commandText(argv)) };
}

/** The listing's entries, each read as parseContainerStatus reads one. */
export function parseContainerList(
  stdout: string,
  command = `${WEKA_TOOL} cluster container --json`,
): WekaContainerState[] {
  const ctx: OutputContext = { command, stdout };
  return expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => {
    const where = `output[${i}]`;
    const obj = expectObject(ctx, entry, where);
    const hostId = /^HostId<(\d+)>$/.exec(stringField(ctx, obj, 'host_id', where));
    if (!hostId) fail(ctx, `${where}.host_id is not HostId<N>`);
    return {
      containerId: Number(hostId[1]),
      name: stringField(ctx, obj, 'container_name', where),
      hostname: stringField(ctx, obj, 'hostname', where),
      status: stringField(ctx, obj, 'status', where),
    };
  });
}

export function findContainerById<C extends { containerId: number }>(
  containers: readonly C[],
  containerId: number,
): C | undefined {
  return containers.find((c) => c.containerId === containerId);
}
