// Errors raised by the typed Weka calls. Temporal turns a thrown Error into an ApplicationFailure
// whose `type` is the error's `name`, so each class pins its name to an exported constant that
// retry policies can list under nonRetryableErrorTypes.

export const WEKA_INPUT_ERROR = 'WekaInputError';
export const WEKA_OUTPUT_ERROR = 'WekaOutputError';
export const WEKA_COMMAND_REFUSED = 'WekaCommandRefused';
export const WEKA_COMMAND_FAILED = 'WekaCommandFailed';
export const WEKA_DEVICE_NOT_LISTED = 'WekaDeviceNotListed';
/** A drive deactivated in its Weka cluster whose data Weka is still moving to the other drives. */
export const DRIVE_PHASING_OUT = 'DrivePhasingOut';

/** Error names that retrying cannot fix: bad arguments, unparseable output, a definite refusal. */
export const NON_RETRYABLE_WEKA_ERRORS: readonly string[] = [
  WEKA_INPUT_ERROR,
  WEKA_OUTPUT_ERROR,
  WEKA_COMMAND_REFUSED,
  WEKA_DEVICE_NOT_LISTED,
];

const QUOTE_LIMIT = 300;

/** Quotes tool output for an error message: JSON-escaped and truncated so a huge dump stays readable. */
export function quoteOutput(text: string, limit: number = QUOTE_LIMIT): string {
  if (text.length <= limit) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, limit))} (… ${text.length - limit} more characters)`;
}

/** An argument was rejected before anything ran (bad device path, UUID, size, name…). */
export class WekaInputError extends Error {
  override readonly name = WEKA_INPUT_ERROR;
  readonly field: string;

  constructor(field: string, value: unknown, reason: string) {
    super(`invalid ${field} ${quoteValue(value)}: ${reason}`);
    this.field = field;
  }
}

/** The command exited 0 but what it printed is not what its contract promises. */
export class WekaOutputError extends Error {
  override readonly name = WEKA_OUTPUT_ERROR;
  readonly command: string;

  constructor(command: string, reason: string, output: string) {
    super(`${command}: unexpected output (${reason}): ${quoteOutput(output)}`);
    this.command = command;
  }
}

/** The tool said no, for a reason that will not change by itself (see classifyExit). */
export class WekaCommandRefused extends Error {
  override readonly name = WEKA_COMMAND_REFUSED;
  readonly command: string;
  readonly exitCode: number;
  readonly stderr: string;

  constructor(command: string, exitCode: number, stderr: string) {
    super(`${command}: refused with exit code ${exitCode}: ${quoteOutput(stderr.trim())}`);
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** The tool's device list has no device at the path asked about (detached, or never there). */
export class WekaDeviceNotListed extends Error {
  override readonly name = WEKA_DEVICE_NOT_LISTED;
  readonly devicePath: string;

  constructor(command: string, devicePath: string, listed: readonly string[]) {
    super(`${command}: no device ${devicePath} (listed: ${listed.length > 0 ? listed.join(', ') : 'none'})`);
    this.devicePath = devicePath;
  }
}

/** The command failed in a way that may pass on retry (crash, timeout, transient error). */
export class WekaCommandFailed extends Error {
  override readonly name = WEKA_COMMAND_FAILED;
  readonly command: string;
  readonly exitCode: number;
  readonly stderr: string;

  constructor(command: string, exitCode: number, stderr: string) {
    super(`${command}: failed with exit code ${exitCode}: ${quoteOutput(stderr.trim())}`);
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

function quoteValue(value: unknown): string {
  if (typeof value === 'string') return quoteOutput(value, 120);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value);
  return `(${typeof value})`;
}
