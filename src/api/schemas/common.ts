// Pieces shared by the three kinds: the API group, CEL rule plumbing, object metadata,
// conditions and the TLC/QLC ratio.
import { FormatRegistry, Type, type Static, type TSchema } from '@sinclair/typebox';

export const API_GROUP = 'weka.weka.io';
export const API_VERSION = 'v1alpha1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
/** `kubectl get weka` lists every kind of this API. */
export const WEKA_CATEGORY = 'weka';

/** One `x-kubernetes-validations` entry: a CEL rule and the message a user sees when it fails. */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** Points the error at a child field when the rule sits on the parent object. */
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired';
}

/** Schema options that attach CEL rules; TypeBox passes unknown option keys through to the JSON Schema. */
export function celRules(...rules: readonly CelRule[]): { 'x-kubernetes-validations': readonly CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

// Kubernetes serialises times as RFC 3339. TypeBox refuses any string format it does not know,
// so Value.Check on a status with conditions needs this format registered.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (value) => RFC3339.test(value));

/** Longest Kubernetes object name (a DNS subdomain); also bounds CEL cost on name comparisons. */
export const MAX_NAME_LENGTH = 253;

const StringMap = (description: string) => Type.Record(Type.String(), Type.String(), { description });

/**
 * The part of metadata this operator reads. In the CRD itself metadata is only `type: object`:
 * the apiserver owns its schema.
 */
export const ObjectMetaSchema = Type.Object({
  name: Type.Optional(Type.String({ description: 'Name of the object, unique in its namespace.' })),
  namespace: Type.Optional(Type.String({ description: 'Namespace of the object.' })),
  uid: Type.Optional(Type.String({ description: 'Unique id the apiserver assigned.' })),
  resourceVersion: Type.Optional(Type.String({ description: 'Version for optimistic concurrency.' })),
  generation: Type.Optional(Type.Integer({ description: 'Incremented by the apiserver on every spec change.' })),
  creationTimestamp: Type.Optional(Type.String({ description: 'When the object was created (RFC 3339).' })),
  deletionTimestamp: Type.Optional(Type.String({ description: 'When deletion was requested (RFC 3339).' })),
  labels: Type.Optional(StringMap('Labels of the object.')),
  annotations: Type.Optional(StringMap('Annotations of the object.')),
  finalizers: Type.Optional(Type.Array(Type.String(), { description: 'Finalizers that block deletion.' })),
  ownerReferences: Type.Optional(
    Type.Array(
      Type.Object({
        apiVersion: Type.String(),
        kind: Type.String(),
        name: Type.String(),
        uid: Type.String(),
        controller: Type.Optional(Type.Boolean()),
      }),
      { description: 'The objects this one belongs to (a cluster member: its WekaCluster).' },
    ),
  ),
});
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

/** A label selector in its simplest form: every label must match. */
export function nodeSelectorSchema(description: string) {
  return StringMap(description);
}

/** The same shape as metav1.Condition, so kubectl and client libraries read it as usual. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({
      description: 'Type of the condition in CamelCase, for example Allocated, DrivesAdded or Ready.',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')], {
      description: 'Status of the condition: True, False or Unknown.',
    }),
    observedGeneration: Type.Optional(
      Type.Integer({
        format: 'int64',
        minimum: 0,
        description: 'The metadata.generation the condition was computed from.',
      }),
    ),
    lastTransitionTime: Type.String({
      format: 'date-time',
      description: 'When the condition last changed status (RFC 3339).',
    }),
    reason: Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'Machine-readable reason for the last transition, in CamelCase.',
    }),
    message: Type.String({ maxLength: 32768, description: 'Human-readable details about the last transition.' }),
  },
  { description: 'One aspect of the observed state.' },
);
export type Condition = Static<typeof ConditionSchema>;

/** Conditions keyed by type, so each writer can server-side-apply its own conditions. */
export function conditionsSchema(description: string) {
  return Type.Array(ConditionSchema, {
    description,
    maxItems: 32,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}

/**
 * A workflow's status write may not go back: to an earlier run, to an earlier workflow task of the
 * same run, or to an earlier write of the same task. Refused writes are late ones (see
 * writtenBySchema); the activity knows them by the message.
 */
export const WRITTEN_BY_RULE = {
  rule:
    'self.runStartTime > oldSelf.runStartTime || (self.runStartTime == oldSelf.runStartTime && ' +
    '(self.historyLength > oldSelf.historyLength || (self.historyLength == oldSelf.historyLength && self.sequence >= oldSelf.sequence)))',
  message:
    'writtenBy cannot go back: the status records a newer write of the workflow (a later run, or a later workflow task or write of the same run), and this one came late',
  reason: 'FieldValueForbidden',
} as const satisfies CelRule;

/**
 * Which workflow run wrote the status, and where in that run. A worker cut from Temporal still runs
 * the local activities of a workflow task that Temporal has timed out and given to another worker;
 * one of them can make a status write after the other worker's newer ones. Temporal numbers the
 * tasks: the task done again starts at a longer history than the one timed out, so the rule
 * refuses the late write, and the status never goes back to an earlier step. A later run
 * (continued as new, or started again) starts after every earlier one, so it orders first.
 */
export function writtenBySchema(workflow: string) {
  return Type.Object(
    {
      run: Type.String({ maxLength: 64, description: `Run id of the ${workflow} workflow run that wrote the status.` }),
      runStartTime: Type.String({
        format: 'date-time',
        maxLength: 32,
        description: 'When that run started (its first workflow task; RFC 3339, milliseconds, UTC).',
      }),
      historyLength: Type.Integer({
        format: 'int64',
        minimum: 1,
        description: "The run's history length when the workflow task that made the write started.",
      }),
      sequence: Type.Integer({
        format: 'int64',
        minimum: 1,
        description: "Which of that workflow task's status writes this is, counting from 1.",
      }),
    },
    {
      description: `The ${workflow} workflow's last status write: its run, its workflow task and its number in the task. A write that would go back (an earlier run, task or write) is refused.`,
      ...celRules(WRITTEN_BY_RULE),
    },
  );
}
export type WrittenBy = Static<ReturnType<typeof writtenBySchema>>;

export function observedGenerationSchema() {
  return Type.Integer({
    format: 'int64',
    minimum: 0,
    description: 'The metadata.generation of the spec that the operator last acted on.',
  });
}

/** A free string: writers may add phases without a schema change. */
export function phaseSchema(expected: readonly string[]) {
  return Type.String({
    maxLength: 64,
    description: `Coarse lifecycle phase for people and printer columns; conditions carry the details. Expected values: ${expected.join(', ')}.`,
  });
}

export const DRIVE_TYPES_RATIO_RULES = {
  tlcNotNegative: {
    rule: 'self >= 0',
    message: 'driveTypesRatio.tlc cannot be negative: it is a ratio part, such as 4 in tlc:qlc = 4:1',
  },
  qlcNotNegative: {
    rule: 'self >= 0',
    message: 'driveTypesRatio.qlc cannot be negative: it is a ratio part, such as 1 in tlc:qlc = 4:1',
  },
  notBothZero: {
    rule: '(has(self.tlc) ? self.tlc : 0) + (has(self.qlc) ? self.qlc : 0) > 0',
    message: 'driveTypesRatio needs at least one part above 0: use tlc: 1, qlc: 0 for TLC only',
  },
} as const satisfies Record<string, CelRule>;

export const DriveTypesRatioSchema = Type.Object(
  {
    tlc: Type.Optional(
      Type.Integer({
        default: 0,
        description: 'TLC part of the ratio (for example 4 in 4:1). Unitless; 0 means no TLC drives.',
        ...celRules(DRIVE_TYPES_RATIO_RULES.tlcNotNegative),
      }),
    ),
    qlc: Type.Optional(
      Type.Integer({
        default: 0,
        description: 'QLC part of the ratio (for example 1 in 4:1). Unitless; 0 means TLC only.',
        ...celRules(DRIVE_TYPES_RATIO_RULES.qlcNotNegative),
      }),
    ),
  },
  {
    description:
      'How containerCapacity is split between TLC and QLC physical drives, as tlc:qlc parts. Only with containerCapacity. When unset the operator applies its configured default ratio.',
    ...celRules(DRIVE_TYPES_RATIO_RULES.notBothZero),
  },
);
export type DriveTypesRatio = Static<typeof DriveTypesRatioSchema>;

/** A TCP port number. */
export function portSchema(description: string) {
  return Type.Integer({ minimum: 1, maximum: 65535, description });
}

/** A list of unique strings that server-side apply merges item by item (`x-kubernetes-list-type: set`). */
export function stringSetSchema(
  description: string,
  item: { description: string; maxLength: number },
  maxItems: number,
) {
  return Type.Array(Type.String(item), { description, maxItems, 'x-kubernetes-list-type': 'set' });
}

/** A virtual drive carved from a shared physical drive (WekaContainer.status.allocations.virtualDrives). */
export const VirtualDriveStatusSchema = Type.Object(
  {
    virtualUUID: Type.String({
      maxLength: 64,
      description:
        'Identifier of the virtual drive, generated at allocation; it is signed onto the physical drive and added to the Weka cluster.',
    }),
    physicalUUID: Type.String({
      maxLength: 64,
      description: 'UUID of the physical drive (from proxy signing) the virtual drive is carved from.',
    }),
    capacityGiB: Type.Integer({
      format: 'int64',
      minimum: 0,
      description: 'Capacity allocated to the virtual drive, in GiB.',
    }),
    serial: Type.Optional(Type.String({ maxLength: 128, description: 'Serial number of the physical drive.' })),
    type: Type.Optional(Type.String({ maxLength: 16, description: 'Type of the physical drive: TLC or QLC.' })),
  },
  { description: 'One virtual drive allocated to this container.' },
);
export type VirtualDriveStatus = Static<typeof VirtualDriveStatusSchema>;

/** A whole object of one of our kinds, as read from or sent to the apiserver. */
export function resourceSchema<K extends string, Spec extends TSchema, Status extends TSchema>(
  kind: K,
  spec: Spec,
  status: Status,
) {
  return Type.Object({
    apiVersion: Type.Literal(API_GROUP_VERSION),
    kind: Type.Literal(kind),
    metadata: ObjectMetaSchema,
    spec,
    status: Type.Optional(status),
  });
}
