// kube-scheduler and kube-controller-manager beside the apiserver, so that scheduling (extended
// resources included), PersistentVolumeClaim binding, garbage collection of owned objects and
// ResourceQuota usage are Kubernetes' own. Both talk to the apiserver with the admin kubeconfig and
// serve their health checks on loopback.
import { request } from 'node:https';
import { join } from 'node:path';
import { startServer, waitUntilReady, type ServerProcess } from './processes.js';

/**
 * The controllers the controller manager runs. The node lifecycle controller is left out: kwok
 * renews no node lease here (its heartbeats are off to spare the apiserver), so that controller
 * would mark every node unreachable and evict its pods; the tests take a node down themselves
 * (ControlPlane.stopNodeKubelet). Nothing here issues service-account tokens either (the apiserver
 * runs without the ServiceAccount admission plugin), and no pod is made by a workload controller.
 * The disruption controller keeps the WekaClusters' PodDisruptionBudgets' status, which the
 * eviction API (`kubectl drain`) consults.
 */
export const CONTROLLERS = [
  'garbage-collector-controller',
  'resourcequota-controller',
  'namespace-controller',
  'persistentvolume-binder-controller',
  'persistentvolume-protection-controller',
  'persistentvolumeclaim-protection-controller',
  'disruption-controller',
] as const;

export interface KubeControllerOptions {
  binary: string;
  kubeconfigPath: string;
  /** Loopback port of its health checks (HTTPS with a self-signed certificate). */
  port: number;
  certDir: string;
  logDir: string;
  deadlineMs: number;
}

/** Answers whether GET https://127.0.0.1:port/healthz is 200 (the certificate is self-signed). */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/healthz', method: 'GET', rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function serving(o: KubeControllerOptions): string[] {
  return [
    `--kubeconfig=${o.kubeconfigPath}`,
    // One of each runs here, and a restart must not wait out a lease left by the one before.
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${o.port}`,
    `--cert-dir=${o.certDir}`,
    '--profiling=false',
  ];
}

async function start(name: string, args: string[], o: KubeControllerOptions): Promise<ServerProcess> {
  const proc = startServer({ name, command: o.binary, args, logPath: join(o.logDir, `${name}.log`) });
  await waitUntilReady(proc, () => healthy(o.port), o.deadlineMs);
  return proc;
}

export function startScheduler(o: KubeControllerOptions): Promise<ServerProcess> {
  return start('kube-scheduler', serving(o), o);
}

export function startControllerManager(o: KubeControllerOptions): Promise<ServerProcess> {
  return start(
    'kube-controller-manager',
    [
      ...serving(o),
      `--controllers=${CONTROLLERS.join(',')}`,
      // Each controller uses the admin credentials; no service accounts need tokens for them.
      '--use-service-account-credentials=false',
      // The garbage collector and quota controllers rediscover resources (the CRDs) this often.
      '--resource-quota-sync-period=30s',
    ],
    o,
  );
}
