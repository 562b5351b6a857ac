// Where to run a Weka command that any member of a cluster can answer: the member's own pod, while
// it runs on a Ready node and belongs to that very container (its uid label).
import type { WekaContainer } from '../../src/api/index.js';
import { WEKA_POD_CONTAINER } from '../../src/api/names.js';
import { OWNER_UID_LABEL } from '../../src/manifests/pods.js';
import type { ExecTargetRef } from '../types.js';
import { orIfMissing } from './errors.js';
import type { WekaApi } from './weka-api.js';

/** The first of `candidates` whose own pod runs on a Ready node, as an exec target; null when none does. */
export async function runningMemberPod(
  api: WekaApi,
  candidates: readonly WekaContainer[],
  exceptUid?: string,
): Promise<ExecTargetRef | null> {
  for (const c of candidates) {
    if (c.metadata.uid === exceptUid || !c.spec.nodeName) continue;
    const at = { namespace: c.metadata.namespace!, name: c.metadata.name! };
    const pod = await orIfMissing(api.core.readNamespacedPod(at), null);
    if (pod?.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) continue;
    if (pod.metadata?.labels?.[OWNER_UID_LABEL] !== c.metadata.uid) continue;
    const node = await orIfMissing(api.core.readNode({ name: c.spec.nodeName }), null);
    const ready = node?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
    if (ready) return { namespace: at.namespace, pod: at.name, container: WEKA_POD_CONTAINER };
  }
  return null;
}
