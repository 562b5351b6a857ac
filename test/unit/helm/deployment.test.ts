// The chart's Deployment: hardened pod, probes on the operator's HTTP port, and an environment
// that the operator's own configuration parser reads back as the chart's values.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseOperatorConfig, type OperatorConfig } from '../../../src/settings/operator-config.js';
import {
  HELM_BUILD_TIMEOUT_MS,
  helmBinary,
  onlyOne,
  renderChart,
  type RenderOptions,
} from '../../support/helm-chart.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  name: string;
  image: string;
  env: EnvVar[];
  ports?: Array<{ name: string; containerPort: number }>;
  securityContext: Record<string, unknown>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Volume {
  name: string;
  emptyDir?: object;
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
}
interface Deployment {
  spec: {
    replicas: number;
    strategy: { type: string; rollingUpdate?: { maxSurge: number; maxUnavailable: number } };
    template: { spec: { securityContext: Record<string, unknown>; containers: Container[]; volumes: Volume[] } };
  };
}

async function deployment(o: RenderOptions = {}): Promise<{ d: Deployment; c: Container }> {
  const d = onlyOne(await renderChart(o), 'Deployment') as unknown as Deployment;
  const c = d.spec.template.spec.containers[0];
  if (!c || d.spec.template.spec.containers.length !== 1) throw new Error('expected one container');
  return { d, c };
}

/** The container's environment as the operator process would see it (secrets as placeholders). */
function envOf(c: Container): Record<string, string> {
  return Object.fromEntries(
    c.env.map((e) => [
      e.name,
      e.value ?? `<secret ${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}>`,
    ]),
  );
}

function parsedConfig(c: Container): OperatorConfig {
  const parsed = parseOperatorConfig(envOf(c));
  if (!parsed.ok) throw new Error(`the chart's environment does not parse: ${parsed.errors.join('; ')}`);
  return parsed.config;
}

beforeAll(() => helmBinary(), HELM_BUILD_TIMEOUT_MS);

