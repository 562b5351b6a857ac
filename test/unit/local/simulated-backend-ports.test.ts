import { describe, expect, it } from 'vitest';
import { SIMULATED_BACKEND_SLOTS, simulatedBackendPorts } from '../../../deploy/local/shared-drives.js';
import { CLUSTER_PORT_RANGE_START } from '../../../src/allocation/ports.js';

// A simulated cluster's backend sits on a node the operator also uses: its ports must never be
// ones the operator gives a WekaCluster, or the simulator refuses to start the cluster's containers.
describe("a simulated cluster's backend ports", () => {
  it('stay below every cluster port range, and no two slots share a port', () => {
    const used = new Set<number>();
    for (let slot = 0; slot < SIMULATED_BACKEND_SLOTS; slot++) {
      const { port, agentPort } = simulatedBackendPorts(slot);
      expect(agentPort).toBeGreaterThanOrEqual(port + 100);
      expect(agentPort).toBeLessThan(CLUSTER_PORT_RANGE_START);
      for (const p of [...Array.from({ length: 100 }, (_, i) => port + i), agentPort]) {
        expect(used.has(p)).toBe(false);
        used.add(p);
      }
    }
  });
});
