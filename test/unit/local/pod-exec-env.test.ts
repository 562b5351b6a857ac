// What a pod's execs get in the local control plane: the Weka container's part of its environment.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { execEnvOf } from '../../../deploy/local/pod-exec-env.js';

const noApi = {} as CoreV1Api;
const wekaEnv = [
  { name: 'NAME', value: 'ns_d0' },
  { name: 'MODE', value: 'drive' },
  { name: 'PORT', value: '35000' },
  { name: 'AGENT_PORT', value: '35100' },
  { name: 'JOIN_IPS', value: '10.0.0.5:14000' },
  { name: 'MANAGEMENT_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
];
const pod = (o: { podIP?: string; hostPID?: boolean; env?: object[] }): V1Pod => ({
  spec: { hostPID: o.hostPID ?? false, containers: [{ name: 'weka', env: (o.env ?? wekaEnv) as never }] },
  status: o.podIP ? { podIP: o.podIP } : {},
});

describe("a pod's exec environment", () => {
  it('carries what its image sets its Weka container up from, and its IP as MANAGEMENT_IP', async () => {
    expect(await execEnvOf(noApi, pod({ podIP: '10.244.0.7' }))).toEqual({
      NAME: 'ns_d0',
      PORT: '35000',
      AGENT_PORT: '35100',
      JOIN_IPS: '10.0.0.5:14000',
      MANAGEMENT_IP: '10.244.0.7',
    });
  });

  it('waits for the IP of a pod that runs at once, but not for one that runs only once it is written', async () => {
    expect(await execEnvOf(noApi, pod({}))).toBeNull();
    expect(await execEnvOf(noApi, pod({ hostPID: true }))).toEqual({
      WEKA_SIM_HOST_PID: 'true',
      NAME: 'ns_d0',
      PORT: '35000',
      AGENT_PORT: '35100',
      JOIN_IPS: '10.0.0.5:14000',
    });
  });

  it('is empty for a pod that runs no Weka container', async () => {
    expect(await execEnvOf(noApi, pod({ env: [] }))).toEqual({});
  });
});
