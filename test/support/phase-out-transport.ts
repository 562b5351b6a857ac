// An exec transport in front of the real one that shows what Weka shows while it phases data out.
// The simulator deactivates at once, so this holds every deactivated drive (and, when asked, every
// deactivated container) in the state real Weka shows until the data has moved, until the test
// lets it finish (the status real Weka shows meanwhile is in no source: any status but ACTIVE and
// INACTIVE means wait, as the reference reads it).
import type { ExecTransport } from '../../activities/exec/transport.js';

/**
 * Shows drives read one by one (`weka cluster drive UUID --json`) as still phasing out while
 * `holding`, and a container read by its ID (`weka cluster container ID --json`) as DEACTIVATING
 * while `holdingContainers`.
 */
export class PhaseOutTransport implements ExecTransport {
  holding = true;
  holdingContainers = false;
  readonly shown: string[] = [];
  constructor(private readonly inner: ExecTransport) {}

  async run(...args: Parameters<ExecTransport['run']>): ReturnType<ExecTransport['run']> {
    const [, argv] = args;
    const result = await this.inner.run(...args);
    if (result.exitCode !== 0 || argv.length !== 5 || argv[1] !== 'cluster' || argv[4] !== '--json') return result;
    if (argv[2] === 'drive' && this.holding) {
      this.shown.push(argv[3]!);
      return { ...result, stdout: result.stdout.replaceAll('"INACTIVE"', '"PHASING_OUT"') };
    }
    if (argv[2] === 'container' && /^\d+$/.test(argv[3]!) && this.holdingContainers)
      return { ...result, stdout: result.stdout.replaceAll('"INACTIVE"', '"DEACTIVATING"') };
    return result;
  }
}
