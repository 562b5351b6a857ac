// A TCP proxy on loopback for fault injection: clients connect to 127.0.0.1:<port> and every byte
// goes on to 127.0.0.1:<targetPort>, unchanged (TLS passes through: it only forwards bytes). The
// chaos tests put it in front of a server to cut the network between a client and that server.
//
// Faults:
// - cut('reset'): every open connection is reset (RST to both ends) and every new one is accepted
//   and reset at once, as when a firewall rejects the traffic.
// - cut('blackhole'): connections stay open but no byte moves in either direction, and new ones are
//   accepted and stay silent (their upstream connection is only made on heal), as when the network
//   drops every packet. A close or an error of one end is held too: it reaches the other end on heal.
// - heal(): forwarding resumes. What was held during a blackhole is DELIVERED, in order (TCP
//   retransmits what a partition dropped, so a connection that outlives the partition gets every
//   byte): the proxy stops reading while the cut lasts, so the senders' kernel buffers hold the
//   rest and their writes eventually block, as on a real partition.
// - setLatencyMs(ms): every chunk is held at least `ms` after it arrived before it is passed on,
//   in both directions; the order is kept.
//
// The target host is always 127.0.0.1: nothing else can be reached through it.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxyOptions {
  /** The port on 127.0.0.1 the bytes go to. */
  targetPort: number;
  /** The port on 127.0.0.1 to listen on; a free one when absent. */
  listenPort?: number;
  /** Names the proxy in its errors. */
  name?: string;
}

export type CutMode = 'reset' | 'blackhole';

export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** See the faults at the top of tcp-proxy.ts; a second cut replaces the first. */
  cut(mode: CutMode): void;
  heal(): void;
  setLatencyMs(ms: number): void;
  /** `connections`: client connections open now; `cuts`: cut() calls so far. */
  stats(): { connections: number; cuts: number };
  /** Stops listening and destroys every connection; resolves once the listener is closed. */
  close(): Promise<void>;
}

/** A lane stops reading its source while this many bytes wait in it. */
const LANE_HIGH_WATER = 1 << 20;

type Mode = 'open' | CutMode;

interface Shared {
  mode(): Mode;
  latencyMs(): number;
}

/** One direction of one connection: what was read from `src` and waits to be written to `dst`. */
class Lane {
  private readonly queue: { due: number; data: Buffer }[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private waitingDrain = false;
  private ended = false;
  dst: Socket | undefined;

  constructor(
    private readonly src: Socket,
    private readonly shared: Shared,
    /** Called once `src` has ended and everything it sent was written to `dst`. */
    private readonly onFlushed: () => void,
  ) {
    src.on('data', (data: Buffer) => this.push(data));
    src.on('end', () => {
      this.ended = true;
      this.pump();
    });
  }

  /** `src` ended and every byte it sent was passed on (and `dst` was ended). */
  flushed(): boolean {
    return this.ended && this.queue.length === 0;
  }

  private push(data: Buffer): void {
    this.queue.push({ due: Date.now() + this.shared.latencyMs(), data });
    this.queuedBytes += data.length;
    if (this.queuedBytes >= LANE_HIGH_WATER) this.src.pause();
    this.pump();
  }

  /** Writes what is due, unless the network is cut, the destination is not there yet or is full. */
  pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.shared.mode() !== 'open') {
      this.src.pause();
      return;
    }
    const dst = this.dst;
    if (!dst || dst.destroyed || this.waitingDrain) return;
    while (this.queue.length > 0) {
      const wait = this.queue[0]!.due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        break;
      }
      const { data } = this.queue.shift()!;
      this.queuedBytes -= data.length;
      if (!dst.write(data)) {
        this.waitingDrain = true;
        dst.once('drain', () => {
          this.waitingDrain = false;
          this.pump();
        });
        return;
      }
    }
    if (this.flushed()) {
      if (!dst.writableEnded) dst.end();
      this.onFlushed();
    } else if (this.queuedBytes < LANE_HIGH_WATER && !this.ended) {
      this.src.resume();
    }
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.queuedBytes = 0;
  }
}

/**
 * One client connection and its upstream one. A clean close travels as bytes do (an 'end' goes
 * down the lane after the data before it); an error or reset of one end destroys the other; an
 * end that closed ends the other once what it sent was passed on. While the network is cut, none
 * of that happens until heal.
 */
