// Allocation to allocation on a node, as the apiserver saw it: both designs end an allocation
// with the same kind of write (status.allocations, server-side apply, conditional on the
// resourceVersion read), so the time from one container's write to the next one's on the same
// node is everything a design spends between two consecutive allocations: lock hand-over, reads,
// the allocator, whatever bookkeeping it does. One instrument for both sides: the apiserver's
// audit log, with a policy that records only those writes.
import { objectKey } from '../../src/node/node-allocations.js';

/** Audit only status patches of WekaContainers, at Metadata level, once the response is sent. */
export const STATUS_WRITES_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [patch]
    resources:
      - group: weka.weka.io
        resources: [wekacontainers/status]
  - level: None
`;

export interface StatusWrite {
  /** `namespace/name` of the container. */
  container: string;
  fieldManager: string;
  /** When the apiserver received the request and when it had answered, ms since the epoch (µs precision). */
  receivedAt: number;
  completedAt: number;
}

/** An RFC 3339 time with up to nanoseconds, as ms since the epoch (Date.parse keeps only ms). */
export function preciseTime(text: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(text);
  if (!m) throw new Error(`not an RFC 3339 UTC time: ${JSON.stringify(text)}`);
  return Date.parse(`${m[1]}Z`) + Number(`0.${m[2] ?? '0'}`) * 1000;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/**
 * The successful WekaContainer status patches in an audit log (JSON lines). A line that does not
 * parse is an error, except the last one, which the apiserver may still be writing.
 */
export function parseStatusWrites(log: string): StatusWrite[] {
  const lines = log.split('\n');
  const writes: StatusWrite[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch (err) {
      if (i === lines.length - 1) return;
      throw new Error(`audit log line ${i + 1} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    const ref = e.objectRef;
    if (
      e.stage !== 'ResponseComplete' ||
      e.verb !== 'patch' ||
      ref?.resource !== 'wekacontainers' ||
      ref.subresource !== 'status'
    )
      return;
    const code = e.responseStatus?.code ?? 0;
    if (code < 200 || code >= 300 || !e.requestReceivedTimestamp || !e.stageTimestamp) return;
    const fieldManager = new URL(e.requestURI ?? '', 'https://apiserver').searchParams.get('fieldManager') ?? '';
    writes.push({
      container: objectKey({ namespace: ref.namespace ?? '', name: ref.name ?? '' }),
      fieldManager,
      receivedAt: preciseTime(e.requestReceivedTimestamp),
      completedAt: preciseTime(e.stageTimestamp),
    });
  });
  return writes;
}

/** Each placed container's node, by `namespace/name` (the key of a StatusWrite). */
export function nodesOf(
  namespace: string,
  placements: readonly { name: string; nodeName: string }[],
): Map<string, string> {
  return new Map(placements.map((p) => [objectKey({ namespace, name: p.name }), p.nodeName]));
}

export interface AllocationGap {
  node: string;
  from: string;
  to: string;
  /** From the first write's response to the second write's arrival at the apiserver. */
  ms: number;
}

/**
 * Per node, its containers' allocation writes in order (each container's first write by
 * `fieldManager`); for each consecutive pair where the second container had already asked when
 * the first write was answered, the time until the second write arrived. A container that asked
 * later found the node idle: that wait is not a hand-over.
 */
export function allocationGaps(
  writes: readonly StatusWrite[],
  o: { fieldManager: string; nodeOf: ReadonlyMap<string, string>; askedAt: ReadonlyMap<string, number> },
): AllocationGap[] {
  const first = new Map<string, StatusWrite>();
  for (const w of writes) {
    if (w.fieldManager !== o.fieldManager || !o.nodeOf.has(w.container)) continue;
    const seen = first.get(w.container);
    if (!seen || w.completedAt < seen.completedAt) first.set(w.container, w);
  }
  const byNode = new Map<string, StatusWrite[]>();
  for (const w of first.values()) {
    const node = o.nodeOf.get(w.container)!;
    byNode.set(node, [...(byNode.get(node) ?? []), w]);
  }
  const gaps: AllocationGap[] = [];
  for (const [node, nodeWrites] of byNode) {
    const ordered = nodeWrites.sort((a, b) => a.completedAt - b.completedAt);
    for (let i = 0; i + 1 < ordered.length; i++) {
      const [prev, next] = [ordered[i]!, ordered[i + 1]!];
      const asked = o.askedAt.get(next.container);
      if (asked === undefined || asked > prev.completedAt) continue;
      gaps.push({ node, from: prev.container, to: next.container, ms: next.receivedAt - prev.completedAt });
    }
  }
  return gaps;
}
