// Temporal connection settings, read the standard way (TEMPORAL_* variables and temporal.toml
// profiles): TLS is on whenever any TLS setting is given, and a mistake is an error, never a
// silently plain-text connection.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporalTarget } from '../../../deploy/operator/temporal-connection.js';

const dir = mkdtempSync(join(tmpdir(), 'temporal-env-'));
const noFile = join(dir, 'absent.toml');
const pem = join(dir, 'file.pem');
writeFileSync(pem, '-----BEGIN CERTIFICATE-----\n');

function target(env: Record<string, string>) {
  const result = temporalTarget({ TEMPORAL_CONFIG_FILE: noFile, ...env });
  if (!result.ok) throw new Error(result.errors.join('; '));
  return result.target;
}

function errors(env: Record<string, string>): string[] {
  const result = temporalTarget({ TEMPORAL_CONFIG_FILE: noFile, ...env });
  return result.ok ? [] : result.errors;
}

describe('Temporal connection settings', () => {
  it('default to a plain connection to the local frontend and the default namespace', () => {
    expect(target({})).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', tls: false });
    expect(target({}).options.tls).toBeUndefined();
  });

  it.each([
    ['a server name alone', { TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }],
    ['TEMPORAL_TLS=true alone (the system CAs)', { TEMPORAL_TLS: 'true' }],
    ['a CA alone', { TEMPORAL_TLS_SERVER_CA_CERT_PATH: pem }],
    ['an API key', { TEMPORAL_API_KEY: 'key' }],
    ['a client certificate pair', { TEMPORAL_TLS_CLIENT_CERT_PATH: pem, TEMPORAL_TLS_CLIENT_KEY_PATH: pem }],
  ])('turn TLS on with %s', (_, env) => {
    const t = target(env);
    expect(t.tls).toBe(true);
    expect(t.options.tls).toBeTruthy();
  });

  it('pass the server name, the CA and the client pair to the connection', () => {
    const t = target({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pem,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pem,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pem,
    });
    expect(t).toMatchObject({ address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct' });
    const tls = t.options.tls as {
      serverNameOverride?: string;
      serverRootCACertificate?: unknown;
      clientCertPair?: unknown;
    };
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(tls.serverRootCACertificate).toBeDefined();
    expect(tls.clientCertPair).toBeDefined();
  });

  it('keep TLS off when TEMPORAL_TLS=false says so', () => {
    expect(target({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_NAME: 'x' }).tls).toBe(false);
  });

  it('read a temporal.toml profile, the variables taking precedence', () => {
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      '[profile.prod]\naddress = "prod.example:7233"\nnamespace = "prod"\n[profile.prod.tls]\nserver_name = "prod.internal"\n',
    );
    const t = target({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'override' });
    expect(t).toMatchObject({ address: 'prod.example:7233', namespace: 'override', tls: true });
  });

  it.each([
    [{ TEMPORAL_TLS_CERT: pem }, /TEMPORAL_TLS_CERT is no longer read: set TEMPORAL_TLS_CLIENT_CERT_PATH/],
    [{ TEMPORAL_TLS_CA: pem }, /set TEMPORAL_TLS_SERVER_CA_CERT_PATH/],
    [{ TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS must be one of 1, 0, true, false, got "yes"/],
    [{ TEMPORAL_TLS_CLIENT_CERT_PATH: pem }, /the client certificate and its key go together/],
    [{ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }, /not supported by the TypeScript SDK/],
    [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: pem, TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'x' }, /are alternatives/],
    [{ TEMPORAL_PROFILE: 'missing' }, /Profile 'missing' not found/],
    [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'nope.pem') }, /ENOENT/],
  ])('refuse %j with a clear error', (env, message) => {
    const found = errors(env as Record<string, string>);
    expect(found.join('\n')).toMatch(message);
  });
});
