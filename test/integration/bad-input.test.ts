// Bad input refused before anything runs. A table: every row sends one bad input, reads the
// message where the user sees it (the apiserver's rejection, the WekaInputError that a sign-drives
// result or a failed step carries, the WekaOutputError of a Weka call), and checks that nothing
// was lost: no object stored or changed, no command run on the node.
// Bad input that only shows while a workflow runs (capacity, annotations, vanished nodes,
// truncated output at run time) is in bad-input-runtime.test.ts.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type Activities } from '../../activities/index.js';
import type { ExecTargetRef } from '../../activities/types.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import {
  API_GROUP,
  API_VERSION,
  WEKA_CLUSTER_KIND,
  WEKA_CONTAINER_KIND,
  WEKA_MANUAL_OPERATION_RULES,
} from '../../src/api/index.js';
import { proxyName, WEKA_POD_CONTAINER } from '../../src/api/names.js';
import {
  completeCall,
  containerListCall,
  driveListCall,
  readDriveCall,
  WekaInputError,
  WekaOutputError,
  type WekaCall,
} from '../../src/weka/index.js';
import {
  CREATE_VIOLATIONS,
  signDrives,
  UPDATE_VIOLATIONS,
  type CreateViolation,
  type UpdateViolation,
} from '../unit/api/rule-violations.js';
import { rejection } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { createSignDrivesOperation, readNode } from '../support/manual-operation.js';
import { sharedDrivesNode, startTestOperator, type TestOperator } from '../support/operator.js';
import { createWekaCluster, simulatorLog, type SimLogEntry } from '../support/simulator.js';

type Manifest = Record<string, unknown>;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const PLURALS: Record<string, string> = {
  WekaContainer: 'wekacontainers',
  WekaCluster: 'wekaclusters',
  WekaManualOperation: 'wekamanualoperations',
};
const DEVICE = { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const };

/** Device paths a shell would read as more than one path; the apiserver and the Weka calls refuse them all. */
const SHELL_DEVICE_PATHS = [
  '/dev/nvme0n1; reboot',
  '/dev/$(reboot)',
  '/dev/nvme0n1 && true',
  '/dev/`id`',
  '/dev/nvme0n1|tee /tmp/x',
  "/dev/nvme0n1'",
];

let op: TestOperator;
let acts: Activities;
let namespace: string;
let node: string;
let proxy: ExecTargetRef;
let clusterGUID: string;
let signing: { namespace: string; name: string; uid: string };

beforeAll(async () => {
  op = await startTestOperator();
  acts = createActivities(op.deps);
  namespace = await uniqueNamespace('bad-input');
  const label = { 'weka.io/drive-sharing': uniqueName('bad-input') };
  node = await sharedDrivesNode([DEVICE], 'bad-input', label);
  // The operation a sign-drive request must name: it selects the node and lists the good device.
  const ref = { namespace, name: 'sign-control' };
  const payload = { type: 'device-paths', nodeSelector: label, devicePaths: [DEVICE.path], shared: true };
  signing = { ...ref, ...(await createSignDrivesOperation(ref, payload)) };
  clusterGUID = await createWekaCluster(node, 'bad-input');
  // A running proxy pod: a command that got past validation would really run, and be logged.
  expect((await acts.ensureProxy({ node })).ok).toBe(true);
  proxy = { namespace: op.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
});
afterAll(async () => {
  await op?.stop();
  // The control operation never ran: drop it, so that a later test file's watcher does not run it.
  if (signing) {
    const api = kubeConfig().makeApiClient(CustomObjectsApi);
    const ref = { ...where({ kind: 'WekaManualOperation' }), name: signing.name };
    await api.patchNamespacedCustomObject({ ...ref, body: { metadata: { finalizers: null } } }, mergePatch);
    await api.deleteNamespacedCustomObject(ref);
  }
});

// ---- where the user sees it ---------------------------------------------------------------

function where(manifest: Manifest) {
  return { group: API_GROUP, version: API_VERSION, namespace, plural: PLURALS[String(manifest['kind'])]! };
}
const nameOf = (manifest: Manifest): string => (manifest['metadata'] as { name: string }).name;

/** The apiserver's refusal, which must be a 422: its Status message. */
async function rejectionMessage(request: Promise<unknown>): Promise<string> {
  const { code, message } = await rejection(request);
  expect(code).toBe(422);
  return message;
}

/** The error a call or an activity threw, which must be of this class. */
async function thrown(kind: typeof WekaInputError | typeof WekaOutputError, work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (err) {
    expect(err).toBeInstanceOf(kind);
    return (err as Error).message;
  }
  throw new Error(`expected a ${kind.name}, but nothing was thrown`);
}

// ---- what must not be lost ----------------------------------------------------------------

async function stored(manifest: Manifest): Promise<Manifest | null> {
  try {
    return (await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...where(manifest), name: nameOf(manifest) })) as Manifest;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
}

