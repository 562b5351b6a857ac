// The chart's Deployment: hardened pod, probes on the operator's HTTP port, and an environment
// that the operator's own configuration parser reads back as the chart's values.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseOperatorConfig, type OperatorConfig } from '../../../src/operator/config.js';
import { temporalTarget } from '../../../deploy/operator/temporal-connection.js';
import { POD_PRIORITY_CLASS, podPriorityClassObject } from '../../../src/manifests/pod-resources.js';
import {
  CHART_DIR,
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
    const chart = readFileSync(`${CHART_DIR}/Chart.yaml`, 'utf8');
    const appVersion = /^appVersion: "(.+)"$/m.exec(chart)?.[1];
    expect(appVersion).toBeDefined();
    expect(c.image).toBe(`registry.example/weka-drives-operator:${appVersion}`);
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
      operatorNamespace: 'weka-system',
      proxyImage: 'quay.io/weka.io/weka-in-container:4.4.10.183',
      allowedImages: ['quay.io/weka.io/weka-in-container'],
      runWorker: true,
      runWatcher: true,
      nodeLossGraceSeconds: 300,
      sdkMetricsBufferSize: 100_000,
      maxCachedWorkflows: 250,
      maxConcurrentBringUps: 125,
      bringUpHoldSeconds: 60,
      podPriorityClass: POD_PRIORITY_CLASS,
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
      maxCachedWorkflows: 40,
      maxConcurrentBringUps: 7,
      bringUpHoldSeconds: 300,
    };
    const { c } = await deployment({ values });
    const temporal = temporalTarget({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml', ...envOf(c) });
    expect(temporal.ok && { address: temporal.target.address, namespace: temporal.target.namespace }).toEqual({
      address: 'temporal.example:7233',
      namespace: 'weka-prod',
    });
    expect(parsedConfig(c)).toMatchObject({
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
      maxCachedWorkflows: 40,
      maxConcurrentBringUps: 7,
      bringUpHoldSeconds: 300,
    });
  });

  it('leave the bring-up limit at half the cache unless it is set', async () => {
    const config = parsedConfig((await deployment({ values: { maxCachedWorkflows: 25 } })).c);
    expect(config).toMatchObject({ maxCachedWorkflows: 25, maxConcurrentBringUps: 12 });
  });

  it('cover every environment variable the operator reads', async () => {
    const source = readFileSync(fileURLToPath(new URL('../../../src/operator/config.ts', import.meta.url)), 'utf8');
    // TEMPORAL_* are Temporal's standard variables (@temporalio/envconfig), checked above.
    const read = new Set(
      [...source.matchAll(/\b(?:text|given|optional|integer|bool)\(\s*'([A-Z][A-Z0-9_]+)'/g)]
        .map((m) => m[1]!)
        .filter((name) => !name.startsWith('TEMPORAL_'))
        // For an operator run from source (the sandbox, the tests): the image's loads the bundle built into it.
        .filter((name) => name !== 'WEKA_WORKFLOW_BUNDLE'),
    );
    expect(read.size).toBeGreaterThan(10);
    const everything = {
      temporal: { tls: { existingSecret: 'tls', serverName: 'x' }, apiKey: { existingSecret: 'key' } },
      maxConcurrentBringUps: 5,
    };
    const set = Object.keys(envOf((await deployment({ values: everything })).c));
    expect([...read].filter((name) => !set.includes(name))).toEqual([]);
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
  });
});

/** Temporal's standard client variables, as @temporalio/envconfig reads them. */
const TEMPORAL_ENVCONFIG_VARIABLES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
];
const TLS_DIR = '/etc/weka-drives/temporal-tls';

/** The container's TEMPORAL_* variables. */
async function temporalEnv(temporal: Record<string, unknown>): Promise<Record<string, string>> {
  const env = envOf((await deployment({ values: { temporal } })).c);
  return Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('TEMPORAL_')));
}

