// Every workflow the worker registers.
export { mutexWorkflow } from './mutex.js';
export { driveContainerWorkflow } from './drive-container.js';
export { signDrivesWorkflow } from './sign-drives.js';
export { clusterWorkflow } from './cluster.js';
