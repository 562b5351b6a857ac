// A node's devices as the local control plane creates them: init-node for every device, then the
// `device` command for each one given a shape (model, partitions, ...), only when init-node created
// it now: a kept node's device may have been signed since.
import { deviceShapeArgs, type DeviceShapeSpec } from './device-shape.js';
import { createdDevices } from './init-node.js';

export interface InitialDevice extends DeviceShapeSpec {
  readonly capacityGiB: number;
  readonly type: 'TLC' | 'QLC';
  readonly serial?: string;
}

/** Runs one admin command (`weka-sim --state DIR COMMAND ARGS...`) and returns its stdout, or throws. */
export type AdminRunner = (command: 'init-node' | 'device', args: string[]) => Promise<string>;

export async function initNodeDevices(devices: readonly InitialDevice[], run: AdminRunner): Promise<void> {
  const specs = devices.map((d) => `${d.path}:${d.capacityGiB}:${d.type}${d.serial ? `:${d.serial}` : ''}`);
  const created = createdDevices(
    await run(
      'init-node',
      specs.flatMap((spec) => ['--device', spec]),
    ),
  );
  for (const device of devices.filter((d) => created.includes(d.path))) {
    const shape = deviceShapeArgs(device);
    if (shape) await run('device', shape);
  }
}
