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

export async function clientConnection(config: OperatorConfig): Promise<Connection> {
  const tls = await tlsOptions(config);
  const options: ConnectionOptions = {
    address: config.temporalAddress,
    ...(tls ? { tls } : {}),
    ...(config.temporalApiKey ? { apiKey: config.temporalApiKey } : {}),
  };
  return Connection.connect(options);
}

export async function workerConnection(config: OperatorConfig): Promise<NativeConnection> {
  const tls = await tlsOptions(config);
  const options: NativeConnectionOptions = {
    address: config.temporalAddress,
    ...(tls ? { tls } : {}),
    ...(config.temporalApiKey ? { apiKey: config.temporalApiKey } : {}),
  };
  return NativeConnection.connect(options);
}
