// StorageClassDeviceSets (design document 003): drives that come from block-mode PVCs instead of
// the node's own disks. A WekaCluster lists them; the operator claims `count` PVCs per template on
// each node the cluster and the set select, holds them in a device pod on that node, signs the
// devices for the node's ssdproxy and publishes them as the node's shared drives.
import { Type, type Static } from '@sinclair/typebox';
import { celRules, type CelRule } from './common.js';

/** Most device sets per cluster, claims per template and node, and templates per set. */
export const MAX_DEVICE_SETS = 8;
export const MAX_DEVICE_SET_COUNT = 32;
export const MAX_CLAIM_TEMPLATES = 4;

/** The config keys a device set takes, and the drive types it may declare. */
export const DEVICE_SET_CONFIG_KEYS = ['driveType'] as const;
export const DEVICE_SET_DRIVE_TYPES = ['TLC', 'QLC'] as const;

const QUANTITY_PATTERN = '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$';
const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** The CEL rules of a device set, by name (each is tested against a real apiserver). */
export const DEVICE_SET_RULES = {
  requirementValues: {
    rule: "(self.operator in ['Exists', 'DoesNotExist']) == (!has(self.values) || size(self.values) == 0)",
    message: 'Exists and DoesNotExist take no values; In, NotIn, Gt and Lt need them',
  },
  requirementInteger: {
    rule: "!(self.operator in ['Gt', 'Lt']) || (size(self.values) == 1 && self.values[0].matches('^-?[0-9]+$'))",
    message: 'Gt and Lt take exactly one integer value',
  },
  configKeys: {
    rule: `self.all(k, k in [${DEVICE_SET_CONFIG_KEYS.map((k) => `'${k}'`).join(', ')}])`,
    message: `config takes only ${DEVICE_SET_CONFIG_KEYS.join(', ')}`,
  },
  configDriveType: {
    rule: `!has(self.driveType) || self.driveType in [${DEVICE_SET_DRIVE_TYPES.map((t) => `'${t}'`).join(', ')}]`,
    message: `config.driveType is ${DEVICE_SET_DRIVE_TYPES.join(' or ')}`,
  },
  templateNamesUnique: {
    rule: "self.all(t, self.exists_one(u, (has(u.metadata) && has(u.metadata.name) ? u.metadata.name : 'data') == (has(t.metadata) && has(t.metadata.name) ? t.metadata.name : 'data')))",
    message: 'volume claim template names are unique in a set (an unnamed template is "data")',
  },
  countGrowOnly: {
    rule: 'self.count >= oldSelf.count',
    message: 'count can only grow: a device may hold virtual drives of any cluster on the node',
    fieldPath: '.count',
  },
  setFixed: {
    rule: 'self.volumeClaimTemplates == oldSelf.volumeClaimTemplates && (has(self.config) == has(oldSelf.config)) && (!has(self.config) || self.config == oldSelf.config) && (has(self.placement) == has(oldSelf.placement)) && (!has(self.placement) || self.placement == oldSelf.placement)',
    message: "a device set's templates, config and placement cannot change: its claims are made and signed",
  },
  setsKept: {
    rule: 'oldSelf.all(o, self.exists(s, s.name == o.name))',
    message:
      'a device set cannot be removed while the cluster lives: its devices may hold virtual drives of other clusters on the node; delete the cluster to release them',
  },
} satisfies Record<string, CelRule>;

const StringMap = (description: string, maxProperties = 32) =>
  Type.Record(Type.String({ maxLength: 317 }), Type.String({ maxLength: 1024 }), { description, maxProperties });

const ResourceListSchema = Type.Record(
  Type.String({ maxLength: 128 }),
  Type.String({ maxLength: 64, pattern: QUANTITY_PATTERN }),
  { maxProperties: 16, description: 'Resource name to quantity, as in a pod.' },
);

export const NodeSelectorRequirementSchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 317, description: 'The node label the requirement is about.' }),
    operator: Type.Union(
      ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'].map((op) => Type.Literal(op)),
      { description: 'How the label is compared with values, as in a pod node affinity.' },
    ),
    values: Type.Optional(
      Type.Array(Type.String({ maxLength: 63 }), {
        maxItems: 64,
        description: 'Label values: one or more for In and NotIn, one integer for Gt and Lt, none for the others.',
      }),
    ),
  },
  {
    ...celRules(DEVICE_SET_RULES.requirementValues, DEVICE_SET_RULES.requirementInteger),
  },
);
export type NodeSelectorRequirement = Static<typeof NodeSelectorRequirementSchema>;

