// The operator process (`npm start`, the image's entrypoint): see run-operator.ts.
import { runOperator } from './run-operator.js';

await runOperator(process.env);
