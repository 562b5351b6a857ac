// A real kube-apiserver on loopback, configured the way envtest runs it: client-certificate
// authentication, RBAC authorization, service-account keys, and kubelet (kwok) access over TLS.
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Pki } from './pki.js';
import { startServer, waitUntilReady, type ServerProcess } from './processes.js';

export interface ApiserverOptions {
  binary: string;
  pki: Pki;
  etcdUrl: string;
  port: number;
  certDir: string;
  logDir: string;
  deadlineMs: number;
  /** An audit policy file, and where the apiserver writes its audit events (JSON lines). */
  audit?: { policyFile: string; logFile: string };
}

export interface Apiserver {
  process: ServerProcess;
  url: string;
}

/** GET over TLS with the admin client certificate; resolves with status and body. */
export async function adminGet(url: string, pki: Pki): Promise<{ status: number; body: string }> {
  const [ca, cert, key] = await Promise.all([readFile(pki.caCert), readFile(pki.adminCert), readFile(pki.adminKey)]);
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, cert, key, method: 'GET', timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Lists the watch cache serves (resourceVersion=0): each answers 429 while its cache (re)initializes. */
const CACHED_LISTS = ['/api/v1/namespaces', '/api/v1/nodes', '/api/v1/pods', '/api/v1/configmaps'];

/**
 * Whether the apiserver serves requests: /readyz says so (etcd included), a read of an object
 * reaches etcd, and the watch caches of the core resources answer (after etcd restarts they list
 * everything anew, and answer 429 "storage is (re)initializing" meanwhile). The caches of other
 * resources (the CRDs') reinitialize alongside, but are not waited for.
 */
export async function apiserverUsable(url: string, pki: Pki): Promise<boolean> {
  if ((await adminGet(`${url}/readyz`, pki)).status !== 200) return false;
  if ((await adminGet(`${url}/api/v1/namespaces/default`, pki)).status !== 200) return false;
  for (const path of CACHED_LISTS) {
    if ((await adminGet(`${url}${path}?resourceVersion=0&limit=1`, pki)).status !== 200) return false;
  }
  return true;
}

export async function startApiserver(o: ApiserverOptions): Promise<Apiserver> {
  const url = `https://127.0.0.1:${o.port}`;
  const proc = startServer({
    name: 'kube-apiserver',
    command: o.binary,
    args: [
      `--etcd-servers=${o.etcdUrl}`,
      '--advertise-address=127.0.0.1',
      '--bind-address=127.0.0.1',
      `--secure-port=${o.port}`,
      `--cert-dir=${o.certDir}`,
      `--tls-cert-file=${o.pki.serverCert}`,
      `--tls-private-key-file=${o.pki.serverKey}`,
      `--client-ca-file=${o.pki.caCert}`,
      '--authorization-mode=RBAC',
      `--service-account-key-file=${o.pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${o.pki.serviceAccountKey}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      // Cluster IPs are bookkeeping here; nothing ever dials them.
      '--service-cluster-ip-range=10.96.0.0/24',
      '--endpoint-reconciler-type=none',
      '--allow-privileged=true',
      // No token controller runs (see CONTROLLERS), so pods must not wait for a token; and no node
      // lifecycle controller, which is what lifts the not-ready taint TaintNodesByCondition puts on
      // every new Node: the scheduler would never place a pod.
      '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      // On SIGTERM, end open watches (within 2 s) instead of leaving the HTTP server's shutdown to
      // wait for them: with kwok's watches open, a restart would otherwise wait for its SIGKILL.
      '--shutdown-watch-termination-grace-period=2s',
      // exec and logs go to the node's kubelet, which is the node's kwok on 127.0.0.1.
      `--kubelet-client-certificate=${o.pki.adminCert}`,
      `--kubelet-client-key=${o.pki.adminKey}`,
      `--kubelet-certificate-authority=${o.pki.caCert}`,
      '--kubelet-preferred-address-types=InternalIP',
      ...(o.audit
        ? [
            `--audit-policy-file=${o.audit.policyFile}`,
            `--audit-log-path=${o.audit.logFile}`,
            '--audit-log-format=json',
          ]
        : []),
    ],
    logPath: join(o.logDir, 'kube-apiserver.log'),
  });
  await waitUntilReady(proc, async () => (await adminGet(`${url}/readyz`, o.pki)).status === 200, o.deadlineMs);
  return { process: proc, url };
}

/** A kubeconfig with the admin credentials inlined, usable by clients and by kubectl. */
export async function kubeconfigYaml(server: string, pki: Pki): Promise<string> {
  const b64 = async (p: string): Promise<string> => (await readFile(p)).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: weka-local',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${await b64(pki.caCert)}`,
    'users:',
    '- name: weka-admin',
    '  user:',
    `    client-certificate-data: ${await b64(pki.adminCert)}`,
    `    client-key-data: ${await b64(pki.adminKey)}`,
    'contexts:',
    '- name: weka-local',
    '  context:',
    '    cluster: weka-local',
    '    user: weka-admin',
    'current-context: weka-local',
    '',
  ].join('\n');
}
