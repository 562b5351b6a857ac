// What the activities close over. Built once per worker process.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AllocationSettings } from '../src/allocation/index.js';
import type { decideNodeAllocations } from '../src/node/node-allocations.js';
import type { ExecTransport } from './exec/transport.js';

export interface ActivityDeps {
  kubeConfig: KubeConfig;
  exec: ExecTransport;
  /** Used to signal-with-start mutex workflows. */
  temporal: Client;
  /** The task queue the operator's workflows run on; mutex workflows run on mutexTaskQueue(taskQueue). */
  taskQueue: string;
  logger: Logger;
  /** Operator defaults, the first link of the settings chain. */
  settings: AllocationSettings;
  /** Where the operator's own objects (ssdproxy containers and pods) live. */
  operatorNamespace: string;
  /** Image of the ssdproxy containers the operator creates; it passes allowedImages (the settings check it). */
  proxyImage: string;
  /**
   * The images the operator creates pods from (src/manifests/image-policy.ts): a drive container
   * whose spec.image is not one of them never gets a pod.
   */
  allowedImages: readonly string[];
  /** The priority class of the pods the operator makes (WEKA_POD_PRIORITY_CLASS); none when unset. */
  podPriorityClass?: string;
  /**
   * How long a cluster member's node may be NotReady before the member is replaced on another
   * node (WEKA_NODE_LOSS_GRACE_SECONDS); 5 minutes when unset.
   */
  nodeLossGraceMs?: number;
  /**
   * The allocation decision, decideNodeAllocations unless replaced. Only a test's own entry point
   * replaces it (test/chaos/broken-operator.ts, to prove the chaos checker catches a
   * double allocation); the operator's main never does and no setting can.
   */
  decideAllocations?: typeof decideNodeAllocations;
  /**
   * Told of each Warning Event recorded on a Node, by its reason, e.g. to count them as a metric:
   * an Event expires (an hour by default), a counter's increase can be alerted on.
   */
  onNodeWarning?: (reason: string) => void;
  /** Wraps every activity by name, e.g. to record its duration and result as metrics. */
  instrument?: <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) => (...args: A) => Promise<R>;
}