/** Runs `work` and returns the simulator log lines the node got meanwhile. */
async function commandsDuring(work: () => Promise<unknown>): Promise<SimLogEntry[]> {
  const before = (await simulatorLog(node)).length;
  await work();
  return (await simulatorLog(node)).slice(before);
}

// ---- the table ----------------------------------------------------------------------------

interface Row {
  name: string;
  /** Where the user sees what is wrong. */
  where: string;
  /** Sends the bad input; returns the message shown there. */
  attempt(): Promise<string>;
  /** Text the message must contain: what was wrong and what is allowed. */
  says: string[];
  nothingLost(): Promise<void>;
}

function createRow(v: CreateViolation): Row {
  return {
    name: `${v.kind}: ${v.what}`,
    where: 'apiserver rejection',
    attempt: () =>
      rejectionMessage(
        kubeConfig()
          .makeApiClient(CustomObjectsApi)
          .createNamespacedCustomObject({ ...where(v.manifest), body: v.manifest }),
      ),
    says: [v.rule.message],
    nothingLost: async () => expect(await stored(v.manifest)).toBeNull(),
  };
}

function updateRow(v: UpdateViolation): Row {
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  let original: Manifest | undefined;
  return {
    name: `${v.kind}: ${v.what}`,
    where: 'apiserver rejection',
    async attempt() {
      original = (await custom.createNamespacedCustomObject({ ...where(v.manifest), body: v.manifest })) as Manifest;
      const changed = { ...original, spec: { ...(original['spec'] as Manifest), ...v.change } };
      return rejectionMessage(
        custom.replaceNamespacedCustomObject({ ...where(v.manifest), name: nameOf(v.manifest), body: changed }),
      );
    },
    says: [v.rule.message],
    nothingLost: async () => expect((await stored(v.manifest))?.['spec']).toEqual(original?.['spec']),
  };
}

function pick<T extends { kind: string; what: string }>(list: T[], kind: string, what: string): T {
  const found = list.find((v) => v.kind === kind && v.what === what);
  if (!found) throw new Error(`no rule violation "${what}" for ${kind} in test/unit/api/rule-violations.ts`);
  return found;
}

/** Truncated or garbled output of a command that exited 0, read the way every activity reads it. */
function outputRow(what: string, call: WekaCall<unknown>, stdout: string): Row {
  const command = call.argv.join(' ');
  return {
    name: `${what} of ${command}`,
    where: 'WekaOutputError (a failed step on the CR, see bad-input-runtime.test.ts)',
    attempt: () => thrown(WekaOutputError, () => completeCall(call, { stdout, stderr: '', exitCode: 0 })),
    says: [`${command}: unexpected output`, JSON.stringify(stdout.slice(0, 300))],
    // Nothing to run here; what matters is that a cut-off list is an error, never a shorter list
    // that a probe would read as "not there yet" and act on twice (the throw above).
    nothingLost: async () => undefined,
  };
}

const SIGNED_LIST = JSON.stringify({
  command: 'list',
  timestamp: '2026-12-06T07:00:00Z',
  devices: [
    {
      path: DEVICE.path,
      status: 'weka_formatted',
      physical_uuid: '924ace49-45e3-4961-8e1f-c2a883c50fd9',
      hardware: { serial_number: 'SIM0001', size_bytes: DEVICE.capacityGiB * 2 ** 30, iu_size: 4096 },
      weka_info: { cluster_guid: null, is_proxy: true, virtual_drives: [] },
    },
  ],
});
const DRIVE_LIST = JSON.stringify([
  {
    uuid: '22222222-2222-4222-8222-222222222222',
    added_time: '2026-12-06T07:00:00Z',
    device_path: DEVICE.path,
    serial_number: 'SIM0001',
    size_bytes: 500 * 2 ** 30,
    status: 'ACTIVE',
  },
  {
    uuid: '44444444-4444-4444-8444-444444444444',
    added_time: '2026-12-06T07:00:01Z',
    device_path: DEVICE.path,
    serial_number: 'SIM0001',
    size_bytes: 500 * 2 ** 30,
    status: 'ACTIVE',
  },
]);

