// The pods the operator creates, as plain manifests: a drive container's pod and a node's
// ssdproxy pod. Both run on their node and see the node's ssdproxy directory.
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  ROLE_LABEL,
  SSDPROXY_HOST_PATH,
  SSDPROXY_MOUNT_PATH,
  WEKA_POD_CONTAINER,
} from './names.js';

export interface PodManifest {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    nodeName: string;
    restartPolicy: 'Always';
    containers: Array<{
      name: string;
      image: string;
      securityContext: { privileged: boolean };
      volumeMounts: Array<{ name: string; mountPath: string }>;
    }>;
    volumes: Array<{ name: string; hostPath: { path: string; type: 'DirectoryOrCreate' } }>;
    imagePullSecrets?: Array<{ name: string }>;
  };
}

export interface WekaPodInput {
  name: string;
  namespace: string;
  node: string;
  image: string;
  role: 'drive' | 'ssdproxy';
  /** The WekaContainer the pod belongs to, recorded for people and tools. */
  owner: string;
  imagePullSecret?: string | undefined;
}

export function wekaPod(input: WekaPodInput): PodManifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: input.role },
      annotations: { 'weka.weka.io/container': input.owner },
    },
    spec: {
      nodeName: input.node,
      restartPolicy: 'Always',
      containers: [
        {
          name: WEKA_POD_CONTAINER,
          image: input.image,
          // Weka containers drive NVMe devices and huge pages directly.
          securityContext: { privileged: true },
          volumeMounts: [{ name: 'ssdproxy', mountPath: SSDPROXY_MOUNT_PATH }],
        },
      ],
      volumes: [{ name: 'ssdproxy', hostPath: { path: SSDPROXY_HOST_PATH, type: 'DirectoryOrCreate' } }],
      ...(input.imagePullSecret ? { imagePullSecrets: [{ name: input.imagePullSecret }] } : {}),
    },
  };
}
