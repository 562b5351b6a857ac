import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../../deploy/local/ports.js';

function ephemeralLow(): number {
  return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
}

async function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('freePorts', () => {
  it('chooses distinct free ports below the ephemeral range, which outgoing connections never take', async () => {
    const ports = await freePorts(40);
    expect(new Set(ports).size).toBe(40);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralLow());
      expect(await bindable(port)).toBe(true);
    }
  });

  it('never chooses a port that is being listened on', async () => {
    const taken = await freePorts(1);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(taken[0], '127.0.0.1', () => resolve()));
    try {
      for (let i = 0; i < 5; i++) expect(await freePorts(200)).not.toContain(taken[0]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
