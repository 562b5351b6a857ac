// A small HTTP endpoint on 127.0.0.1 through which test processes ask the control plane (which
// lives in another process) to add or remove a fake node or to restart Temporal.
import { createServer, type Server } from 'node:http';
import type { ControlPlane } from './control-plane.js';
import type { NodeSpec } from './fake-nodes.js';

export interface ControlApi {
  url: string;
  close(): Promise<void>;
}

async function readJson(req: import('node:http').IncomingMessage): Promise<unknown> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body === '' ? {} : JSON.parse(body);
}

export async function serveControlApi(cp: ControlPlane): Promise<ControlApi> {
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const handle = async (): Promise<unknown> => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'POST' && url.pathname === '/nodes') {
        await cp.addNode((await readJson(req)) as NodeSpec);
        return { ok: true };
      }
      const nodeMatch = /^\/nodes\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'DELETE' && nodeMatch) {
        await cp.removeNode(decodeURIComponent(nodeMatch[1]!), url.searchParams.get('keepObject') !== 'true');
        return { ok: true };
      }
      const kubeletMatch = /^\/nodes\/([^/]+)\/kubelet\/(stop|start)$/.exec(url.pathname);
      if (req.method === 'POST' && kubeletMatch) {
        const name = decodeURIComponent(kubeletMatch[1]!);
        if (kubeletMatch[2] === 'stop')
          await cp.stopNodeKubelet(name, { markNotReady: url.searchParams.get('markNotReady') === 'true' });
        else await cp.startNodeKubelet(name);
        return { ok: true };
      }
      if (req.method === 'POST' && url.pathname === '/temporal/stop') {
        await cp.stopTemporal();
        return { ok: true };
      }
      if (req.method === 'POST' && url.pathname === '/temporal/start') {
        await cp.startTemporal();
        return { ok: true, startupMs: cp.timings.temporal };
      }
      if (req.method === 'GET' && url.pathname === '/nodes') return { nodes: cp.nodeNames() };
      throw Object.assign(new Error(`no route ${req.method} ${url.pathname}`), { status: 404 });
    };
    handle().then(
      (body) => reply(200, body),
      (err: Error & { status?: number }) => reply(err.status ?? 500, { error: err.message }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('control API did not bind');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
