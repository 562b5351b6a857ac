// The typed Weka calls: argv builders, output parsers, idempotency plans and their errors.
export * from './call.js';
export * from './cluster-container.js';
export * from './cluster-drive.js';
export * from './cluster-formation.js';
export * from './errors.js';
export * from './plan.js';
export * from './sign-drive.js';
export * from './validate.js';
export * from './block-devices.js';
