// A namespace's ResourceQuota counts its drive containers' pods, and a pod's requests never change
// once it is made (pods.ts): a container grown in place holds more than its pod asks for, which
// the quota does not see. So the node's mutex checks each allocation itself against the quota's
// hard limits on the operator's resources, counting what every container of the namespace holds
// (its allocation, as the pod it would make asks for it), not what their pods ask for.
import { quantityValue } from '../api/quantity.js';

/** A ResourceQuota's hard limits, by quota resource name (`requests.weka.io/drives`, ...). */
export interface QuotaLimits {
  name: string;
  hard: Readonly<Record<string, string>>;
}

/** Why an allocation would take its namespace past a quota. */
export interface QuotaExcess {
  quota: string;
  /** The quota's resource name, `requests.<extended resource>`. */
  resource: string;
  hard: number;
  /** What the other containers of the namespace hold of it. */
  held: number;
  /** What the asking container would hold of it. */
  wants: number;
}

/**
 * The first quota limit that `wants` (the asking container's pod requests with its new allocation)
 * would exceed, once `others` (the same for every other container of its namespace) is counted;
 * undefined when every quota allows it. Limits on other resources are left to the apiserver.
 */
export function quotaExcess(
  quotas: readonly QuotaLimits[],
  others: readonly Readonly<Record<string, string>>[],
  wants: Readonly<Record<string, string>>,
): QuotaExcess | undefined {
  for (const [resource, amount] of Object.entries(wants)) {
    const asked = quantityValue(amount);
    if (!(asked > 0)) continue;
    const held = others.reduce((sum, r) => sum + (r[resource] === undefined ? 0 : quantityValue(r[resource])), 0);
    for (const q of quotas) {
      const limit = q.hard[`requests.${resource}`];
      if (limit === undefined) continue;
      const hard = quantityValue(limit);
      if (held + asked > hard) return { quota: q.name, resource: `requests.${resource}`, hard, held, wants: asked };
    }
  }
  return undefined;
}

/** The refusal's message, in the words the apiserver uses for a pod beyond a quota. */
export function quotaExcessMessage(e: QuotaExcess): string {
  return `exceeded quota: ${e.quota}, requested: ${e.resource}=${e.wants}, used: ${e.resource}=${e.held}, limited: ${e.resource}=${e.hard} (counting what every container of the namespace holds, grown in place or not)`;
}