describe("the chart's Deployment", () => {
  it('runs two replicas and surges before it takes a worker away during an upgrade', async () => {
    const { d } = await deployment();
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });

  it('runs as a non-root user with a read-only root filesystem, no privilege escalation, no capabilities and the RuntimeDefault seccomp profile', async () => {
    const { d, c } = await deployment();
    expect(d.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(c.securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('gives the read-only container a writable /tmp', async () => {
    const { d, c } = await deployment();
    const mount = c.volumeMounts.find((m) => m.mountPath === '/tmp');
    expect(mount).toBeDefined();
    expect(d.spec.template.spec.volumes.find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();
  });

  it('probes /healthz and /readyz on the port the operator listens on, on every interface', async () => {
    const { c } = await deployment({ values: { http: { port: 9191 } } });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 9191, protocol: 'TCP' }]);
    expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(parsedConfig(c).httpPort).toBe(9191);
    expect(envOf(c).WEKA_HTTP_ADDRESS).toBe('0.0.0.0');
  });

  it('sets a memory limit and requests', async () => {
    const { c } = await deployment();
    expect(c.resources.limits?.memory).toBeDefined();
    expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
  });

  it('uses the chart appVersion as the default image tag', async () => {
    const { c } = await deployment({ values: { image: { repository: 'registry.example/weka-drives-operator' } } });
    expect(c.image).toBe('registry.example/weka-drives-operator:0.1.0');
  });
});

describe("the chart's operator settings", () => {
  it('default to tlc 1 : qlc 10, 8 virtual drives per core, the per-type minimum enforced, log level info', async () => {
    const config = parsedConfig((await deployment({ namespace: 'weka-system' })).c);
    expect(config).toMatchObject({
      settings: {
        driveTypesRatio: { tlc: 1, qlc: 10 },
        maxVirtualDrivesPerCore: 8,
        enforceMinDrivesPerTypePerCore: true,
      },
      logLevel: 'info',
      taskQueue: 'weka-drives',
      temporalNamespace: 'default',
      operatorNamespace: 'weka-system',
      proxyImage: 'quay.io/weka.io/weka-in-container:4.4.10.183',
      allowedImages: ['quay.io/weka.io/weka-in-container'],
      runWorker: true,
      runWatcher: true,
      nodeLossGraceSeconds: 300,
    });
  });

  it('reach the operator as set, including false and the explicit operator namespace', async () => {
    const values = {
      temporal: { address: 'temporal.example:7233', namespace: 'weka-prod', taskQueue: 'weka-drives-blue' },
      settings: {
        driveTypesRatio: { tlc: 3, qlc: 0 },
        maxVirtualDrivesPerCore: 4,
        enforceMinDrivesPerTypePerCore: false,
      },
      logLevel: 'debug',
      operatorNamespace: 'weka-proxies',
      proxyImage: 'registry.example/weka-in-container:4.4.99',
      allowedImages: ['quay.io/weka.io/weka-in-container', 'registry.example/weka-in-container'],
      run: { watcher: false },
    };
    const config = parsedConfig((await deployment({ values })).c);
    expect(config).toMatchObject({
      temporalAddress: 'temporal.example:7233',
      temporalNamespace: 'weka-prod',
      taskQueue: 'weka-drives-blue',
      settings: {
        driveTypesRatio: { tlc: 3, qlc: 0 },
        maxVirtualDrivesPerCore: 4,
        enforceMinDrivesPerTypePerCore: false,
      },
      logLevel: 'debug',
      operatorNamespace: 'weka-proxies',
      proxyImage: 'registry.example/weka-in-container:4.4.99',
      allowedImages: ['quay.io/weka.io/weka-in-container', 'registry.example/weka-in-container'],
      runWorker: true,
      runWatcher: false,
    });
  });

  it('mount the Temporal TLS Secret and point the operator at its files', async () => {
    const { d, c } = await deployment({
      values: { temporal: { tls: { existingSecret: 'temporal-mtls', serverName: 'temporal.internal' } } },
    });
    const config = parsedConfig(c);
    const mount = c.volumeMounts.find((m) => m.name === 'temporal-tls');
    expect(mount?.readOnly).toBe(true);
    expect(config.temporalTlsCertPath).toBe(`${mount?.mountPath}/tls.crt`);
    expect(config.temporalTlsKeyPath).toBe(`${mount?.mountPath}/tls.key`);
    expect(config.temporalTlsCaPath).toBe(`${mount?.mountPath}/ca.crt`);
    expect(config.temporalTlsServerName).toBe('temporal.internal');
    const volume = d.spec.template.spec.volumes.find((v) => v.name === 'temporal-tls');
    expect(volume?.secret?.secretName).toBe('temporal-mtls');
    expect(volume?.secret?.items?.map((i) => i.key)).toEqual(['tls.crt', 'tls.key', 'ca.crt']);
  });

  it('leave out the CA file when the server has a publicly signed certificate', async () => {
    const { d, c } = await deployment({ values: { temporal: { tls: { existingSecret: 'cloud-mtls', caKey: '' } } } });
    expect(parsedConfig(c).temporalTlsCaPath).toBeUndefined();
    expect(
      d.spec.template.spec.volumes.find((v) => v.name === 'temporal-tls')?.secret?.items?.map((i) => i.key),
    ).toEqual(['tls.crt', 'tls.key']);
  });

  it('refuse a client certificate without its key', async () => {
    await expect(deployment({ values: { temporal: { tls: { existingSecret: 'x', keyKey: '' } } } })).rejects.toThrow(
      /certKey and temporal.tls.keyKey go together/,
    );
  });

  it('read the Temporal API key from its Secret, never from values', async () => {
    const { c } = await deployment({
      values: { temporal: { apiKey: { existingSecret: 'temporal-cloud', key: 'token' } } },
    });
    expect(c.env.find((e) => e.name === 'TEMPORAL_API_KEY')).toEqual({
      name: 'TEMPORAL_API_KEY',
      valueFrom: { secretKeyRef: { name: 'temporal-cloud', key: 'token' } },
    });
    expect(parsedConfig(c).temporalApiKey).toBe('<secret temporal-cloud/token>');
  });

  it('cover every environment variable the operator reads', async () => {
    const source = readFileSync(
      fileURLToPath(new URL('../../../src/settings/operator-config.ts', import.meta.url)),
      'utf8',
    );
    const read = new Set(
      [...source.matchAll(/\b(?:text|optional|integer|bool)\('([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]!),
    );
    expect(read.size).toBeGreaterThan(10);
    const everything = {
      temporal: { tls: { existingSecret: 'tls', serverName: 'x' }, apiKey: { existingSecret: 'key' } },
    };
    const set = Object.keys(envOf((await deployment({ values: everything })).c));
    expect([...read].filter((name) => !set.includes(name))).toEqual([]);
  });
});

describe('the chart', () => {
  it('refuses Kubernetes before 1.31, which lacks the field selectors the operator lists WekaContainers by', async () => {
    await expect(renderChart({ kubeVersion: 'v1.30.9' })).rejects.toThrow(/requires kubeVersion: >=1.31/);
  });
});
