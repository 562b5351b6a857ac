// Recording workflow histories from real runs, for the replay test (test/unit/workflows).
// Set RECORD_HISTORIES=1 when running an integration test to (re)write the fixtures. The
// Temporal CLI writes the JSON form that historyFromJSON reads.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { toolPaths } from '../../deploy/local/tools.js';
import { temporalAddress, temporalNamespace } from './harness.js';

const run = promisify(execFile);
/** Histories of the code not yet released; a release renames the folder to its version (docs/releasing.md). */
const dir = fileURLToPath(new URL('../fixtures/histories/unreleased/', import.meta.url));

/** Records the workflow's latest run, or the run given (e.g. one that continued as new). */
export async function recordHistory(workflowId: string, fixture: string, runId?: string): Promise<void> {
  if (process.env['RECORD_HISTORIES'] !== '1') return;
  const { temporal } = await toolPaths();
  const { stdout } = await run(
    temporal,
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--address',
      temporalAddress(),
      '--namespace',
      temporalNamespace(),
      '--output',
      'json',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}${fixture}.json`, stdout);
}

/** The activity types of the local activities a history recorded (one marker per execution). */
export function localActivityTypes(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.['data']?.payloads?.[0] : undefined;
    if (!data) return [];
    return [defaultPayloadConverter.fromPayload<{ activity_type?: string }>(data).activity_type ?? '?'];
  });
}

/** The activity types of the activities a history scheduled, in order (local ones are not scheduled). */
export function activityTypes(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): string[] {
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}
