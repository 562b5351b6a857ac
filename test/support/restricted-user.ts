// A Kubernetes user that holds nothing but a given ClusterRole: a client certificate signed by the
// local control plane's CA (so the apiserver authenticates it, outside system:masters), a
// ClusterRoleBinding, and a kubeconfig for it. The apiserver takes a certificate's CN as the
// username as it is, so a CN of system:serviceaccount:<namespace>:<name> acts as that service
// account as far as RBAC and admission see (a CN holds at most 64 characters). And a probe of how admission answers an exec.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AuthorizationV1Api, KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { createClientCert } from '../../deploy/local/pki.js';
import { eventually } from './async.js';
import { kubeConfig, simulatorRoot } from './harness.js';

export interface RestrictedUser {
  user: string;
  kubeConfig: KubeConfig;
  /** Deletes the user's ClusterRole and binding. */
  remove(): Promise<void>;
}

/** The control plane's CA: `simulatorRoot` is `<dataDir>/weka-sim`, the CA is in `<dataDir>/pki`. */
function controlPlaneCa(): { caCert: string; caKey: string } {
  const pkiDir = join(dirname(simulatorRoot()), 'pki');
  return { caCert: join(pkiDir, 'ca.crt'), caKey: join(pkiDir, 'ca.key') };
}

export async function kubeConfigFor(user: string): Promise<KubeConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'weka-rbac-'));
  const { cert, key } = await createClientCert({ dir, ...controlPlaneCa() }, user);
  // The kubeconfig carries the certificate and key inline; the files are not needed after this.
  const [certData, keyData] = await Promise.all([readFile(cert), readFile(key)]);
  await rm(dir, { recursive: true, force: true });
  const admin = kubeConfig().getCurrentCluster();
  if (!admin) throw new Error('the admin kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'weka-local',
        server: admin.server,
        ...(admin.caData ? { caData: admin.caData } : {}),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: user, certData: certData.toString('base64'), keyData: keyData.toString('base64') }],
    contexts: [{ name: user, cluster: 'weka-local', user }],
    currentContext: user,
  });
  return kc;
}

/**
 * Creates the ClusterRole `roleName` with `rules`, binds `user` to it, and waits until the
 * apiserver's RBAC authorizer has seen the binding (it reads RBAC objects through an informer).
 */
export async function restrictedUser(user: string, roleName: string, rules: V1PolicyRule[]): Promise<RestrictedUser> {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: roleName }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: roleName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
  const kc = await kubeConfigFor(user);
  const [group = '', first = '', verb = ''] = [rules[0]?.apiGroups?.[0], rules[0]?.resources?.[0], rules[0]?.verbs[0]];
  const [resource = '', subresource = ''] = first.split('/');
  const auth = kc.makeApiClient(AuthorizationV1Api);
  await eventually(`the binding of ${user} to ${roleName} to take effect`, async () => {
    const review = await auth.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { group, resource, subresource, verb } } },
    });
    return review.status?.allowed ? true : undefined;
  });
  return {
    user,
    kubeConfig: kc,
    async remove() {
      await rbac.deleteClusterRoleBinding({ name: roleName });
      await rbac.deleteClusterRole({ name: roleName });
    },
  };
}

export interface ExecAdmission {
  /** Whether authorization and admission let the exec through (it then needed only a protocol upgrade). */
  admitted: boolean;
  code: number;
  /** The apiserver's Status message: the admission policy's for a refusal. */
  message: string;
}

/**
 * Asks the apiserver for an exec without the protocol upgrade an exec needs, as `kc`'s user: the
 * apiserver authorizes the request and runs admission (a CONNECT on pods/exec, whose object is the
 * PodExecOptions) before it looks for the upgrade, so an admitted request is answered 400
 * "Upgrade request required" and runs nothing, and a refused one 403 with the refusal's message.
 * A harmless way to see what an admission policy says about an exec, and to wait for it to act.
 */
export async function execAdmission(
  kc: KubeConfig,
  target: { namespace: string; pod: string; container: string },
  argv: readonly string[],
  o: { stdin?: boolean; tty?: boolean } = {},
): Promise<ExecAdmission> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const query = new URLSearchParams([
    ...argv.map((a): [string, string] => ['command', a]),
    ['container', target.container],
    ['stdout', 'true'],
    ['stderr', 'true'],
    ...(o.stdin ? [['stdin', 'true'] as [string, string]] : []),
    ...(o.tty ? [['tty', 'true'] as [string, string]] : []),
  ]);
  const url = new URL(
    `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/exec?${query}`,
    server,
  );
  const options: RequestOptions = { method: 'POST', timeout: 10_000 };
  await kc.applyToHTTPSOptions(options);
  const { code, body } = await new Promise<{ code: number; body: string }>((resolve, reject) => {
    const req = request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${url.pathname} timed out`)));
    req.on('error', reject);
    req.end();
  });
  let message = body;
  try {
    message = (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    // not a Status: keep the body as it is
  }
  if (code === 400 && /Upgrade request required/.test(message)) return { admitted: true, code, message };
  if (code === 403) return { admitted: false, code, message };
  throw new Error(`exec ${argv.join(' ')} in ${target.namespace}/${target.pod}: unexpected HTTP ${code}: ${message}`);
}

/**
 * Grants `user` the rules of a namespaced Role in `namespace` (as the chart's Role and RoleBinding
 * do in the operator's namespace), and waits until the authorizer has seen the binding. Removed
 * with the namespace.
 */
export async function grantInNamespace(
  user: string,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
): Promise<void> {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
  const auth = (await kubeConfigFor(user)).makeApiClient(AuthorizationV1Api);
  const [resource = '', verb = ''] = [rules[0]?.resources?.[0], rules[0]?.verbs[0]];
  await eventually(`the binding of ${user} to Role ${namespace}/${name} to take effect`, async () => {
    const review = await auth.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { namespace, group: rules[0]?.apiGroups?.[0] ?? '', resource, verb } } },
    });
    return review.status?.allowed ? true : undefined;
  });
}
