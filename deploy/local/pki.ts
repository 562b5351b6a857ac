// Certificates for the local kube-apiserver, made with the openssl command line the way envtest
// makes its own: one CA, a serving certificate for 127.0.0.1/localhost, an admin client
// certificate in system:masters, and the service-account signing key pair.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT')
      throw new Error('openssl is not installed; the local control plane needs it to make certificates');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr ?? e.message}`);
  }
}

async function ecKey(path: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

async function signedCert(
  pki: { dir: string; caCert: string; caKey: string },
  name: string,
  subject: string,
  extensions: string,
): Promise<{ cert: string; key: string }> {
  const key = join(pki.dir, `${name}.key`);
  const csr = join(pki.dir, `${name}.csr`);
  const cert = join(pki.dir, `${name}.crt`);
  const ext = join(pki.dir, `${name}.ext`);
  await ecKey(key);
  await writeFile(ext, extensions);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    pki.caCert,
    '-CAkey',
    pki.caKey,
    '-set_serial',
    `0x${randomBytes(12).toString('hex')}`,
    '-days',
    '3650',
    '-extfile',
    ext,
    '-out',
    cert,
  ]);
  return { cert, key };
}

export async function createPki(dir: string): Promise<Pki> {
  await mkdir(dir, { recursive: true });
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  await ecKey(caKey);
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    caKey,
    '-subj',
    '/CN=weka-drives-local-ca',
    '-days',
    '3650',
    '-out',
    caCert,
  ]);
  const ca = { dir, caCert, caKey };
  const serving =
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n';
  const server = await signedCert(ca, 'apiserver', '/CN=kube-apiserver', serving);
  const admin = await signedCert(
    ca,
    'admin',
    '/O=system:masters/CN=weka-drives-admin',
    'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await ecKey(serviceAccountKey);
  await openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
  return {
    dir,
    caCert,
    caKey,
    serverCert: server.cert,
    serverKey: server.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    serviceAccountKey,
    serviceAccountPub,
  };
}

/** A serving certificate for a fake node's kubelet (kwok), so the apiserver can verify it. */
export async function createKubeletCert(pki: Pki, nodeName: string): Promise<{ cert: string; key: string }> {
  const serving = `subjectAltName=DNS:localhost,DNS:${nodeName},IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n`;
  return signedCert(pki, `kubelet-${nodeName}`, `/CN=system:node:${nodeName}`, serving);
}

/**
 * A client certificate for `user` in `groups`, signed by the CA: the apiserver authenticates it
 * as that user (CN) and those groups (O). Written into `pki.dir`, which may be any directory.
 */
export async function createClientCert(
  pki: { dir: string; caCert: string; caKey: string },
  user: string,
  groups: readonly string[] = [],
): Promise<{ cert: string; key: string }> {
  const subject = [...groups.map((g) => `/O=${g}`), `/CN=${user}`].join('');
  return signedCert(
    pki,
    `client-${user.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
    subject,
    'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
}
