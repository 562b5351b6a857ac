// Shims that make the simulator answer as `weka-sign-drive`, `weka`, `lsblk` and `nsenter`. The
// local control plane puts their directory first on the PATH of each fake node's kwok and sets
// WEKA_SIM_STATE to the node's state directory, so a command exec'd into a pod on that node reaches the simulator with
// that node's state: the operator's real exec path is the one under test.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `tsc -p tsconfig.build.json` puts the simulator entry point, relative to the repo root. */
export const SIMULATOR_MAIN_RELATIVE = 'dist/deploy/local/weka-sim/main.js';

export const SHIMMED_TOOLS = ['weka-sign-drive', 'weka', 'lsblk', 'nsenter'] as const;

export interface ShimOptions {
  /** Node binary the shims run; defaults to the one running this code. */
  readonly nodePath?: string;
  /** Extra node arguments, e.g. ['--import', 'tsx'] to run main.ts without building. */
  readonly nodeArgs?: readonly string[];
}

/**
 * Absolute path of the compiled simulator (the package's `weka-sim` bin). Absolute because the
 * shims run with whatever working directory kwok gives them. Works whether this module runs from
 * dist/ or from source under tsx.
 */
export function simulatorMainPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const compiledDir = join('dist', 'deploy', 'local', 'weka-sim');
  if (here.endsWith(sep + compiledDir)) return join(here, 'main.js');
  return resolve(here, '..', '..', '..', SIMULATOR_MAIN_RELATIVE);
}

export async function writeSimulatorShims(dir: string, simMainJs: string, options: ShimOptions = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  const node = options.nodePath ?? process.execPath;
  const command = [node, ...(options.nodeArgs ?? []), resolve(simMainJs)].map(shellQuote).join(' ');
  for (const tool of SHIMMED_TOOLS) {
    const path = join(dir, tool);
    await writeFile(path, shimScript(tool, command));
    await chmod(path, 0o755);
  }
}

function shimScript(tool: string, command: string): string {
  return `#!/bin/sh
# ${tool}: routes to the Weka simulator for the node named by WEKA_SIM_STATE (written by writeSimulatorShims).
if [ -z "\${WEKA_SIM_STATE:-}" ]; then
  echo "${tool} (weka-sim shim): WEKA_SIM_STATE is not set, so there is no node state to act on" >&2
  exit 78
fi
# WEKA_SIM_DEVICE_MAP: where the pod sees the node's devices it has as block volumes (set per pod by kwok's Exec).
exec ${command} --state "$WEKA_SIM_STATE" \${WEKA_SIM_DEVICE_MAP:+--device-map "$WEKA_SIM_DEVICE_MAP"} -- ${tool} "$@"
`;
}

/** Single-quotes a word for sh: the only character to escape inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
