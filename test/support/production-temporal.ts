// Temporal as production runs it, for the test that proves the operator against it: the Temporal
// server itself (go.temporal.io/server, the version the CLI's dev server embeds, built by
// build-tools.sh) on PostgreSQL 15 from Debian's packages, its schema set up by its own SQL tool,
// its frontend serving TLS and requiring a client certificate signed by the test's CA. Everything
// listens on 127.0.0.1 only. PostgreSQL refuses to run as root, so as root it runs as the postgres
// user the Debian package made.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createClientCert, createPki } from '../../deploy/local/pki.js';
import { freePorts } from '../../deploy/local/ports.js';
import { startServer, waitUntilReady, type ServerProcess } from '../../deploy/local/processes.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/protocol.js';
import { eventually } from './async.js';
import { ensureDebianPackage } from './debian-package.js';
import { testToolBinary } from './tool-binary.js';

const run = promisify(execFile);
const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const SQL_PLUGIN = 'postgres12';
const DB_USER = 'temporal';
/** The server's build from an empty Go build cache can take minutes on two cores. */
const SERVER_BUILD_TIMEOUT_MS = 900_000;

export interface ClientTls {
  serverName: string;
  serverCaCert: string;
  clientCert: string;
  clientKey: string;
}

export interface ProductionTemporal {
  address: string;
  namespace: string;
  tls: ClientTls;
  /** The server's and PostgreSQL's logs (removed with everything else by stop). */
  logDir: string;
  /** A connection with the test's client certificate. */
  connect(): Promise<Connection>;
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

/** The arguments of the commands that run PostgreSQL's programs: as the postgres user when root. */
function asPostgres(program: string, args: string[]): { command: string; args: string[] } {
  const path = join(POSTGRES_BIN, program);
  return asRoot ? { command: 'runuser', args: ['-u', 'postgres', '--', path, ...args] } : { command: path, args };
}

/** Hands a file or directory to the postgres user when root (PostgreSQL then reads it as that user). */
async function giveToPostgres(path: string): Promise<void> {
  if (!asRoot) return;
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  await chown(path, await id('-u'), await id('-g'));
}

async function runQuiet(command: string, args: string[]): Promise<string> {
  try {
    return (await run(command, args, { timeout: 120_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} ${args.slice(0, 6).join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

/** A data directory PostgreSQL's user owns, outside the test's private temporary directory. */
async function postgresDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'weka-postgres-'));
  await giveToPostgres(dir);
  await chmod(dir, 0o700);
  return dir;
}

async function startPostgres(
  logDir: string,
  password: string,
): Promise<{ port: number; server: ServerProcess; dir: string }> {
  await ensureDebianPackage('postgresql-15', join(POSTGRES_BIN, 'postgres'));
  const dir = await postgresDir();
  const data = join(dir, 'data');
  const pwfile = join(dir, 'password');
  await writeFile(pwfile, password);
  await giveToPostgres(pwfile);
  const init = asPostgres('initdb', [
    '-D',
    data,
    '-U',
    DB_USER,
    `--pwfile=${pwfile}`,
    '--auth=scram-sha-256',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  await runQuiet(init.command, init.args);
  await rm(pwfile);
  const [port] = await freePorts(1);
  // Durability is not what this test is about: no fsync, as a throwaway database may.
  const start = asPostgres('postgres', [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dir}`,
    '-c',
    'fsync=off',
    '-c',
    'max_connections=100',
  ]);
  const server = startServer({
    name: 'postgres',
    command: start.command,
    args: start.args,
    logPath: join(logDir, 'postgres.log'),
  });
  const ready = asPostgres('pg_isready', ['-h', '127.0.0.1', '-p', String(port!)]);
  await waitUntilReady(
    server,
    async () => {
      await run(ready.command, ready.args);
      return true;
    },
    60_000,
  );
  return { port: port!, server, dir };
}

/** Creates the two databases and brings their schemas to the server's version, with its own tool. */
async function setUpSchemas(sqlTool: string, port: number, password: string): Promise<void> {
  const common = [
    '--endpoint',
    '127.0.0.1',
    '--port',
    String(port),
    '--user',
    DB_USER,
    '--password',
    password,
    '--plugin',
    SQL_PLUGIN,
  ];
  for (const [database, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    await runQuiet(sqlTool, [...common, '--database', database, 'create-database']);
    await runQuiet(sqlTool, [...common, '--database', database, 'setup-schema', '-v', '0.0']);
    await runQuiet(sqlTool, [...common, '--database', database, 'update-schema', '--schema-name', schema]);
  }
}

interface ServerConfig {
  dbPort: number;
  password: string;
  ports: { frontend: number; frontendHttp: number; history: number; matching: number; worker: number };
  membership: { frontend: number; history: number; matching: number; worker: number };
  pprof: number;
  metrics: number;
  pki: { caCert: string; serverCert: string; serverKey: string };
  systemWorker: { cert: string; key: string };
}

/** The server's configuration (its config/development.yaml): SQL persistence, TLS on the frontend. */
function serverConfig(c: ServerConfig): string {
  const store = (database: string, conns: number) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName: database,
      connectAddr: `127.0.0.1:${c.dbPort}`,
      connectProtocol: 'tcp',
      user: DB_USER,
      password: c.password,
      maxConns: conns,
      maxIdleConns: conns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  const config = {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: 4,
      datastores: {
        'postgres-default': store('temporal', 20),
        'postgres-visibility': store('temporal_visibility', 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: c.pprof },
      metrics: { prometheus: { framework: 'tally', listenAddress: `127.0.0.1:${c.metrics}` } },
      tls: {
        frontend: {
          server: {
            certFile: c.pki.serverCert,
            keyFile: c.pki.serverKey,
            requireClientAuth: true,
            clientCaFiles: [c.pki.caCert],
          },
          client: { serverName: 'localhost', rootCaFiles: [c.pki.caCert] },
        },
        // The server's own worker service dials the frontend too, with a certificate of its own.
        systemWorker: {
          certFile: c.systemWorker.cert,
          keyFile: c.systemWorker.key,
          client: { serverName: 'localhost', rootCaFiles: [c.pki.caCert] },
        },
      },
    },
    services: {
      frontend: service(c.ports.frontend, c.membership.frontend, { httpPort: c.ports.frontendHttp }),
      history: service(c.ports.history, c.membership.history),
      matching: service(c.ports.matching, c.membership.matching),
      worker: service(c.ports.worker, c.membership.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `localhost:${c.ports.frontend}`,
          httpAddress: `localhost:${c.ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
  };
  // YAML is a superset of JSON: the server reads this file as its YAML configuration.
  return JSON.stringify(config, null, 1);
}

/** Registers the namespace with a retention and the operator's search attributes, as docs/production.md says. */
async function setUpNamespace(connection: Connection, namespace: string): Promise<void> {
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('3 days'),
  });
  // A new namespace reaches the frontend's cache a moment later.
  await eventually(
    `namespace ${namespace} to be served`,
    async () => {
      await connection.workflowService.describeNamespace({ namespace });
      return true;
    },
    60_000,
    { intervalMs: 200 },
  );
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, keyword])),
  });
}

