// The order in which vitest hands test files to its workers. A few integration files run at a time
// (test/integration/control-planes.ts); a file of several minutes started last would run alone at
// the end while the other workers idle, so the long ones start first. Without the hint a fresh
// clone orders files by size, and the chaos profile, a short file, would start last.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest, four at a time on two cores (docs/performance.md, "The
 * CI run"), longest first, except that the chaos files, which run at most two at a time
 * (test/support/heavy-files.ts), alternate with the others: a chaos file handed to a worker while
 * two run would idle it.
 */
export const LONG_FILES = [
  'test/integration/chaos/chaos-profile.test.ts',
  'test/integration/cluster-lifecycle.test.ts',
  'test/integration/chaos/simulator-faults.test.ts',
  'test/integration/sandbox.test.ts',
  'test/integration/device-sets.test.ts',
  'test/integration/chaos/checker-teeth.test.ts',
  'test/integration/operator-restart.test.ts',
  'test/integration/watcher.test.ts',
  'test/integration/history-limits.test.ts',
  'test/integration/growth.test.ts',
  'test/integration/drive-scheduling.test.ts',
];

export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (f: TestSpecification): number => {
      const i = LONG_FILES.indexOf(relative(root, f.moduleId));
      return i < 0 ? LONG_FILES.length : i;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((file, position) => ({ file, position }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.position - b.position)
      .map(({ file }) => file);
  }
}
