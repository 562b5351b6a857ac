// A plain-HTTP proxy on 127.0.0.1 in front of the test apiserver (it forwards with the harness's
// credentials) that can hold the answer to a list of one resource: the request reaches the
// apiserver at once, so the list is a snapshot of that moment, but its answer is kept from the
// client until the test lets it go. It can also cut watches: the open ones are dropped and new
// ones refused until the test restores them. Every other request passes straight through.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfig } from './harness.js';

export interface ListHoldingProxy {
  /** A kubeconfig whose server is this proxy. */
  kubeConfig: KubeConfig;
  /**
   * Holds the answers of the next lists of the collection whose path ends with `plural` (not
   * watches). `listed` resolves once the apiserver has answered one of them; `release` lets every
   * held answer go and stops holding.
   */
  holdLists(plural: string): { listed: Promise<void>; release(): void };
  /** Drops every open watch and refuses new ones (503) until `restore`. */
  cutWatches(): { restore(): void };
  stop(): Promise<void>;
}

function isWatch(req: IncomingMessage): boolean {
  return new URL(req.url ?? '/', 'http://proxy').searchParams.get('watch') === 'true';
}

function isListOf(req: IncomingMessage, plural: string): boolean {
  const url = new URL(req.url ?? '/', 'http://proxy');
  return req.method === 'GET' && url.pathname.endsWith(`/${plural}`) && !isWatch(req);
}

export async function startListHoldingProxy(): Promise<ListHoldingProxy> {
  const upstream = kubeConfig();
  const server = new URL(upstream.getCurrentCluster()!.server);
  const tls: RequestOptions = {};
  await upstream.applyToHTTPSOptions(tls);
  let hold: { plural: string; released: Promise<void>; listed: () => void } | undefined;
  let watchesCut = false;
  const openWatches = new Set<ServerResponse>();

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (isWatch(req)) {
      if (watchesCut) return void res.writeHead(503).end('watches cut by the test');
      openWatches.add(res);
      res.on('close', () => openWatches.delete(res));
    }
    const held = hold && isListOf(req, hold.plural) ? hold : undefined;
    const out = httpsRequest(
      {
        ...tls,
        hostname: server.hostname,
        port: server.port,
        method: req.method,
        path: req.url,
        headers: { ...tls.headers, ...req.headers, host: server.host },
      },
      (answer) => {
        if (!held) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => {
          held.listed();
          void held.released.then(() => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(body));
          });
        });
      },
    );
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  };

  const proxy: Server = createServer(forward);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'proxy', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'proxy' }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
    currentContext: 'proxy',
  });

  return {
    kubeConfig: kc,
    holdLists(plural) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let listed!: () => void;
      const listedOnce = new Promise<void>((resolve) => (listed = resolve));
      const current = { plural, released, listed };
      hold = current;
      return {
        listed: listedOnce,
        release() {
          if (hold === current) hold = undefined;
          release();
        },
      };
    },
    cutWatches() {
      watchesCut = true;
      for (const res of openWatches) res.destroy();
      return { restore: () => void (watchesCut = false) };
    },
    async stop() {
      hold = undefined;
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