export async function startProductionTemporal(namespace = 'weka-drives'): Promise<ProductionTemporal> {
  const binary = await testToolBinary('temporal-server', SERVER_BUILD_TIMEOUT_MS);
  const sqlTool = join(dirname(binary), 'temporal-sql-tool');
  const root = await mkdtemp(join(tmpdir(), 'weka-temporal-prod-'));
  const logDir = join(root, 'logs');
  await mkdir(logDir, { recursive: true });
  const password = randomBytes(12).toString('hex');
  const postgres = await startPostgres(logDir, password);
  let server: ServerProcess | undefined;
  const stop = async () => {
    await server?.stop(15_000);
    await postgres.server.stop(15_000);
    await rm(postgres.dir, { recursive: true, force: true });
    await rm(root, { recursive: true, force: true });
  };
  try {
    await setUpSchemas(sqlTool, postgres.port, password);
    const pki = await createPki(join(root, 'pki'));
    const systemWorker = await createClientCert(pki, 'temporal-system-worker');
    const client = await createClientCert(pki, `weka-drives-operator-${userInfo().username}`);
    const [frontend, frontendHttp, history, matching, worker, m1, m2, m3, m4, pprof, metrics] = await freePorts(11);
    const configDir = join(root, 'config');
    await mkdir(configDir, { recursive: true });
    await writeFile(
      join(configDir, 'development.yaml'),
      serverConfig({
        dbPort: postgres.port,
        password,
        ports: {
          frontend: frontend!,
          frontendHttp: frontendHttp!,
          history: history!,
          matching: matching!,
          worker: worker!,
        },
        membership: { frontend: m1!, history: m2!, matching: m3!, worker: m4! },
        pprof: pprof!,
        metrics: metrics!,
        pki,
        systemWorker,
      }),
    );
    server = startServer({
      name: 'temporal-server',
      command: binary,
      // Mutual TLS is the gate here: which certificate may act on which namespace (an authorizer
      // and claim mapper) is the Temporal operator's choice, beside what this test proves.
      args: ['--root', root, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'],
      logPath: join(logDir, 'temporal-server.log'),
    });
    const tls: ClientTls = {
      serverName: 'localhost',
      serverCaCert: pki.caCert,
      clientCert: client.cert,
      clientKey: client.key,
    };
    const address = `127.0.0.1:${frontend}`;
    const connect = async () =>
      Connection.connect({
        address,
        connectTimeout: 5_000,
        tls: {
          serverNameOverride: tls.serverName,
          serverRootCACertificate: await readFile(tls.serverCaCert),
          clientCertPair: { crt: await readFile(tls.clientCert), key: await readFile(tls.clientKey) },
        },
      });
    await waitUntilReady(
      server,
      async () => {
        const connection = await connect();
        try {
          await connection.workflowService.getSystemInfo({});
          return true;
        } finally {
          await connection.close();
        }
      },
      120_000,
    );
    const connection = await connect();
    try {
      await setUpNamespace(connection, namespace);
    } finally {
      await connection.close();
    }
    return { address, namespace, tls, logDir, connect, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
