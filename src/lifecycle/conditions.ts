// Kubernetes-style conditions kept by a workflow: setting a condition keeps its
// lastTransitionTime unless its status changes.
import type { Condition } from '../api/index.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export function setCondition(
  list: readonly Condition[],
  next: { type: string; status: ConditionStatus; reason: string; message: string; observedGeneration?: number },
  nowIso: string,
): Condition[] {
  const previous = list.find((c) => c.type === next.type);
  const lastTransitionTime = previous && previous.status === next.status ? previous.lastTransitionTime : nowIso;
  const condition: Condition = {
    type: next.type,
    status: next.status,
    reason: toReason(next.reason),
    message: next.message.slice(0, 32_768),
    lastTransitionTime,
    ...(next.observedGeneration !== undefined ? { observedGeneration: next.observedGeneration } : {}),
  };
  return [...list.filter((c) => c.type !== next.type), condition].sort((a, b) => a.type.localeCompare(b.type));
}

/** A reason must be CamelCase letters and digits; error types mostly are already. */
export function toReason(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''));
  return /^[A-Za-z]/.test(cleaned) ? cleaned : `R${cleaned || 'Unknown'}`;
}
