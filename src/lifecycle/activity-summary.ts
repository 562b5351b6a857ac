// One line per activity call for the Temporal UI's timeline ("summary"): what the step does and to
// which object, node, pod or drive, read from the call's input. Workflows call this for every
// activity they schedule, so it is pure and never throws on an input it does not know.

const MAX_SUMMARY = 200;

type Input = Record<string, unknown>;

function isRef(value: unknown): value is { namespace: string; name: string } {
  const v = value as Input | null;
  return typeof v === 'object' && v !== null && typeof v.namespace === 'string' && typeof v.name === 'string';
}

/** "readClusterGUID" as "read cluster guid". */
export function activityWords(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

/** The parts of an input worth naming, in the order a reader wants them. */
function subjects(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (typeof input !== 'object' || input === null) return [];
  if (isRef(input)) return [`${input.namespace}/${input.name}`];
  const i = input as Input;
  const out: string[] = [];
  if (isRef(i.ref)) out.push(`${i.ref.namespace}/${i.ref.name}`);
  if (typeof i.kind === 'string' && typeof i.reason === 'string')
    out.push(`${i.type === 'Warning' ? 'Warning ' : ''}${i.reason}`);
  // A status write, and the Events that go with it.
  const phase = (i.status as Input | null | undefined)?.phase;
  if (typeof phase === 'string') out.push(`phase ${phase}`);
  if (Array.isArray(i.events)) {
    const reasons = (i.events as unknown[])
      .map((e) => (e as Input | null)?.reason)
      .filter((r) => typeof r === 'string');
    if (reasons.length > 0) out.push(`Events ${reasons.join(', ')}`);
  }
  if (isRef(i.target)) out.push(`in pod ${i.target.namespace}/${i.target.name}`);
  if (typeof i.node === 'string') out.push(`on ${i.node}`);
  if (typeof i.mutexId === 'string') out.push(`to ${i.mutexId}`);
  const request = i.request as Input | undefined;
  if (typeof request?.kind === 'string') out.push(request.kind);
  const drive = i.drive as Input | undefined;
  const virtualUUID = typeof i.virtualUUID === 'string' ? i.virtualUUID : drive?.virtualUUID;
  if (typeof virtualUUID === 'string') out.push(`drive ${virtualUUID}`);
  if (typeof i.serial === 'string') out.push(`drive ${i.serial}`);
  if (typeof i.set === 'string') out.push(`set ${i.set}`);
  if (typeof i.name === 'string' && !isRef(i.ref)) out.push(i.name);
  return out;
}

export function activitySummary(activity: string, input: unknown): string {
  const text = [activityWords(activity), ...subjects(input)].join(' ');
  return text.length <= MAX_SUMMARY ? text : `${text.slice(0, MAX_SUMMARY - 1)}…`;
}
