// The operator's HTTP endpoint: /metrics (Prometheus), /healthz (the process is alive and its
// event loop answers) and /readyz (the worker runs and every watcher finished its first list).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HttpEndpoint {
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

export interface HttpEndpointOptions {
  port: number;
  address: string;
  registry: Registry;
  /** Runs before each scrape (folding buffered metrics in). */
  beforeScrape?: () => void;
  /** Why the process is not ready yet, or undefined when it is. */
  notReadyReason: () => string | undefined;
}

export async function serveHttp(o: HttpEndpointOptions): Promise<HttpEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    switch (path) {
      case '/metrics':
        try {
          o.beforeScrape?.();
        } catch (err) {
          return reply(500, `metrics failed: ${String(err)}\n`);
        }
        o.registry.metrics().then(
          (text) => reply(200, text, o.registry.contentType),
          (err: unknown) => reply(500, `metrics failed: ${String(err)}\n`),
        );
        return;
      case '/healthz':
        return reply(200, 'ok\n');
      case '/readyz': {
        const reason = o.notReadyReason();
        return reason === undefined ? reply(200, 'ready\n') : reply(503, `not ready: ${reason}\n`);
      }
      default:
        return reply(404, 'not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
