// The operator's Kubernetes API: schemas, types, constants and CRD generation.
export * from './schemas/common.js';
export * from './schemas/capacity.js';
export * from './schemas/device-sets.js';
export * from './schemas/wekacluster.js';
export * from './schemas/wekacontainer.js';
export * from './schemas/wekamanualoperation.js';
export * from './crd-builder.js';
export * from './crds.js';
