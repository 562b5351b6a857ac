// Typed calls for taking a container out of its Weka cluster, the undo of `container add`. Weka
// does it in two steps, `weka cluster container deactivate <id>` and then `weka cluster container
// remove <id>`; the cluster refuses to remove a container that is still active or still has
// drives, so a drive container's drives are removed first. Both steps are probed with a list of
// the one container ID: container IDs are never reused, so an ID the list no longer shows was
// removed, and a retry after a lost answer finds it done.
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import { WEKA_TOOL } from './cluster-drive.js';
import { readContainer, type WekaContainerInfo } from './cluster-formation.js';
import { expectArray, expectObject, fail, parseJsonOutput, stringField, type OutputContext } from './json-output.js';
import { validContainerId } from './validate.js';

/** The status `container list` reports once `container deactivate` has finished. */
export const CONTAINER_INACTIVE = 'INACTIVE';

/** A container as `weka cluster container list ID --json` reports it, with its activation status. */
export interface WekaContainerState extends WekaContainerInfo {
  /** `ACTIVE` or `INACTIVE` in the simulator; the real tool also reports `UP`, `DOWN`, `DEACTIVATING`. */
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
  const argv = [WEKA_TOOL, 'cluster', 'container', 'list', String(id), '--json'];
  return { argv, parse: (stdout) => parseContainerStatus(stdout, id, commandText(argv)) };
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

/** Parses the probe's answer; every entry must be the container asked for. */
export function parseContainerStatus(
  stdout: string,
  containerId: number,
  command = `${WEKA_TOOL} cluster container list ${containerId}`,
): WekaContainerState[] {
  const ctx: OutputContext = { command, stdout };
  const list = expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => {
    const where = `output[${i}]`;
    const obj = expectObject(ctx, entry, where);
    const container = readContainer(ctx, obj, where);
    if (container.containerId !== containerId) fail(ctx, `${where}.containerId is not ${containerId}`);
    return { ...container, status: stringField(ctx, obj, 'status', where) };
  });
  if (list.length > 1) fail(ctx, `container ${containerId} is listed ${list.length} times`);
  return list;
}

export function findContainerById<C extends WekaContainerInfo>(
  containers: readonly C[],
  containerId: number,
): C | undefined {
  return containers.find((c) => c.containerId === containerId);
}
