// @kubernetes/client-node 1.x builds a new https.Agent for every API call, so every call opens a
// new TCP connection and does a full TLS handshake with the apiserver: on a busy operator most of
// the CPU of a short call (on both ends) goes to the handshake. This KubeConfig hands every API
// call of the generated clients one keep-alive agent per set of TLS settings instead, so calls
// reuse connections.
//
// Exec and watches (applyToHTTPSOptions, which applyToFetchOptions calls) need a connection of
// their own: a WebSocket takes over its socket, a watch holds its response open. Each of them
// would otherwise build a TLS context from the CA, certificate and key again and do a full
// handshake; they share one agent per set of TLS settings instead, without keep-alive, whose TLS
// context is built once and whose session cache lets the next connection resume the handshake.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type ConnectionOptions = Parameters<KubeConfig['applyToHTTPSOptions']>[0];
type AgentWithOptions = https.Agent & { options?: https.AgentOptions };

/**
 * Longer than the apiserver's own 60 s request timeout: no API call waits this long for a byte.
 * An idle kept-alive connection is closed after it too.
 */
const SOCKET_TIMEOUT_MS = 65_000;

/** The TLS settings an agent was built with: a new certificate or CA gets a new agent. */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

function settingsKey(agent: http.Agent | https.Agent, extra: readonly string[] = []): string {
  const options = (agent as https.Agent & { options?: Record<string, unknown> }).options ?? {};
  const hash = createHash('sha256');
  hash.update(agent instanceof https.Agent ? 'https' : 'http');
  for (const field of [...TLS_FIELDS, ...extra]) hash.update(`\0${field}=${String(options[field] ?? '')}`);
  return hash.digest('hex');
}

export class KeepAliveKubeConfig extends KubeConfig {
  private readonly agents = new Map<string, http.Agent | https.Agent>();
  private readonly connectionAgents = new Map<string, https.Agent>();

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

  override async applyToHTTPSOptions(opts: ConnectionOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const fresh = opts.agent;
    // Proxy agents (and plain http) keep what client-node built.
    if (!fresh || fresh.constructor !== https.Agent) return;
    const key = settingsKey(fresh, ['timeout']);
    let shared = this.connectionAgents.get(key);
    if (!shared) {
      const options = (fresh as AgentWithOptions).options ?? {};
      // An agent's own options override a request's, so its connections all use this context.
      shared = new https.Agent({ ...options, keepAlive: false, secureContext: tls.createSecureContext(options) });
      this.connectionAgents.set(key, shared);
    }
    fresh.destroy();
    opts.agent = shared;
  }

  /** Closes the kept-alive connections (they never hold the process open: idle ones are unref'd). */
  closeConnections(): void {
    for (const agent of [...this.agents.values(), ...this.connectionAgents.values()]) agent.destroy();
    this.agents.clear();
    this.connectionAgents.clear();
  }
}