describe("the chart's Temporal connection", () => {
  const plain = { TEMPORAL_ADDRESS: 'temporal-frontend.temporal.svc:7233', TEMPORAL_NAMESPACE: 'default' };
  it.each([
    ['plain gRPC by default', {}, plain],
    [
      'TLS against the system CAs with tls.enabled alone',
      { tls: { enabled: true } },
      { ...plain, TEMPORAL_TLS: 'true' },
    ],
    [
      'mutual TLS with the client pair and the CA from the Secret',
      { tls: { existingSecret: 'temporal-mtls' } },
      {
        ...plain,
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CLIENT_CERT_PATH: `${TLS_DIR}/tls.crt`,
        TEMPORAL_TLS_CLIENT_KEY_PATH: `${TLS_DIR}/tls.key`,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${TLS_DIR}/ca.crt`,
      },
    ],
    [
      'server-only TLS with a CA',
      { tls: { existingSecret: 'temporal-ca', certKey: '', keyKey: '' } },
      { ...plain, TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${TLS_DIR}/ca.crt` },
    ],
    [
      'mutual TLS against a publicly signed server (no CA)',
      { tls: { existingSecret: 'cloud-mtls', caKey: '' } },
      {
        ...plain,
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CLIENT_CERT_PATH: `${TLS_DIR}/tls.crt`,
        TEMPORAL_TLS_CLIENT_KEY_PATH: `${TLS_DIR}/tls.key`,
      },
    ],
    [
      'TLS with a server name alone',
      { tls: { serverName: 'temporal.internal' } },
      { ...plain, TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' },
    ],
    [
      'TLS with an API key',
      { address: 'us-east-1.aws.api.temporal.io:7233', namespace: 'weka.a1b2c', apiKey: { existingSecret: 'cloud' } },
      {
        TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
        TEMPORAL_NAMESPACE: 'weka.a1b2c',
        TEMPORAL_TLS: 'true',
        TEMPORAL_API_KEY: '<secret cloud/api-key>',
      },
    ],
  ])('%s', async (_name, temporal, expected) => {
    expect(await temporalEnv(temporal)).toEqual(expected);
  });

  it('are read by the operator as the connection they describe', async () => {
    const cases: Array<[Record<string, unknown>, boolean]> = [
      [{}, false],
      [{ tls: { enabled: true } }, true],
      [{ tls: { serverName: 'temporal.internal' } }, true],
      [{ apiKey: { existingSecret: 'cloud' } }, true],
    ];
    for (const [temporal, tls] of cases) {
      const result = temporalTarget({
        TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
        ...(await temporalEnv(temporal)),
      });
      expect(result.ok && result.target.tls, JSON.stringify(temporal)).toBe(tls);
    }
  });

  it("set only Temporal's standard variables", async () => {
    const everything = {
      tls: { enabled: true, existingSecret: 'tls', serverName: 'x' },
      apiKey: { existingSecret: 'key' },
    };
    expect(Object.keys(await temporalEnv(everything)).sort()).toEqual([...TEMPORAL_ENVCONFIG_VARIABLES].sort());
  });

  it('mount the TLS Secret read-only, with only the keys it names, where the paths point', async () => {
    const { d, c } = await deployment({ values: { temporal: { tls: { existingSecret: 'cloud-mtls', caKey: '' } } } });
    expect(c.volumeMounts.find((m) => m.name === 'temporal-tls')).toEqual({
      name: 'temporal-tls',
      mountPath: TLS_DIR,
      readOnly: true,
    });
    const volume = d.spec.template.spec.volumes.find((v) => v.name === 'temporal-tls');
    expect(volume?.secret?.secretName).toBe('cloud-mtls');
    expect(volume?.secret?.items?.map((i) => i.key)).toEqual(['tls.crt', 'tls.key']);
  });
});

interface PodSpecExtras {
  spec: {
    template: {
      spec: {
        priorityClassName?: string;
        topologySpreadConstraints?: Array<Record<string, unknown>>;
      };
      metadata: { labels: Record<string, string> };
    };
    selector: { matchLabels: Record<string, string> };
  };
}
const podSpec = async (o: RenderOptions = {}) =>
  (onlyOne(await renderChart(o), 'Deployment') as unknown as PodSpecExtras).spec;
const budgets = async (o: RenderOptions = {}) =>
  (await renderChart(o)).filter((m) => m.kind === 'PodDisruptionBudget') as unknown as Array<{
    metadata: { namespace: string };
    spec: {
      maxUnavailable?: number | string;
      minAvailable?: unknown;
      selector: { matchLabels: Record<string, string> };
    };
  }>;

describe("the chart's scheduling and disruption settings", () => {
  it("let voluntary evictions take one operator pod at a time, selecting the Deployment's pods", async () => {
    const [budget, ...more] = await budgets({ namespace: 'weka-system' });
    expect(more).toEqual([]);
    expect(budget?.metadata.namespace).toBe('weka-system');
    expect(budget?.spec.maxUnavailable).toBe(1);
    expect(budget?.spec.minAvailable).toBeUndefined();
    expect(budget?.spec.selector.matchLabels).toEqual((await podSpec()).selector.matchLabels);
  });

  it.each([
    ['one replica, where it would block every node drain', { replicas: 1 }],
    ['podDisruptionBudget.enabled=false', { podDisruptionBudget: { enabled: false } }],
  ])('render no PodDisruptionBudget with %s', async (_name, values) => {
    expect(await budgets({ values })).toEqual([]);
  });

  it('take maxUnavailable as a percentage too', async () => {
    const [budget] = await budgets({ values: { replicas: 4, podDisruptionBudget: { maxUnavailable: '25%' } } });
    expect(budget?.spec.maxUnavailable).toBe('25%');
  });

  it("spread the replicas over nodes when they can, by the pods' own labels", async () => {
    const spec = await podSpec();
    expect(spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: spec.selector.matchLabels },
      },
    ]);
    expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
  });

  it('take spread constraints from the values, keeping a given labelSelector, and none with []', async () => {
    const zones = {
      maxSkew: 2,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { team: 'storage' } },
    };
    expect(
      (await podSpec({ values: { topologySpreadConstraints: [zones] } })).template.spec.topologySpreadConstraints,
    ).toEqual([zones]);
    expect(
      (await podSpec({ values: { topologySpreadConstraints: [] } })).template.spec.topologySpreadConstraints,
    ).toBeUndefined();
  });

  it("set the pods' priority class only when one is given", async () => {
    expect((await podSpec()).template.spec.priorityClassName).toBeUndefined();
    expect(
      (await podSpec({ values: { priorityClassName: 'system-cluster-critical' } })).template.spec.priorityClassName,
    ).toBe('system-cluster-critical');
  });
});