export const DeviceSetPlacementSchema = Type.Object(
  {
    nodeAffinity: Type.Optional(
      Type.Object(
        {
          requiredDuringSchedulingIgnoredDuringExecution: Type.Object(
            {
              nodeSelectorTerms: Type.Array(
                Type.Object({
                  matchExpressions: Type.Array(NodeSelectorRequirementSchema, {
                    minItems: 1,
                    maxItems: 16,
                    description: 'A term matches when every requirement does.',
                  }),
                }),
                { minItems: 1, maxItems: 8, description: 'A node matches when any one term matches.' },
              ),
            },
            { description: 'Node labels a node must have, as in a pod node affinity.' },
          ),
        },
        {
          description:
            "Which of the cluster's selected nodes get this set's claims (matchExpressions on node labels); unset: all of them.",
        },
      ),
    ),
  },
  {
    description:
      "Where the set has devices: a subset of the nodes the cluster selects. The device pods tolerate every taint, as the cluster's drive containers do.",
  },
);
export type DeviceSetPlacement = Static<typeof DeviceSetPlacementSchema>;

export const VolumeClaimTemplateSchema = Type.Object(
  {
    metadata: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(
            Type.String({
              maxLength: 16,
              pattern: DNS_LABEL_PATTERN,
              description: 'Names the template inside the claim names; unset: "data".',
            }),
          ),
          labels: Type.Optional(StringMap('Labels copied onto every claim of the template.')),
          annotations: Type.Optional(StringMap('Annotations copied onto every claim of the template.')),
        },
        { description: 'Name, labels and annotations of the claims.' },
      ),
    ),
    spec: Type.Object(
      {
        storageClassName: Type.Optional(
          Type.String({
            maxLength: 253,
            description: 'StorageClass of the claims; unset: the cluster default class.',
          }),
        ),
        volumeMode: Type.Literal('Block', {
          description: 'Always Block: the devices are signed whole, never mounted as a file system.',
        }),
        accessModes: Type.Optional(
          Type.Array(Type.Literal('ReadWriteOnce'), {
            maxItems: 1,
            description: 'ReadWriteOnce (the default): one node uses each device.',
          }),
        ),
        resources: Type.Object(
          {
            requests: Type.Object(
              {
                storage: Type.String({
                  maxLength: 64,
                  pattern: QUANTITY_PATTERN,
                  description: 'Capacity of each claim; at least the smallest virtual drive (384 GiB).',
                }),
              },
              { description: 'What each claim asks for.' },
            ),
          },
          { description: 'Resources of each claim.' },
        ),
      },
      { description: 'Spec of every claim made from the template.' },
    ),
  },
  { description: 'A block-mode PVC template; each device of the set claims one volume from each template.' },
);
export type VolumeClaimTemplate = Static<typeof VolumeClaimTemplateSchema>;

export const StorageClassDeviceSetSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 16,
      pattern: DNS_LABEL_PATTERN,
      description: 'Names the set, unique in the cluster; part of every claim name.',
    }),
    count: Type.Integer({
      minimum: 1,
      maximum: MAX_DEVICE_SET_COUNT,
      description: 'Devices on each node the set selects; each claims one volume per template.',
    }),
    resources: Type.Optional(
      Type.Object(
        { requests: Type.Optional(ResourceListSchema), limits: Type.Optional(ResourceListSchema) },
        { description: "CPU and memory of the set's device pod on each node. Default: none." },
      ),
    ),
    placement: Type.Optional(DeviceSetPlacementSchema),
    config: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 64 }), {
        maxProperties: 8,
        description:
          'Device configuration. driveType: TLC (default) or QLC, what the devices are; a device reporting another type is not signed.',
        ...celRules(DEVICE_SET_RULES.configKeys, DEVICE_SET_RULES.configDriveType),
      }),
    ),
    volumeClaimTemplates: Type.Array(VolumeClaimTemplateSchema, {
      minItems: 1,
      maxItems: MAX_CLAIM_TEMPLATES,
      description: 'The claims of each device.',
      ...celRules(DEVICE_SET_RULES.templateNamesUnique),
    }),
  },
  {
    description: 'A set of devices from block-mode PVCs, as in Rook (design document 003).',
    ...celRules(DEVICE_SET_RULES.countGrowOnly, DEVICE_SET_RULES.setFixed),
  },
);
export type StorageClassDeviceSet = Static<typeof StorageClassDeviceSetSchema>;

export const storageClassDeviceSetsSchema = Type.Array(StorageClassDeviceSetSchema, {
  maxItems: MAX_DEVICE_SETS,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['name'],
  description:
    "Drives from block-mode PVCs (Rook's StorageClassDeviceSets): on each node the cluster selects, the operator claims the set's volumes, signs them for the node's ssdproxy and publishes them as the node's shared drives.",
  ...celRules(DEVICE_SET_RULES.setsKept),
});
