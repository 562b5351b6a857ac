// The operator process (`npm start`, the image's entrypoint): the Temporal worker that runs every
// workflow and activity, configured from the environment (see src/settings/operator-config.ts).
// SIGTERM or SIGINT stops it cleanly: in-flight activities get the worker's shutdown grace.
import { KubeConfig } from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import { pino } from 'pino';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { parseOperatorConfig } from '../../src/settings/operator-config.js';
import { clientConnection, workerConnection } from './temporal-connection.js';
import { createOperatorWorker } from './worker.js';

const parsed = parseOperatorConfig(process.env);
if (!parsed.ok) {
  console.error(`weka-drives-operator: invalid configuration:\n  ${parsed.errors.join('\n  ')}`);
  process.exit(2);
}
const config = parsed.config;
const logger = pino({ level: config.logLevel, base: { component: 'weka-drives-operator' } });

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const connection = await clientConnection(config);
const temporal = new Client({ connection, namespace: config.temporalNamespace });
const nativeConnection = await workerConnection(config);
const worker = await createOperatorWorker({
  connection: nativeConnection,
  namespace: config.temporalNamespace,
  deps: {
    kubeConfig,
    exec: KubeExecTransport.fromKubeConfig(kubeConfig),
    temporal,
    taskQueue: config.taskQueue,
    logger,
    settings: config.settings,
    operatorNamespace: config.operatorNamespace,
    proxyImage: config.proxyImage,
  },
});

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: in-flight activities get their grace');
    worker.shutdown();
  });
}
logger.info({ temporal: config.temporalAddress, namespace: config.temporalNamespace, taskQueue: config.taskQueue }, 'worker running');
await worker.run();
await nativeConnection.close();
await connection.close();
logger.info('stopped');
