// `npm run controlplane`: starts the local control plane alone and keeps it up until Ctrl-C.
//   --data-dir DIR   keep state in DIR (reused on the next start)
//   --nodes N        fake nodes to create (default 0), each with two TLC and two QLC devices
import { parseArgs } from 'node:util';
import { ControlPlane } from './control-plane.js';

const { values } = parseArgs({
  options: { 'data-dir': { type: 'string' }, nodes: { type: 'string', default: '0' } },
});
const nodeCount = Number(values.nodes);
if (!Number.isInteger(nodeCount) || nodeCount < 0) {
  console.error(`--nodes must be a whole number, got "${values.nodes}"`);
  process.exit(1);
}

const cp = await ControlPlane.start(values['data-dir'] === undefined ? {} : { dataDir: values['data-dir'] });
let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the control plane ...`);
  cp.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

for (let i = 1; i <= nodeCount; i++) {
  await cp.addNode({
    name: `weka-node-${i}`,
    devices: [
      { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
      { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' },
      { path: '/dev/nvme2n1', capacityGiB: 30720, type: 'QLC' },
      { path: '/dev/nvme3n1', capacityGiB: 30720, type: 'QLC' },
    ],
  });
}
console.log(`
Local control plane is up (Ctrl-C stops it).
  kubeconfig:   ${cp.kubeconfigPath}
                KUBECONFIG=${cp.kubeconfigPath} kubectl get nodes
  apiserver:    ${cp.apiserverUrl}
  Temporal:     ${cp.temporalAddress} (namespace ${cp.temporalNamespace})
  Temporal UI:  ${cp.temporalUiUrl}
  simulator:    ${cp.simulatorRoot}
  logs:         ${cp.logDir}
`);
setInterval(() => undefined, 1 << 30);
