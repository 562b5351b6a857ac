// What the sandbox prints before it does anything: its options (--help), and its plan: which servers
// are cached and which it builds first (with the measured cold build times), then the steps.
import type { ToolName, ToolState } from './tools.js';

export const SANDBOX_USAGE = `Usage: npm run sandbox [-- options]
  --keep          keep the state (in .tmp/sandbox) for the next start
  --until-ready   exit 0 once every drive container is Ready; non-zero, with the reason, on timeout
  --timeout S     how long --until-ready waits (default 300), counted from the moment the control
                  plane is up: the first run's server builds and the control plane's start-up are
                  not part of it
  --help          print this`;

export interface SandboxPlan {
  cacheDir: string;
  tools: ToolState[];
  /** Seconds each tool to build takes cold (buildEstimates). */
  estimates: Map<ToolName, number>;
  nodes: string[];
  operations: number;
  clusters: { namespace: string; name: string; driveContainers: number }[];
  untilReady: boolean;
  timeoutSeconds: number;
  /** Where the state is kept (--keep). */
  keptIn?: string | undefined;
}

/** "about 90 s", "about 8 min": the figures are measurements of one machine, not promises. */
export function roughDuration(seconds: number): string {
  if (seconds < 120) return `about ${Math.max(10, Math.round(seconds / 10) * 10)} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

const pad = (text: string, width: number): string => text.padEnd(width);

function serverLines(plan: SandboxPlan): string[] {
  const toBuild = plan.tools.filter((t) => !t.cached);
  if (toBuild.length === 0)
    return [`1. The control plane's servers: all ${plan.tools.length} cached in ${plan.cacheDir}, nothing to build.`];
  const total = toBuild.reduce((sum, t) => sum + (plan.estimates.get(t.name) ?? 0), 0);
  const width = Math.max(...plan.tools.map((t) => t.name.length)) + 2;
  return [
    `1. Build the control plane's servers from Go modules into ${plan.cacheDir}`,
    `   (${toBuild.length} of ${plan.tools.length} to build, ${roughDuration(total)} in all on 2 cores, once per machine:`,
    `   later runs reuse them). A line comes when each build starts and ends, and every 15 s between.`,
    ...plan.tools.map((t) =>
      t.cached
        ? `     ${pad(t.name, width)}cached`
        : `     ${pad(t.name, width)}to build, ${roughDuration(plan.estimates.get(t.name) ?? 0)}; log: ${t.buildLog}`,
    ),
  ];
}

export function renderSandboxPlan(plan: SandboxPlan): string {
  const containers = plan.clusters.reduce((sum, c) => sum + c.driveContainers, 0);
  const lines = [
    'weka-drives sandbox: the plan',
    ...serverLines(plan),
    '2. Start the local control plane on 127.0.0.1: etcd, kube-apiserver, kube-scheduler,',
    '   kube-controller-manager and Temporal (seconds once the servers are built).',
    `3. Add ${plan.nodes.length} fake nodes with simulated NVMe drives (${plan.nodes.join(', ')}), start the`,
    `   operator, and sign the drives (${plan.operations} WekaManualOperations).`,
    `4. Create ${plan.clusters.length} WekaClusters with ${containers} drive containers in all, print the Temporal UI`,
    '   address and a kubeconfig, and show the progress live:',
    `   ${plan.clusters.map((c) => `${c.namespace}/${c.name} (${c.driveContainers})`).join(', ')}.`,
    plan.untilReady
      ? `--until-ready: exits 0 once all ${containers} are Ready; exits 1 if they are not ${plan.timeoutSeconds} s after the control plane is up.`
      : 'Ctrl-C stops everything.',
  ];
  if (plan.keptIn !== undefined) lines.push(`--keep: the state stays in ${plan.keptIn} for the next start.`);
  return lines.join('\n');
}
