// Free loopback ports for the servers of one control plane.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Where the chosen ports come from when the kernel's ephemeral range leaves room below it. */
const LOWEST_PORT = 20_000;

/**
 * The ports below the kernel's ephemeral range: the kernel never hands these out as the source port
 * of an outgoing connection, so one that is free when chosen stays free until its server binds it
 * (unless another listener takes the very same port). Undefined when there is no room below.
 */
function portsBelowEphemeral(): { low: number; high: number } | undefined {
  let ephemeralLow = 32_768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // Not Linux: keep the IANA default.
  }
  return Number.isInteger(ephemeralLow) && ephemeralLow - LOWEST_PORT >= 1_000
    ? { low: LOWEST_PORT, high: ephemeralLow - 1 }
    : undefined;
}

async function listen(server: Server, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(false) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
}

/**
 * Reserves `count` distinct free ports on 127.0.0.1 by binding them all at once, then releases
 * them for the servers to take. Two control planes started side by side get different ports
 * because each holds its whole set while choosing.
 */
export async function freePorts(count: number): Promise<number[]> {
  const range = portsBelowEphemeral();
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let tries = 0; ports.length < count; tries++) {
      const wanted = range && tries < count * 50 ? range.low + Math.floor(Math.random() * (range.high - range.low)) : 0;
      if (ports.includes(wanted)) continue;
      const server = createServer();
      if (!(await listen(server, wanted))) continue;
      servers.push(server);
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('could not read a bound port');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
