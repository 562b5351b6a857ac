// The activities of a rotate-ssdproxy campaign outside the nodes' mutexes: plan it (the image, the
// proxies, no other campaign running) and judge, per node, whether its proxy may be restarted now:
// every Weka cluster with a container on the node must be healthy, by its own `weka status --json`
// asked in a running member's pod (the reference's gate: weka/weka-operator
// internal/controllers/operations/proxy_disruption_gate.go). A cluster that cannot be asked is not
// healthy: the gate fails closed.
import type { WekaContainer } from '../src/api/index.js';
import { ROTATED_FROM_ANNOTATION, ROTATION_CAMPAIGN_ANNOTATION } from '../src/api/names.js';
import { ROTATE_SSDPROXY_ACTION } from '../src/api/schemas/wekamanualoperation.js';
import { imageAllowed, imageNotAllowedMessage } from '../src/manifests/image-policy.js';
import { labelSelectorText } from '../src/node/sign-drives-request.js';
import { clusterStatusCall, unhealthyReasons } from '../src/weka/cluster-status.js';
import type { ActivityDeps } from './deps.js';
import { orIfMissing } from './kube/errors.js';
import { runningMemberPod } from './kube/member-pod.js';
import { WekaApi } from './kube/weka-api.js';
import type { ProxyDisruptionVerdict, ProxyRotationPlan } from './types.js';
import { wekaCli } from './weka-cli.js';

export function createProxyRotationActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);

  return {
    async planProxyRotation(input: {
      uid: string;
      targetImage?: string | undefined;
      nodeSelector?: Record<string, string> | undefined;
    }): Promise<ProxyRotationPlan> {
      const targetImage = input.targetImage ?? deps.proxyImage;
      if (!imageAllowed(targetImage, deps.allowedImages))
        return {
          ok: false,
          reason: 'ImageNotAllowed',
          message: imageNotAllowedMessage(targetImage, deps.allowedImages),
        };
      const selected =
        input.nodeSelector && Object.keys(input.nodeSelector).length > 0 ? input.nodeSelector : undefined;
      const nodes = selected
        ? new Set(
            (await api.core.listNode({ labelSelector: labelSelectorText(selected) })).items.map(
              (n) => n.metadata?.name,
            ),
          )
        : undefined;
      const containers = (await api.listAllContainers())
        .filter((c) => c.spec.mode === 'ssdproxy' && c.metadata.namespace === deps.operatorNamespace)
        .filter((c) => c.spec.nodeName && (!nodes || nodes.has(c.spec.nodeName)) && !c.metadata.deletionTimestamp);
      const proxies: { node: string; image: string }[] = [];
      // A proxy runs its pod's image: its object's may be ahead of it (a rotation that did not finish).
      for (const c of containers) {
        const pod = await orIfMissing(
          api.core.readNamespacedPod({ namespace: deps.operatorNamespace, name: c.metadata.name! }),
          null,
        );
        proxies.push({ node: c.spec.nodeName!, image: pod?.spec?.containers[0]?.image ?? c.spec.image ?? '' });
      }
      proxies.sort((a, b) => a.node.localeCompare(b.node));
      if (selected && proxies.length === 0)
        return {
          ok: false,
          reason: 'NoProxies',
          message: `no node matching ${labelSelectorText(selected)} has an ssdproxy: nothing to rotate`,
        };
      const taken = await claim(containers, input.uid);
      if (taken)
        return {
          ok: false,
          reason: 'AnotherCampaignRunning',
          message: `rotate-ssdproxy ${taken.campaign} has not ended and holds the ssdproxy of node ${taken.node}: one campaign rotates a node's proxy at a time; create this one again once it has ended`,
        };
      return { ok: true, targetImage, proxies };
    },

    /** The Weka clusters with a drive container on the node, each with why a restart of its proxy must wait. */
    async proxyDisruptionVerdict({ node }: { node: string }): Promise<ProxyDisruptionVerdict> {
      const onNode = (await api.listContainersOnNode(node)).filter((c) => c.spec.mode === 'drive');
      const guids = [...new Set(onNode.map((c) => c.status?.clusterGUID).filter((g): g is string => !!g))].sort();
      const everyone = guids.length > 0 ? await api.listAllContainers() : [];
      const clusters: ProxyDisruptionVerdict['clusters'] = [];
      for (const clusterGUID of guids) {
        const containers = onNode.filter((c) => c.status?.clusterGUID === clusterGUID).map(nameOf);
        const members = everyone.filter((c) => c.spec.mode === 'drive' && c.status?.clusterGUID === clusterGUID);
        clusters.push({ clusterGUID, containers, reasons: await reasonsOf(members, node) });
      }
      return { allowed: clusters.every((c) => c.reasons.length === 0), clusters };
    },
  };

  /**
   * Claims each proxy for the campaign `uid` (an annotation on its object, each write conditional on
   * the object's resourceVersion: of two campaigns claiming at once, one write fails and its
   * activity is retried, and sees the other's claim). A claim by a campaign that has ended, is
   * being deleted or is gone is taken over, forgetting the image it rotated from. Returns the first
   * proxy another live campaign holds.
   */
  async function claim(
    containers: readonly WekaContainer[],
    uid: string,
  ): Promise<{ node: string; campaign: string } | undefined> {
    const live = await api.liveOperations(ROTATE_SSDPROXY_ACTION);
    for (const c of [...containers].sort((a, b) => a.spec.nodeName!.localeCompare(b.spec.nodeName!))) {
      const holder = c.metadata.annotations?.[ROTATION_CAMPAIGN_ANNOTATION];
      if (holder === uid) continue;
      const campaign = holder !== undefined ? live.get(holder) : undefined;
      if (campaign !== undefined) return { node: c.spec.nodeName!, campaign };
      await api.patchMetadata(
        'WekaContainer',
        { namespace: c.metadata.namespace!, name: c.metadata.name! },
        {
          annotations: { [ROTATION_CAMPAIGN_ANNOTATION]: uid, [ROTATED_FROM_ANNOTATION]: null },
          resourceVersion: c.metadata.resourceVersion,
        },
      );
    }
    return undefined;
  }

  async function reasonsOf(members: readonly WekaContainer[], node: string): Promise<string[]> {
    // Members elsewhere first: one on this node stops answering while its proxy restarts.
    const elsewhereFirst = [...members].sort(
      (a, b) => Number(a.spec.nodeName === node) - Number(b.spec.nodeName === node),
    );
    const target = await runningMemberPod(api, elsewhereFirst);
    if (!target) return ['no member of the cluster has a running pod to ask its status'];
    try {
      return unhealthyReasons(await run(target, clusterStatusCall()));
    } catch (err) {
      return [`its status could not be read in ${target.namespace}/${target.pod}: ${(err as Error).message}`];
    }
  }
}

const nameOf = (c: WekaContainer): string => `${c.metadata.namespace}/${c.metadata.name}`;
