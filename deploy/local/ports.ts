// Free loopback ports for the servers of one control plane.
import { createServer, type Server } from 'node:net';

/**
 * Reserves `count` distinct free ports on 127.0.0.1 by binding them all at once, then releases
 * them for the servers to take. Two control planes started side by side get different ports
 * because each holds its whole set while choosing.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('could not read a bound port');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
