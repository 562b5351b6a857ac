// A Kubernetes user that holds nothing but a given ClusterRole: a client certificate signed by the
// local control plane's CA (so the apiserver authenticates it, outside system:masters), a
// ClusterRoleBinding, and a kubeconfig for it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
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

async function kubeConfigFor(user: string): Promise<KubeConfig> {
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
