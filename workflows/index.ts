// Every workflow the worker registers.
export { mutexWorkflow } from './mutex/index.js';
export { driveContainerWorkflow } from './drive-container/index.js';
export { manualOperationWorkflow } from './manual-operation/index.js';
export { clusterWorkflow } from './cluster/index.js';
export { driveVerificationWorkflow } from './drive-verification/index.js';
export { healthyClustersWorkflow } from './healthy-clusters.js';