const ROWS: Row[] = [
  // Invalid CRs: three representative CEL rules; crds.test.ts sends every one of them.
  createRow(pick(CREATE_VIOLATIONS, WEKA_CONTAINER_KIND, 'driveCapacity with containerCapacity')),
  createRow(pick(CREATE_VIOLATIONS, WEKA_CLUSTER_KIND, 'ratio 0:0')),
  updateRow(pick(UPDATE_VIOLATIONS, WEKA_CONTAINER_KIND, 'smaller container')),

  // Device paths with shell metacharacters: the CRD refuses them...
  ...SHELL_DEVICE_PATHS.map((path, i): Row =>
    createRow({
      what: `sign-drives of device path ${JSON.stringify(path)}`,
      kind: 'WekaManualOperation',
      rule: WEKA_MANUAL_OPERATION_RULES.devicePathShape,
      manifest: signDrives(`shell-path-${i}`, {
        type: 'device-paths',
        nodeSelector: { 'weka.io/drive-sharing': 'true' },
        devicePaths: [path],
      }),
    }),
  ),

  // ...and the operator refuses them again before exec, should one get past the apiserver (an
  // object stored before the rule existed): each is a failure of that device, and no command runs.
  (() => {
    let failures: Array<{ devicePath: string; message: string }> = [];
    let log: SimLogEntry[] = [];
    return {
      name: 'sign-drives activity given device paths with shell metacharacters',
      where: 'the sign-drives result for the node (WekaInputError per device)',
      async attempt() {
        log = await commandsDuring(async () => {
          failures = [];
          for (const devicePath of SHELL_DEVICE_PATHS) {
            const outcome = await acts.signDrive({ node, devicePath, operation: signing });
            if (!outcome.ok) failures.push({ devicePath, message: outcome.error.message });
          }
        });
        expect(failures.map((f) => f.devicePath)).toEqual(SHELL_DEVICE_PATHS);
        return failures.map((f) => f.message).join('\n');
      },
      says: SHELL_DEVICE_PATHS.map((p) => `invalid device path ${JSON.stringify(p)}: expected /dev/NAME`),
      async nothingLost() {
        expect(log).toEqual([]);
        // The same activity with a good path does reach the node and is logged: the check above can see.
        const control = await commandsDuring(() =>
          acts.signDrive({ node, devicePath: DEVICE.path, operation: signing }),
        );
        expect(control.map((e) => e.argv.join(' '))).toContain('weka-sign-drive list -j');
      },
    } satisfies Row;
  })(),

  // A virtual UUID with shell metacharacters (a hand-edited status): the read-only probe runs,
  // the signing never does.
  (() => {
    const virtualUUID = '$(reboot)';
    let log: SimLogEntry[] = [];
    return {
      name: 'signing a virtual drive whose UUID has shell metacharacters',
      where: 'WekaInputError (a failed step on the CR)',
      async attempt() {
        const text = (await readNode(node)).metadata!.annotations![SHARED_DRIVES_ANNOTATION]!;
        const decoded = decodeSharedDrivesAnnotation(text);
        if (!decoded.ok) throw new Error(decoded.error.message);
        const physical = decoded.drives[0]!;
        const drive = {
          virtualUUID,
          physicalUUID: physical.physicalUUID,
          capacityGiB: 500,
          serial: physical.serial,
          type: 'TLC' as const,
        };
        let message = '';
        log = await commandsDuring(async () => {
          message = await thrown(WekaInputError, () =>
            acts.signVirtualDrive({ target: proxy, node, drive, clusterGUID }),
          );
        });
        return message;
      },
      says: [`invalid virtual UUID ${JSON.stringify(virtualUUID)}: expected a UUID`],
      async nothingLost() {
        expect(log.every((e) => e.changes.length === 0)).toBe(true);
        expect(log.some((e) => e.argv.some((a) => a.includes(virtualUUID)))).toBe(false);
      },
    } satisfies Row;
  })(),

  // Garbage or cut-off output: representative cases; test/unit/weka/*.test.ts has the full list.
  outputRow(
    'JSON cut off halfway',
    readDriveCall(DEVICE.path),
    SIGNED_LIST.slice(0, Math.floor(SIGNED_LIST.length / 2)),
  ),
  outputRow(
    'a list cut off after its first entry',
    driveListCall(3),
    DRIVE_LIST.slice(0, DRIVE_LIST.indexOf('},') + 1),
  ),
  outputRow(
    'an error text on stdout with exit code 0',
    containerListCall(),
    'Error: cluster is not reachable (timeout)\n',
  ),
];

describe('bad input refused before anything runs', () => {
  it.each(ROWS)('$name (where: $where)', async (row) => {
    const message = await row.attempt();
    for (const text of row.says) expect(message).toContain(text);
    await row.nothingLost();
  });
});
