// The simulated nsenter, for the one use the operator has for it: `nsenter --mount --pid --target 1
// -- lsblk ...` from a hostPID pod, to see the host's block devices and mounts. From a pod without
// hostPID, PID 1 is the pod's own first process, so lsblk runs in the pod's mount namespace and the
// host's mounts are not there (`view`). Anything else (another target, other namespaces, another
// command) is refused rather than half-simulated.
import { runLsblk, type MountView } from './lsblk.js';
import { EXIT_USAGE, SimRefusal, ToolExit, UsageError, type ToolOutput } from './outcome.js';
import type { NodeView } from './node-view.js';

const ONLY = 'the simulated nsenter takes exactly --mount, --pid and --target 1';
const OPTIONS: Record<string, 'mount' | 'pid' | 'target'> = {
  '--mount': 'mount',
  '-m': 'mount',
  '--pid': 'pid',
  '-p': 'pid',
  '--target': 'target',
  '-t': 'target',
};

export function runNsenter(args: readonly string[], node: NodeView, view: MountView): ToolOutput {
  const seen = new Set<string>();
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    let arg = args[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    let value: string | undefined;
    if (arg.startsWith('--target=')) [arg, value] = ['--target', arg.slice('--target='.length)];
    else if (/^-t./.test(arg)) [arg, value] = ['-t', arg.slice(2)];
    const option = OPTIONS[arg];
    if (!option) throw new UsageError(`unsupported option '${args[i]}'; ${ONLY}`);
    if (seen.has(option)) throw new UsageError(`option '${arg}' given twice`);
    seen.add(option);
    if (option === 'target') {
      value ??= args[++i];
      if (value === undefined) throw new UsageError(`option '${arg}' requires an argument`);
      if (value !== '1')
        throw new UsageError(`only PID 1's namespaces can be entered (--target 1), not ${JSON.stringify(value)}`);
    }
  }
  const missing = ['mount', 'pid', 'target'].filter((option) => !seen.has(option));
  if (missing.length > 0) throw new UsageError(`missing --${missing.join(', --')}; ${ONLY}`);
  const [command, ...rest] = args.slice(i);
  if (command === undefined) throw new UsageError('no command given; the simulated nsenter runs only lsblk');
  if (command !== 'lsblk' && !/^\/(usr\/)?s?bin\/lsblk$/.test(command))
    throw new SimRefusal(`the simulator runs only lsblk in the host's namespaces, not ${JSON.stringify(command)}`);
  try {
    return runLsblk(rest, node, view);
  } catch (err) {
    // lsblk's own messages, as nsenter passes its child's stderr through.
    if (err instanceof UsageError) throw new ToolExit(EXIT_USAGE, `lsblk: ${err.message}\n`);
    throw err;
  }
}
