// @kubernetes/client-node 1.x builds a new https.Agent for every API call, so every call opens a
// new TCP connection and does a full TLS handshake with the apiserver: on a busy operator most of
// the CPU of a short call (on both ends) goes to the handshake. This KubeConfig hands every API
// call of the generated clients one keep-alive agent per set of TLS settings instead, so calls
// reuse connections. Watches and exec (applyToHTTPSOptions / applyToFetchOptions) keep their own
// connections, as before.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/**
 * Longer than the apiserver's own 60 s request timeout: no API call waits this long for a byte.
 * An idle kept-alive connection is closed after it too.
 */
const SOCKET_TIMEOUT_MS = 65_000;

/** The TLS settings an agent was built with: a new certificate or CA gets a new agent. */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

function settingsKey(agent: http.Agent | https.Agent): string {
  const options = (agent as https.Agent & { options?: Record<string, unknown> }).options ?? {};
  const hash = createHash('sha256');
  hash.update(agent instanceof https.Agent ? 'https' : 'http');
  for (const field of TLS_FIELDS) hash.update(`\0${field}=${String(options[field] ?? '')}`);
  return hash.digest('hex');
}

export class KeepAliveKubeConfig extends KubeConfig {
  private readonly agents = new Map<string, http.Agent | https.Agent>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getAgent();
    if (!fresh) return;
    const key = settingsKey(fresh);
    let shared = this.agents.get(key);
    if (!shared) {
      const options = {
        ...(fresh as https.Agent & { options?: https.AgentOptions }).options,
        keepAlive: true,
        timeout: SOCKET_TIMEOUT_MS,
      };
      shared = fresh instanceof https.Agent ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(key, shared);
    }
    fresh.destroy();
    context.setAgent(shared);
  }

  /** Closes the kept-alive connections (they never hold the process open: idle ones are unref'd). */
  closeConnections(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
