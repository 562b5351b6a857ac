// Connections to Temporal, configured the standard way: Temporal's TEMPORAL_* variables and the
// profile of a temporal.toml file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), read by
// @temporalio/envconfig. TLS is on whenever any TLS setting or an API key is given (TEMPORAL_TLS=true
// alone means TLS against the system's root CAs) and off only when none is, or TEMPORAL_TLS=false.
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { temporalEnvProblems, temporalProfileProblems } from '../../src/operator/temporal-env.js';

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** Where the operator connects and how; `tls` says whether TLS is on, for the start-up log line. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls: boolean;
  options: ConnectionOptions & NativeConnectionOptions;
}

export type TemporalTargetResult = { ok: true; target: TemporalTarget } | { ok: false; errors: string[] };

/** Reads the connection settings; a refused setting, an unreadable file or a missing profile is an error. */
export function temporalTarget(env: Readonly<Record<string, string | undefined>>): TemporalTargetResult {
  const envProblems = temporalEnvProblems(env);
  if (envProblems.length > 0) return { ok: false, errors: envProblems };
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  let profile;
  let connect;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars });
    const problems = temporalProfileProblems(profile);
    if (problems.length > 0) return { ok: false, errors: problems };
    connect = toClientOptions(profile);
  } catch (err) {
    return { ok: false, errors: [`Temporal connection settings: ${(err as Error).message}`] };
  }
  const { address, apiKey, tls, metadata } = connect.connectionOptions;
  const resolvedAddress = address ?? DEFAULT_TEMPORAL_ADDRESS;
  return {
    ok: true,
    target: {
      address: resolvedAddress,
      namespace: connect.namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
      tls: tls !== undefined && tls !== false,
      options: {
        address: resolvedAddress,
        ...(apiKey !== undefined ? { apiKey: apiKey as string } : {}),
        ...(tls !== undefined ? { tls } : {}),
        ...(metadata !== undefined ? { metadata } : {}),
      },
    },
  };
}

export async function clientConnection(target: TemporalTarget): Promise<Connection> {
  return Connection.connect(target.options);
}

export async function workerConnection(target: TemporalTarget): Promise<NativeConnection> {
  return NativeConnection.connect(target.options);
}

/** gRPC status codes the search attribute check tells apart. */
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const UNIMPLEMENTED = 12;

/**
 * The namespace's custom search attributes, name -> IndexedValueType; `missing` when the namespace does
 * not exist; undefined when the server will not say (the credentials may not list them, or the
 * server does not serve the call): the operator then starts and the first workflow start tells.
 */
export async function customSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<Map<string, number> | 'missing' | undefined> {
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    return new Map(Object.entries(res.customAttributes ?? {}));
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === NOT_FOUND) return 'missing';
    if (code === PERMISSION_DENIED || code === UNIMPLEMENTED) return undefined;
    throw err;
  }
}
