// Checks on the Temporal connection settings, which are Temporal's own (the TEMPORAL_* variables
// and the temporal.toml profiles that @temporalio/envconfig reads), for the mistakes that library
// lets through silently: a misspelt boolean, half a client certificate pair, host verification
// turned off (which the TypeScript SDK cannot do), and this operator's earlier variable names.

/** This operator's earlier names, and Temporal's standard ones that replace them. */
export const RENAMED_TEMPORAL_VARIABLES: Readonly<Record<string, string>> = {
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
};

const BOOLEAN_TEXT = ['1', '0', 'true', 'false'];

/** What is wrong with the TEMPORAL_* variables, one sentence each. */
export function temporalEnvProblems(env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [old, standard] of Object.entries(RENAMED_TEMPORAL_VARIABLES)) {
    if (env[old] !== undefined)
      problems.push(`${old} is no longer read: set ${standard} (Temporal's standard name) instead`);
  }
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    const value = env[name];
    if (value !== undefined && !BOOLEAN_TEXT.includes(value))
      problems.push(`${name} must be one of ${BOOLEAN_TEXT.join(', ')}, got "${value}"`);
  }
  if (env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === 'true' || env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === '1')
    problems.push(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK: set TEMPORAL_TLS_SERVER_NAME to the name in the server certificate instead',
    );
  for (const part of ['CLIENT_CERT', 'CLIENT_KEY', 'SERVER_CA_CERT']) {
    if (env[`TEMPORAL_TLS_${part}_PATH`] !== undefined && env[`TEMPORAL_TLS_${part}_DATA`] !== undefined)
      problems.push(`TEMPORAL_TLS_${part}_PATH and TEMPORAL_TLS_${part}_DATA are alternatives: set one`);
  }
  return problems;
}

/** A loaded profile's TLS, as @temporalio/envconfig gives it (ClientConfigTLS). */
export interface ProfileTls {
  disabled?: boolean;
  clientCert?: unknown;
  clientKey?: unknown;
}

/** What is wrong with the profile once the file and the variables are merged. */
export function temporalProfileProblems(profile: { tls?: ProfileTls | undefined }): string[] {
  const tls = profile.tls;
  if (!tls || tls.disabled) return [];
  if ((tls.clientCert === undefined) !== (tls.clientKey === undefined))
    return [
      'the client certificate and its key go together (TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_*, or client_cert_* and client_key_* in the profile): set both for mTLS, or neither',
    ];
  return [];
}
