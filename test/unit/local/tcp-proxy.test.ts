// The fault-injection TCP proxy, with real sockets on loopback: an echo server behind it, clients in
// front of it.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../../deploy/local/tcp-proxy.js';

interface Target {
  port: number;
  /** Connections the target has accepted so far. */
  accepted: Socket[];
  server: Server;
}

/** Echoes every byte back; `greeting` is sent first to each new connection when given. */
async function echoServer(greeting?: string): Promise<Target> {
  const accepted: Socket[] = [];
  const server = createServer((s) => {
    accepted.push(s);
    s.on('error', () => undefined);
    if (greeting !== undefined) s.write(greeting);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, accepted, server };
}

interface Client {
  socket: Socket;
  received: () => string;
  /** Resolves with the error code (or 'closed') once the socket is closed. */
  closed: Promise<string>;
}

async function client(port: number): Promise<Client> {
  const socket = connect({ host: '127.0.0.1', port });
  let data = '';
  let error = '';
  socket.on('data', (c: Buffer) => (data += c.toString()));
  socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(error || 'closed')));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => data, closed };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 3000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(greeting?: string): Promise<{ target: Target; proxy: TcpProxy }> {
  const target = await echoServer(greeting);
  const proxy = await startTcpProxy({ targetPort: target.port, name: 'test' });
  cleanups.push(async () => {
    await proxy.close();
    for (const s of target.accepted) s.destroy();
    await new Promise<void>((resolve) => target.server.close(() => resolve()));
  });
  return { target, proxy };
}

