// A deliberately broken operator, for the test that proves the chaos checker has teeth
// (test/integration/chaos/broken-pod-watch.test.ts): its watcher does not watch the operator's
// pods, so a Ready container whose pod is deleted stays Ready with no pod. Its own entry point
// under test/: the image holds none of test/, and nothing in the operator's settings selects it.
import { runOperator } from '../../deploy/operator/run-operator.js';

await runOperator(process.env, { watchPods: false });
