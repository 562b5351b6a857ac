// What a kubelet's killing a pod's processes means to Weka, for the fake nodes: a drive
// container's Weka container runs in its pod, so once the pod is deleted or has ended its process
// is gone and its ports on the host are free (its cluster still lists it until someone removes it);
// once a pod of that name runs again, so does the process. Watches the drive containers' pods and
// tells the node's simulator (weka-sim's `process` command), one change at a time, in order.
import { CoreV1Api, makeInformer, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL, wekaContainerName } from '../../src/api/names.js';
import { simulate } from './shared-drives.js';

export interface PodProcessWatch {
  stop(): Promise<void>;
}

const SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY},${ROLE_LABEL}=drive`;

export function startPodProcessWatch(
  kc: KubeConfig,
  o: { simulatorRoot: string; knownNode: (node: string) => boolean; log: (message: string) => void },
): PodProcessWatch {
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces({ labelSelector: SELECTOR }),
    SELECTOR,
  );
  let stopped = false;
  /** Per pod uid, what was told; a process is running until told otherwise, so only a restart is told. */
  const told = new Map<string, 'gone' | 'running'>();
  /** The node and Weka name of every process told gone: a pod of that name that runs restarts it. */
  const goneNames = new Set<string>();
  let queue = Promise.resolve();

  const tell = (pod: V1Pod, state: 'gone' | 'running') => {
    const { namespace = '', name = '', uid = '' } = pod.metadata ?? {};
    const node = pod.spec?.nodeName;
    if (!node || !o.knownNode(node) || told.get(uid) === state) return;
    const weka = wekaContainerName(namespace, name);
    const key = `${node} ${weka}`;
    told.set(uid, state);
    if (state === 'running' && !goneNames.delete(key)) return;
    if (state === 'gone') {
      goneNames.add(key);
      setTimeout(() => told.delete(uid), 60_000).unref();
    }
    queue = queue
      .then(() => simulate(o.simulatorRoot, node, 'process', '--name', weka, state))
      .then(
        () => undefined,
        (err: unknown) => o.log(`pod processes: ${namespace}/${name} on ${node} ${state}: ${String(err)}`),
      );
  };
  const look = (pod: V1Pod) => {
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') tell(pod, 'gone');
    else if (phase === 'Running' && !pod.metadata?.deletionTimestamp) tell(pod, 'running');
  };
  informer.on('add', look);
  informer.on('update', look);
  informer.on('delete', (pod) => tell(pod, 'gone'));
  informer.on('error', () => {
    setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, 1000).unref();
  });
  void informer.start().catch(() => undefined);
  return {
    async stop() {
      stopped = true;
      await informer.stop().catch(() => undefined);
      await queue;
    },
  };
}
