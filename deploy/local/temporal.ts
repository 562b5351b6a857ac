// The Temporal CLI's dev server with SQLite persistence, its Web UI, and the project's search
// attributes. Restarting it on the same database file keeps every workflow.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeProblems } from '../../src/operator/search-attributes.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/protocol.js';
import { startServer, waitUntilReady, type ServerProcess } from './processes.js';

/** Custom search attributes the operator sets on its workflows (all Keyword). */
export const SEARCH_ATTRIBUTES = SEARCH_ATTRIBUTE_KEYS.map((k) => k.name);

export interface TemporalOptions {
  binary: string;
  dbFile: string;
  port: number;
  uiPort: number;
  httpPort: number;
  metricsPort: number;
  namespace: string;
  logDir: string;
  deadlineMs: number;
}

export interface TemporalServer {
  process: ServerProcess;
  address: string;
  uiUrl: string;
}

async function searchAttributesRegistered(address: string, namespace: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    return searchAttributeProblems(namespace, new Map(Object.entries(res.customAttributes ?? {}))).length === 0;
  } finally {
    await connection.close();
  }
}

export async function startTemporal(o: TemporalOptions): Promise<TemporalServer> {
  const address = `127.0.0.1:${o.port}`;
  const uiUrl = `http://127.0.0.1:${o.uiPort}`;
  const resumed = existsSync(o.dbFile);
  const proc = startServer({
    name: 'temporal',
    command: o.binary,
    args: [
      'server',
      'start-dev',
      '--ip=127.0.0.1',
      `--port=${o.port}`,
      `--ui-port=${o.uiPort}`,
      `--http-port=${o.httpPort}`,
      `--metrics-port=${o.metricsPort}`,
      `--db-filename=${o.dbFile}`,
      // Write-ahead log, synced at checkpoints rather than on every commit: a killed server loses
      // nothing (the chaos tests kill it), only an OS crash can lose the last commits, which a
      // local sandbox can afford. Every signal and task is a commit, so this sets its pace.
      '--sqlite-pragma=journal_mode=wal',
      '--sqlite-pragma=synchronous=normal',
      `--namespace=${o.namespace}`,
      ...SEARCH_ATTRIBUTES.map((name) => `--search-attribute=${name}=Keyword`),
      '--log-level=warn',
      // Eager activity dispatch: a workflow task that schedules an activity gets the activity back
      // in its completion response when the same worker has a free slot, skipping a round trip
      // through matching. The node mutexes' hand-over is exactly that (docs/production.md, "Optional: eager activity dispatch").
      '--dynamic-config-value=system.enableActivityEagerExecution=true',
      // One partition per task queue (the server's default is four). The operator's queues carry
      // a few tasks per second with a handful of pollers; with four partitions a task can land in
      // one no poller is waiting on and sit there until it is forwarded, which showed up as a new
      // node mutex's first decision starting up to two seconds late (docs/production.md, "Optional: one
      // partition for the mutex task queue").
      // Tasks are always written to one partition; a database kept from an earlier run (the
      // sandbox's --keep) may still hold tasks in the other three, so those keep being read.
      '--dynamic-config-value=matching.numTaskqueueWritePartitions=1',
      `--dynamic-config-value=matching.numTaskqueueReadPartitions=${resumed ? 4 : 1}`,
    ],
    logPath: join(o.logDir, 'temporal.log'),
  });
  await waitUntilReady(
    proc,
    async () => {
      if (!(await searchAttributesRegistered(address, o.namespace))) return false;
      const ui = await fetch(uiUrl);
      return ui.ok;
    },
    o.deadlineMs,
  );
  return { process: proc, address, uiUrl };
}

/**
 * A temporal.toml whose default profile names this server, for the operator's TEMPORAL_CONFIG_FILE:
 * the local operator reads its connection the standard way, and a developer's own
 * ~/.config/temporalio/temporal.toml (an API key, TLS for a remote server) never leaks into it.
 */
export function localTemporalProfile(address: string, namespace: string): string {
  return `[profile.default]\naddress = ${JSON.stringify(address)}\nnamespace = ${JSON.stringify(namespace)}\n`;
}
