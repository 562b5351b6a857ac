// What an integration test needs from the shared local control plane.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { inject } from 'vitest';
import type { NodeSpec } from '../../deploy/local/fake-nodes.js';

export function kubeConfig(): KubeConfig {
  const kc = new KeepAliveKubeConfig();
  kc.loadFromFile(inject('kubeconfigPath'));
  return kc;
}

export function temporalAddress(): string {
  return inject('temporalAddress');
}

export function temporalNamespace(): string {
  return inject('temporalNamespace');
}

export function temporalUiUrl(): string {
  return inject('temporalUiUrl');
}

/** A node's Weka simulator state directory. */
export function simulatorNodeDir(node: string): string {
  return join(inject('simulatorRoot'), 'nodes', node);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A fresh namespace (there is no namespace controller here, so it is never deleted). */
export async function uniqueNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${inject('controlUrl')}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { error?: string };
  if (!res.ok) throw new Error(`control plane ${method} ${path}: ${json.error ?? res.status}`);
  return json;
}

/** Creates a fake node (Node object, its kwok, its simulated devices) and waits until Ready. */
export async function addNode(spec: NodeSpec): Promise<void> {
  await control('POST', '/nodes', spec);
}

export async function removeNode(name: string, opts: { keepObject?: boolean } = {}): Promise<void> {
  await control('DELETE', `/nodes/${encodeURIComponent(name)}${opts.keepObject ? '?keepObject=true' : ''}`);
}

export async function stopTemporal(): Promise<void> {
  await control('POST', '/temporal/stop');
}

export async function startTemporal(): Promise<{ startupMs: number }> {
  return (await control('POST', '/temporal/start')) as { startupMs: number };
}

/**
 * Polls every `intervalMs` (default 100) until `check` returns a value other than undefined, or
 * fails after `timeoutMs` with `progress()` and the last error; prints `progress()` every 30 s.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  o: { intervalMs?: number; progress?: () => Promise<string> } = {},
): Promise<T> {
  const started = Date.now();
  let lastPrint = started;
  let lastError: unknown;
  const progress = async (): Promise<string> => (o.progress ? ` (${await o.progress().catch(String)})` : '');
  while (Date.now() - started < timeoutMs) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (o.progress && Date.now() - lastPrint >= 30_000) {
      lastPrint = Date.now();
      console.log(`  waiting ${Math.round((lastPrint - started) / 1000)} s for ${what}${await progress()}`);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 100));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${await progress()}${lastError ? `: ${String(lastError)}` : ''}`,
  );
}
