// Connections to Temporal from the operator's configuration: plain, mutual TLS, or an API key
// (Temporal Cloud).
import { readFile } from 'node:fs/promises';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { OperatorConfig } from '../../src/settings/operator-config.js';

async function tlsOptions(config: OperatorConfig) {
  if (
    config.temporalTlsCertPath === undefined &&
    config.temporalApiKey === undefined &&
    config.temporalTlsCaPath === undefined
  )
    return undefined;
  const [crt, key, ca] = await Promise.all([
    config.temporalTlsCertPath ? readFile(config.temporalTlsCertPath) : undefined,
    config.temporalTlsKeyPath ? readFile(config.temporalTlsKeyPath) : undefined,
    config.temporalTlsCaPath ? readFile(config.temporalTlsCaPath) : undefined,
  ]);
  return {
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    ...(ca ? { serverRootCACertificate: ca } : {}),
    ...(config.temporalTlsServerName ? { serverNameOverride: config.temporalTlsServerName } : {}),
  };
}

/** What the client's and the worker's connections are given alike: the address, TLS, the API key. */
async function connectionOptions(config: OperatorConfig): Promise<ConnectionOptions & NativeConnectionOptions> {
  const tls = await tlsOptions(config);
  return {
    address: config.temporalAddress,
    ...(tls ? { tls } : {}),
    ...(config.temporalApiKey ? { apiKey: config.temporalApiKey } : {}),
  };
}

export async function clientConnection(config: OperatorConfig): Promise<Connection> {
  return Connection.connect(await connectionOptions(config));
}

export async function workerConnection(config: OperatorConfig): Promise<NativeConnection> {
  return NativeConnection.connect(await connectionOptions(config));
}
