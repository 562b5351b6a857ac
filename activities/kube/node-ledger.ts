// Reading and writing a node's allocation ledger (src/node/allocation-ledger.ts), an
// annotation of the Node. Only the node's mutex writes it, and every write is conditional on the
// node's resourceVersion, so a write based on an older read never lands.
import { ApplicationFailure } from '@temporalio/activity';
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import {
  ALLOCATIONS_ANNOTATION,
  decodeLedger,
  encodeLedger,
  type AllocationLedger,
} from '../../src/node/allocation-ledger.js';
import { FIELD_MANAGER } from '../../src/api/names.js';
import { isConflict, orIfMissing } from './errors.js';
import { mergeHeaders } from './weka-api.js';

/** Conditional writes to a node give up after this many lost races (then the activity is retried). */
const LEDGER_WRITE_ATTEMPTS = 10;

/** The node's ledger; a malformed one fails for good: rewriting it would lose what it holds. */
export function ledgerOf(node: V1Node): AllocationLedger {
  const decoded = decodeLedger(node.metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
  if (decoded.ok) return decoded.ledger;
  const name = node.metadata?.name ?? '';
  throw ApplicationFailure.nonRetryable(
    `node ${name}: ${decoded.message}; not overwriting it (fix or remove it by hand, then sign the node's drives again to rebuild it from the devices)`,
    'MalformedAnnotation',
  );
}

/** Writes the ledger if it changed, conditional on the version read; the node's version after it. */
export async function writeLedger(
  core: CoreV1Api,
  node: V1Node,
  ledger: AllocationLedger,
): Promise<string | undefined> {
  const text = encodeLedger(ledger);
  const resourceVersion = node.metadata?.resourceVersion;
  if (node.metadata?.annotations?.[ALLOCATIONS_ANNOTATION] === text) return resourceVersion;
  const patched = await core.patchNode(
    {
      name: node.metadata?.name ?? '',
      fieldManager: FIELD_MANAGER.allocator,
      body: { metadata: { resourceVersion, annotations: { [ALLOCATIONS_ANNOTATION]: text } } },
    },
    mergeHeaders,
  );
  return patched.metadata?.resourceVersion;
}

/**
 * Reads, changes and writes the ledger until no other write came in between (a change that returns
 * the ledger it was given writes nothing); false: no such node.
 */
export async function updateLedger(
  core: CoreV1Api,
  name: string,
  change: (ledger: AllocationLedger) => AllocationLedger,
): Promise<boolean> {
  for (let attempt = 0; attempt < LEDGER_WRITE_ATTEMPTS; attempt++) {
    const node = await orIfMissing(core.readNode({ name }), null);
    if (!node) return false;
    const read = ledgerOf(node);
    const changed = change(read);
    if (changed === read) return true;
    try {
      await writeLedger(core, node, changed);
      return true;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw ApplicationFailure.retryable(
    `node ${name} kept changing while its allocation ledger was written`,
    'NodeConflict',
  );
}
