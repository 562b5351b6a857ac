// The README's main job, as a script would run it: `npm run sandbox -- --until-ready` prints its
// plan first, brings its own control plane, the operator, the signing and four clusters to Ready,
// then exits 0 and leaves no process behind. Its output is a log here (no terminal): each change of
// the view is printed once.
import { execFile, spawn } from 'node:child_process';
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { ROLE_LABEL } from '../../src/api/names.js';
import { parseSignDriveList } from '../../src/weka/index.js';
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { eventually } from '../support/async.js';
import { kstatusOf } from '../support/kstatus.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('sandbox', () => {
  it('reaches Ready with --until-ready and exits 0', { timeout: 420_000 }, async () => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'deploy/local/sandbox.ts', '--until-ready', '--timeout', '360'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    let firstOutputMs: number | undefined;
    const collect = (c: Buffer) => {
      firstOutputMs ??= Date.now() - started;
      output += c.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    const tail = output.split('\n').slice(-60).join('\n');
    expect(code, tail).toBe(0);
    expect(output).toMatch(/^weka-drives sandbox: the plan\n1\. The control plane's servers: all 6 cached in /);
    expect(output.indexOf('--until-ready: exits 0 once all 12 are Ready')).toBeLessThan(
      output.indexOf('control plane:'),
    );
    expect(output).toMatch(
      /sandbox Ready: 12 drive containers in 4 clusters, \d+ s after the control plane came up \(\d+ s in all\)/,
    );
    expect(output).toMatch(/Temporal UI:\s+http:\/\/127\.0\.0\.1:\d+/);
    // Each view printed differs from the one before in more than its clock.
    const views = output
      .split(/^(?=weka-drives sandbox — )/m)
      .slice(1)
      .map((v) =>
        v
          .replace(/\(\d+ s\)/, '')
          .split('\n')
          .filter((line) => !line.startsWith('… '))
          .join('\n')
          .trim(),
      );
    expect(views.length).toBeGreaterThan(1);
    for (let i = 1; i < views.length; i++) expect(views[i], `view ${i} repeats view ${i - 1}`).not.toBe(views[i - 1]);
    console.log(
      `sandbox printed its plan after ${firstOutputMs} ms, reached Ready and stopped in ${Math.round((Date.now() - started) / 1000)} s, printing ${views.length} views; last view:\n${tail}`,
    );
    // Nothing of its control plane survives it (every server is given paths in its data directory).
    const dataDir = /logs:\s+(\S+)\/logs/.exec(output)?.[1];
    expect(dataDir, 'the sandbox prints where its logs are').toBeDefined();
    const left = await run('pgrep', ['-f', '-a', dataDir!]).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    expect(left).toBe('');
  });

  it(
    "grows and scales a cluster with the README's two kubectl patches, and the view follows",
    { timeout: 600_000 },
    async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'deploy/local/sandbox.ts'], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      try {
        const kubeconfig = await eventually(
          'the sandbox to print its kubeconfig',
          async () => /export KUBECONFIG=(\S+)/.exec(output)?.[1],
          240_000,
          { intervalMs: 500 },
        );
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfig);
        const custom = kc.makeApiClient(CustomObjectsApi);
        const group = { group: 'weka.weka.io', version: 'v1alpha1' };
        const analytics = { ...group, plural: 'wekaclusters', namespace: 'tenant-a', name: 'analytics' };
        const members = async () =>
          (
            (await custom.listNamespacedCustomObject({
              ...group,
              plural: 'wekacontainers',
              namespace: 'tenant-a',
              fieldSelector: 'spec.cluster=analytics',
            })) as { items: WekaContainer[] }
          ).items;
        /** What the cluster's status was at each look while it was not converged. */
        const unconverged: WekaCluster[] = [];
        /** The cluster Ready with `count` Ready members, each holding `gib`. */
        const converged = (count: number, gib: number) =>
          eventually(
            `analytics Ready with ${count} members of ${gib} GiB`,
            async () => {
              const c = (await custom.getNamespacedCustomObject(analytics)) as WekaCluster;
              const m = (await members()).filter((x) => !x.metadata.deletionTimestamp);
              const held = (x: WekaContainer) =>
                (x.status?.allocations?.virtualDrives ?? []).reduce((sum, v) => sum + v.capacityGiB, 0);
              const ok =
                c.status?.phase === 'Ready' &&
                m.length === count &&
                m.every((x) => x.status?.phase === 'Ready' && held(x) === gib);
              if (!ok) unconverged.push(c);
              return ok ? true : undefined;
            },
            300_000,
            { intervalMs: 1_000 },
          );
        await converged(3, 12000);
        // What the README says, as `kubectl patch --type merge` sends it.
        const patch = (template: Record<string, number>) =>
          custom.patchNamespacedCustomObject(
            { ...analytics, body: { spec: { dynamicTemplate: template } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        unconverged.length = 0;
        await patch({ containerCapacity: 16000 });
        await converged(3, 16000);
        // What a GitOps tool reads of the cluster while its members grow: at work, every time.
        expect(unconverged.length).toBeGreaterThan(0);
        expect(new Set((await kstatusOf(unconverged)).map((r) => r.status))).toEqual(new Set(['InProgress']));
        await patch({ driveContainers: 4 });
        await converged(4, 16000);
        await eventually(
          'the view to show it',
          async () => (/tenant-a\/analytics\s+Ready\s+4\/4 Ready\s+16000 GiB each/.test(output) ? true : undefined),
          30_000,
        );

        // Every object of the sandbox, settled, reads Current; a container refused for good, Failed with why.
        const settled = await eventually(
          'every sandbox object to read Current',
          async () => {
            const all = (
              await Promise.all(
                ['wekaclusters', 'wekacontainers', 'wekamanualoperations'].map(
                  async (plural) =>
                    ((await custom.listClusterCustomObject({ ...group, plural })) as { items: object[] }).items,
                ),
              )
            ).flat();
            const verdicts = await kstatusOf(all);
            return verdicts.every((v) => v.status === 'Current') ? all.length : undefined;
          },
          60_000,
          { intervalMs: 2_000 },
        );
        expect(settled).toBeGreaterThan(10);
        const refused = { ...group, plural: 'wekacontainers', namespace: 'tenant-a', name: 'twenty-on-one-core' };
        await custom.createNamespacedCustomObject({
          ...refused,
          body: {
            apiVersion: 'weka.weka.io/v1alpha1',
            kind: 'WekaContainer',
            metadata: { name: refused.name },
            spec: {
              mode: 'drive',
              nodeName: 'weka-node-1',
              image: 'quay.io/weka.io/weka-in-container:4.4.10.183',
              driveCores: 1,
              numDrives: 20,
              driveCapacity: 100,
            },
          },
        });
        const failed = await eventually(
          'the refused container to read Failed',
          async () => {
            const verdict = (await kstatusOf([await custom.getNamespacedCustomObject(refused)]))[0]!;
            return verdict.status === 'Failed' ? verdict : undefined;
          },
          120_000,
          { intervalMs: 1_000 },
        );
        expect(failed.message).toMatch(/at most 8 per drive core/);
        expect(((await custom.getNamespacedCustomObject(refused)) as WekaContainer).status?.phase).toBe('Refused');
        await custom.deleteNamespacedCustomObject(refused);

        // What a person sees with `kubectl exec` into a node's ssdproxy: the real tool's list, carrying
        // exactly the virtual drives the statuses of that node's containers hold, once all settle.
        const core = kc.makeApiClient(CoreV1Api);
        const exec = KubeExecTransport.fromKubeConfig(kc);
        const proxies = (await core.listPodForAllNamespaces({ labelSelector: `${ROLE_LABEL}=ssdproxy` })).items;
        expect(proxies.length).toBeGreaterThan(0);
        await eventually(
          "every node's devices to carry exactly the virtual drives its containers' statuses hold",
          async () => {
            const all = (
              (await custom.listClusterCustomObject({ ...group, plural: 'wekacontainers' })) as {
                items: WekaContainer[];
              }
            ).items;
            for (const pod of proxies) {
              const target = { namespace: pod.metadata!.namespace!, pod: pod.metadata!.name!, container: 'weka' };
              const listed = await exec.run(target, ['weka-sign-drive', 'list', '--json']);
              expect(listed.exitCode, listed.stderr).toBe(0);
              const onDevices = parseSignDriveList(listed.stdout).flatMap((d) =>
                d.virtualDrives.map((v) => v.virtualUUID),
              );
              const inStatuses = all
                .filter((c) => c.spec.nodeName === pod.spec!.nodeName)
                .flatMap((c) => (c.status?.allocations?.virtualDrives ?? []).map((v) => v.virtualUUID));
              if (JSON.stringify(onDevices.sort()) !== JSON.stringify(inStatuses.sort())) return undefined;
            }
            return true;
          },
          120_000,
          { intervalMs: 2_000 },
        );
      } finally {
        child.kill('SIGINT');
        const code = await exited;
        expect(code, output.split('\n').slice(-40).join('\n')).toBe(130);
      }
    },
  );
});