describe('tcp proxy', () => {
  it('forwards bytes both ways, to 127.0.0.1 only', async () => {
    const { target, proxy } = await setup('hello ');
    expect(proxy.port).not.toBe(target.port);
    const c = await client(proxy.port);
    await until('the greeting', () => c.received() === 'hello ');
    c.socket.write('ping');
    await until('the echo', () => c.received() === 'hello ping');
    expect(target.accepted).toHaveLength(1);
    expect(target.accepted[0]!.remoteAddress).toBe('127.0.0.1');
    expect(proxy.stats()).toEqual({ connections: 1, cuts: 0 });
    // A clean close travels through: the target sees the end, the client sees the close.
    c.socket.end();
    expect(await c.closed).toBe('closed');
    await until('the connection to be forgotten', () => proxy.stats().connections === 0);
  });

  it('forwards a large transfer whole and in order', async () => {
    const { proxy } = await setup();
    const c = await client(proxy.port);
    const payload = Buffer.alloc(8 << 20);
    for (let i = 0; i < payload.length; i++) payload[i] = 97 + (i % 26);
    const received: Buffer[] = [];
    let bytes = 0;
    c.socket.on('data', (b: Buffer) => {
      received.push(b);
      bytes += b.length;
    });
    c.socket.write(payload);
    await until('the whole echo', () => bytes === payload.length, 10_000);
    expect(Buffer.concat(received).equals(payload)).toBe(true);
  });

  it("cut('reset') drops every open connection and resets new ones until heal", async () => {
    const { target, proxy } = await setup();
    const a = await client(proxy.port);
    const b = await client(proxy.port);
    a.socket.write('x');
    await until('the echo', () => a.received() === 'x');
    proxy.cut('reset');
    expect(await a.closed).toBe('ECONNRESET');
    expect(await b.closed).toBe('ECONNRESET');
    // The target's ends were reset too.
    await until('the target side to close', () => target.accepted.every((s) => s.destroyed));
    // A new connection is accepted by the kernel and reset at once; it never reaches the target.
    const before = target.accepted.length;
    const late = connect({ host: '127.0.0.1', port: proxy.port });
    const lateEnd = await new Promise<string>((resolve) => {
      late.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      late.on('close', () => resolve('closed'));
    });
    expect(lateEnd).toBe('ECONNRESET');
    expect(target.accepted.length).toBe(before);
    expect(proxy.stats()).toEqual({ connections: 0, cuts: 1 });

    proxy.heal();
    const c = await client(proxy.port);
    c.socket.write('back');
    await until('the echo after heal', () => c.received() === 'back');
  });

  it("cut('blackhole') stalls open and new connections; heal delivers what was held, in order", async () => {
    const { target, proxy } = await setup();
    const a = await client(proxy.port);
    a.socket.write('1');
    await until('the echo', () => a.received() === '1');
    proxy.cut('blackhole');
    a.socket.write('2');
    a.socket.write('3');
    // A new connection is accepted but reaches nothing while the cut lasts.
    const b = await client(proxy.port);
    b.socket.write('b');
    await sleep(300);
    expect(a.received()).toBe('1');
    expect(b.received()).toBe('');
    expect(a.socket.destroyed || b.socket.destroyed).toBe(false);
    expect(target.accepted).toHaveLength(1);
    expect(proxy.stats()).toEqual({ connections: 2, cuts: 1 });

    proxy.heal();
    await until('the held bytes', () => a.received() === '123');
    await until('the new connection to reach the target', () => b.received() === 'b');
    expect(target.accepted).toHaveLength(2);
  });

  it('a close of the target during a blackhole reaches the client only on heal', async () => {
    const { target, proxy } = await setup();
    const a = await client(proxy.port);
    a.socket.write('1');
    await until('the echo', () => a.received() === '1');
    proxy.cut('blackhole');
    target.accepted[0]!.destroy();
    await sleep(200);
    expect(a.socket.destroyed).toBe(false);
    proxy.heal();
    await a.closed;
  });

  it('setLatencyMs delays every chunk by at least that much and keeps their order', async () => {
    const { proxy } = await setup();
    const c = await client(proxy.port);
    proxy.setLatencyMs(150);
    const started = Date.now();
    c.socket.write('a');
    await until('the echo', () => c.received() === 'a');
    // Both directions are delayed: the round trip takes at least twice the latency.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);

    const expected: string[] = [];
    for (let i = 0; i < 40; i++) {
      expected.push(`<${i}>`);
      c.socket.write(`<${i}>`);
      if (i === 20) proxy.setLatencyMs(10); // a later, shorter delay must not overtake earlier chunks
      await sleep(2);
    }
    await until('every chunk', () => c.received().length === 1 + expected.join('').length);
    expect(c.received()).toBe(`a${expected.join('')}`);

    proxy.setLatencyMs(0);
    const fast = Date.now();
    c.socket.write('z');
    await until('the echo without latency', () => c.received().endsWith('z'));
    expect(Date.now() - fast).toBeLessThan(150);
    expect(() => proxy.setLatencyMs(-1)).toThrow(/latency/);
  });

  it('close ends every connection and stops listening', async () => {
    const target = await echoServer();
    const proxy = await startTcpProxy({ targetPort: target.port });
    cleanups.push(async () => {
      for (const s of target.accepted) s.destroy();
      await new Promise<void>((resolve) => target.server.close(() => resolve()));
    });
    const a = await client(proxy.port);
    const b = await client(proxy.port);
    proxy.cut('blackhole');
    await proxy.close();
    await a.closed;
    await b.closed;
    expect(proxy.stats().connections).toBe(0);
    await expect(client(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a target that is down resets the client', async () => {
    const target = await echoServer();
    const port = target.port;
    await new Promise<void>((resolve) => target.server.close(() => resolve()));
    const proxy = await startTcpProxy({ targetPort: port });
    cleanups.push(() => proxy.close());
    const c = await client(proxy.port);
    expect(await c.closed).toBe('ECONNRESET');
  });

  it('listens on the port asked for, and refuses a target that is not a port', async () => {
    const { port: free } = await echoServer().then(async (t) => {
      await new Promise<void>((resolve) => t.server.close(() => resolve()));
      return t;
    });
    const target = await echoServer();
    const proxy = await startTcpProxy({ targetPort: target.port, listenPort: free });
    cleanups.push(async () => {
      await proxy.close();
      for (const s of target.accepted) s.destroy();
      await new Promise<void>((resolve) => target.server.close(() => resolve()));
    });
    expect(proxy.port).toBe(free);
    await expect(startTcpProxy({ targetPort: target.port, listenPort: free })).rejects.toThrow(/cannot listen/);
    await expect(startTcpProxy({ targetPort: 0 })).rejects.toThrow(/targetPort/);
  });
});