describe("the chart's priority class of the drive containers' and ssdproxies' pods", () => {
  it('is made as the operator and the local control plane define it, and named to the operator', async () => {
    const docs = await renderChart();
    const made = onlyOne(docs, 'PriorityClass') as unknown as Record<string, unknown> & {
      metadata: { name: string; labels?: unknown };
    };
    const { labels: _labels, ...metadata } = made.metadata;
    expect({ ...made, metadata }).toEqual(podPriorityClassObject());
    expect(parsedConfig((await deployment()).c).podPriorityClass).toBe(POD_PRIORITY_CLASS);
  });

  it('is an existing one named in the values, or none with ""', async () => {
    const values = { podPriorityClass: { create: false, name: 'storage-critical' } };
    expect((await renderChart({ values })).filter((d) => d.kind === 'PriorityClass')).toEqual([]);
    expect(parsedConfig((await deployment({ values })).c).podPriorityClass).toBe('storage-critical');
    const none = { podPriorityClass: { create: true, name: '' } };
    expect((await renderChart({ values: none })).filter((d) => d.kind === 'PriorityClass')).toEqual([]);
    expect(parsedConfig((await deployment({ values: none })).c).podPriorityClass).toBe('');
  });
});

describe('the chart', () => {
  it('refuses Kubernetes before 1.31, which lacks the field selectors the operator lists WekaContainers by', async () => {
    await expect(renderChart({ kubeVersion: 'v1.30.9' })).rejects.toThrow(/requires kubeVersion: >=1.31/);
  });
});
