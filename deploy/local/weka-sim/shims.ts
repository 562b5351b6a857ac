// Shims that make the simulator answer as `weka-sign-drive`, `weka`, `lsblk` and `nsenter`. The
// local control plane puts their directory first on the PATH of each fake node's kwok and sets
// WEKA_SIM_STATE to the node's state directory, so a command exec'd into a pod on that node reaches
// the simulator's server with that node's state: the operator's real exec path is the one under test.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT_CONFIG, EXIT_UNAVAILABLE } from './outcome.js';
import { SERVER_PORT_FILE } from './server.js';

export const SHIMMED_TOOLS = ['weka-sign-drive', 'weka', 'lsblk', 'nsenter'] as const;

/**
 * Writes one shim per tool, each sending `--state ... -- TOOL ARGS...` to the simulator's server
 * (server.ts), whose port it reads from SERVER_PORT_FILE in `dir` at every call: a server started
 * again on another port needs no new shims. The shims are bash scripts, for bash's /dev/tcp.
 */
export async function writeSimulatorShims(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const tool of SHIMMED_TOOLS) {
    const path = join(dir, tool);
    await writeFile(path, shimScript(tool, join(dir, SERVER_PORT_FILE)));
    await chmod(path, 0o755);
  }
}

function shimScript(tool: string, portFile: string): string {
  return `#!/bin/bash
# ${tool}: routes to the Weka simulator for the node named by WEKA_SIM_STATE (written by writeSimulatorShims).
if [ -z "\${WEKA_SIM_STATE:-}" ]; then
  echo "${tool} (weka-sim shim): WEKA_SIM_STATE is not set, so there is no node state to act on" >&2
  exit ${EXIT_CONFIG}
fi
# WEKA_SIM_DEVICE_MAP: where the pod sees the node's devices it has as block volumes; WEKA_SIM_HOST_PID:
# the pod shares the host's PID namespace (both set per pod by kwok's Exec). Every exec runs in a pod.
pod=--in-pod
[ -n "\${WEKA_SIM_HOST_PID:-}" ] && pod=--in-host-pid-pod
# NAME, PORT, AGENT_PORT, MANAGEMENT_IP, JOIN_IPS: the pod's own environment (kwok's Exec), from
# which its image sets its Weka container up.
args=(--state "$WEKA_SIM_STATE" "$pod" \${WEKA_SIM_DEVICE_MAP:+--device-map "$WEKA_SIM_DEVICE_MAP"}
  \${NAME:+--weka-name "$NAME"} \${PORT:+--weka-port "$PORT"} \${AGENT_PORT:+--agent-port "$AGENT_PORT"}
  \${MANAGEMENT_IP:+--management-ip "$MANAGEMENT_IP"} \${JOIN_IPS:+--join-ips "$JOIN_IPS"} -- ${tool} "$@")
port_file=${shellQuote(portFile)}
if ! { read -r port <"$port_file" && exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  echo "${tool} (weka-sim shim): the simulator's server (its port in $port_file) does not answer" >&2
  exit ${EXIT_UNAVAILABLE}
fi
printf '%s\\0' "\${#args[@]}" "\${args[@]}" >&3
if ! read -r code stderr_bytes <&3; then
  echo "${tool} (weka-sim shim): the simulator's server closed the connection without an answer" >&2
  exit ${EXIT_UNAVAILABLE}
fi
[ "$stderr_bytes" -gt 0 ] && head -c "$stderr_bytes" <&3 >&2
cat <&3
exit "$code"
`;
}

/** Single-quotes a word for sh: the only character to escape inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