class Connection {
  upstream: Socket | undefined;
  private readonly toUpstream: Lane;
  private toClient: Lane | undefined;
  private failed = false;
  private done = false;

  constructor(
    readonly client: Socket,
    private readonly targetPort: number,
    private readonly shared: Shared,
    private readonly onDone: (c: Connection) => void,
  ) {
    client.setNoDelay(true);
    this.toUpstream = new Lane(client, shared, () => this.settle());
    this.watch(client);
  }

  private watch(socket: Socket): void {
    socket.on('error', () => {
      this.failed = true;
      this.settle();
    });
    socket.on('close', (hadError: boolean) => {
      if (hadError) this.failed = true;
      this.settle();
    });
  }

  private connectUpstream(): void {
    if (this.upstream || this.done) return;
    const upstream = connect({ host: '127.0.0.1', port: this.targetPort, allowHalfOpen: true });
    upstream.setNoDelay(true);
    this.upstream = upstream;
    this.toClient = new Lane(upstream, this.shared, () => this.settle());
    this.toClient.dst = this.client;
    this.watch(upstream);
    upstream.once('connect', () => {
      this.toUpstream.dst = upstream;
      this.pump();
    });
  }

  pump(): void {
    if (this.done) return;
    if (this.shared.mode() === 'open') this.connectUpstream();
    this.toUpstream.pump();
    this.toClient?.pump();
    this.settle();
  }

  private settle(): void {
    if (this.done) return;
    const { client, upstream } = this;
    if (client.destroyed && (upstream === undefined || upstream.destroyed)) return this.finish();
    if (this.shared.mode() !== 'open') return;
    if (this.failed) return this.reset();
    if (client.destroyed && upstream === undefined) return this.destroy();
    if (client.destroyed && this.toUpstream.flushed()) destroyOnceWritten(upstream!);
    if (upstream?.destroyed && this.toClient?.flushed() === true) destroyOnceWritten(client);
  }

  private finish(): void {
    this.done = true;
    this.toUpstream.clear();
    this.toClient?.clear();
    this.onDone(this);
  }

  destroy(): void {
    if (this.done) return;
    this.client.destroy();
    this.upstream?.destroy();
    this.finish();
  }

  reset(): void {
    if (this.done) return;
    resetSocket(this.client);
    if (this.upstream) resetSocket(this.upstream);
    this.finish();
  }
}

/** Destroys a socket that was ended once its last bytes have left for the kernel. */
function destroyOnceWritten(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableFinished) socket.destroy();
  else socket.once('finish', () => socket.destroy());
}

function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export async function startTcpProxy(o: TcpProxyOptions): Promise<TcpProxy> {
  const name = o.name ?? `tcp-proxy(127.0.0.1:${o.targetPort})`;
  if (!Number.isInteger(o.targetPort) || o.targetPort < 1 || o.targetPort > 65535)
    throw new Error(`${name}: targetPort must be a port number, got ${String(o.targetPort)}`);
  let mode: Mode = 'open';
  let latencyMs = 0;
  let cuts = 0;
  const shared: Shared = { mode: () => mode, latencyMs: () => latencyMs };
  const connections = new Set<Connection>();

  const server: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    if (mode === 'reset') {
      client.on('error', () => undefined);
      resetSocket(client);
      return;
    }
    const c = new Connection(client, o.targetPort, shared, (done) => connections.delete(done));
    connections.add(c);
    c.pump();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`${name}: cannot listen on 127.0.0.1:${o.listenPort ?? 0}: ${err.message}`)),
    );
    server.listen(o.listenPort ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${name}: did not bind`);

  return {
    port: address.port,
    cut(m: CutMode): void {
      cuts++;
      mode = m;
      for (const c of [...connections]) {
        if (m === 'reset') c.reset();
        else c.pump();
      }
    },
    heal(): void {
      mode = 'open';
      for (const c of [...connections]) c.pump();
    },
    setLatencyMs(ms: number): void {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`${name}: latency must be >= 0 ms, got ${ms}`);
      latencyMs = ms;
    },
    stats: () => ({ connections: connections.size, cuts }),
    close: async (): Promise<void> => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of [...connections]) c.destroy();
      await closed;
    },
  };
}
