// Shims that make the simulator answer as `weka-sign-drive`, `weka`, `lsblk` and `nsenter`. The
// local control plane puts their directory first on the PATH of each fake node's kwok and sets
// WEKA_SIM_STATE to the node's state directory, so a command exec'd into a pod on that node reaches the simulator with
// that node's state: the operator's real exec path is the one under test.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SHIMMED_TOOLS = ['weka-sign-drive', 'weka', 'lsblk', 'nsenter'] as const;

/**
 * Writes one shim per tool, each running `node SIMULATOR_ARGS --state ... -- TOOL ARGS...`:
 * SIMULATOR_ARGS is simulatorArgs() of bundle.ts for the bundle, or a script's path (absolute:
 * the shims run in whatever working directory kwok gives them), after any node options.
 */
export async function writeSimulatorShims(
  dir: string,
  simulatorArgs: readonly string[],
  nodePath: string = process.execPath,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const command = [nodePath, ...simulatorArgs].map(shellQuote).join(' ');
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
# Node.js reads and parses NODE_EXTRA_CA_CERTS at every start (over 100 ms for a distribution's
# bundle), and the simulator dials nothing.
unset NODE_EXTRA_CA_CERTS
# WEKA_SIM_DEVICE_MAP: where the pod sees the node's devices it has as block volumes; WEKA_SIM_HOST_PID:
# the pod shares the host's PID namespace (both set per pod by kwok's Exec). Every exec runs in a pod.
pod=--in-pod
[ -n "\${WEKA_SIM_HOST_PID:-}" ] && pod=--in-host-pid-pod
# NAME, PORT, AGENT_PORT, MANAGEMENT_IP, JOIN_IPS: the pod's own environment (kwok's Exec), from
# which its image sets its Weka container up.
exec ${command} --state "$WEKA_SIM_STATE" "$pod" \${WEKA_SIM_DEVICE_MAP:+--device-map "$WEKA_SIM_DEVICE_MAP"} \\
  \${NAME:+--weka-name "$NAME"} \${PORT:+--weka-port "$PORT"} \${AGENT_PORT:+--agent-port "$AGENT_PORT"} \\
  \${MANAGEMENT_IP:+--management-ip "$MANAGEMENT_IP"} \${JOIN_IPS:+--join-ips "$JOIN_IPS"} -- ${tool} "$@"
`;
}

/** Single-quotes a word for sh: the only character to escape inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
