// The conditions every kind carries for kstatus and `kubectl wait`: Reconciling while at work,
// Stalled while waiting for a person, Ready always present.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/api/index.js';
import {
  needsAPerson,
  progressOfConditions,
  progressOfPhase,
  readyIsDerived,
  withStandardConditions,
  type Progress,
} from '../../../src/lifecycle/standard-conditions.js';

const T0 = '2026-12-06T10:00:00.000Z';
const T1 = '2026-12-06T11:00:00.000Z';
const cond = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T0,
});
const of = (list: Condition[], type: string) => list.find((c) => c.type === type);
const apply = (list: Condition[], progress: Progress, phase = 'Allocating') =>
  withStandardConditions(list, progress, { phase, observedGeneration: 3, nowIso: T1 });

describe('the progress of a phase', () => {
  it.each([
    ['Pending', 'working'],
    ['Allocating', 'working'],
    ['Forming', 'working'],
    ['Error', 'working'],
    ['Deleting', 'working'],
    ['Ready', 'settled'],
    ['Succeeded', 'settled'],
    ['Deleted', 'settled'],
    ['Refused', 'stalled'],
    ['Failed', 'stalled'],
  ])('%s is %s', (phase, kind) => {
    expect(progressOfPhase(phase, 'a step', []).kind).toBe(kind);
  });

  it('a refused phase keeps the reason of the Stalled condition it shows', () => {
    const shown = [cond('Stalled', 'True', 'InvalidDriveSharingConfig', 'at most 8 per core')];
    expect(progressOfPhase('Refused', 'refused until the spec changes', shown)).toEqual({
      kind: 'stalled',
      reason: 'InvalidDriveSharingConfig',
      message: 'at most 8 per core',
    });
  });

  it('a new run resumes a Ready container whose growth waits as at work, not settled', () => {
    const restored = [cond('Reconciling', 'True', 'InsufficientDriveCapacity', 'need 1000 GiB')];
    expect(progressOfConditions('Ready', 'ready', restored)).toEqual({
      kind: 'working',
      reason: 'InsufficientDriveCapacity',
      message: 'need 1000 GiB',
    });
    expect(progressOfConditions('Ready', 'ready', []).kind).toBe('settled');
  });
});

describe('the standard conditions', () => {
  it('at work: Reconciling True with what it does, Stalled False, Ready False saying the same', () => {
    const out = apply([], { kind: 'working', reason: 'Allocating', message: 'allocating on node n1' });
    expect(of(out, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Allocating', observedGeneration: 3 });
    expect(of(out, 'Stalled')?.status).toBe('False');
    expect(of(out, 'Ready')).toMatchObject({ status: 'False', reason: 'Allocating', message: 'allocating on node n1' });
    expect(readyIsDerived(out)).toBe(true);
  });

  it('stalled: Stalled True with the reason, Reconciling False, Ready False with the reason', () => {
    const out = apply([], { kind: 'stalled', reason: 'InvalidDriveSharingConfig', message: 'at most 8' }, 'Refused');
    expect(of(out, 'Stalled')).toMatchObject({ status: 'True', reason: 'InvalidDriveSharingConfig' });
    expect(of(out, 'Reconciling')).toMatchObject({ status: 'False', reason: 'Stalled' });
    expect(of(out, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidDriveSharingConfig' });
  });

  it('settled with no Ready of its own: Ready True', () => {
    const out = apply([], { kind: 'settled' }, 'Succeeded');
    expect(of(out, 'Ready')?.status).toBe('True');
    expect(of(out, 'Reconciling')?.status).toBe('False');
    expect(of(out, 'Stalled')?.status).toBe('False');
  });

  it("keeps the lifecycle's own Ready, whatever the progress", () => {
    const own = [cond('Ready', 'False', 'StepFailed', 'signing: refused')];
    const out = apply(own, { kind: 'working', reason: 'Error', message: 'trying again in 30 s' }, 'Error');
    expect(of(out, 'Ready')).toMatchObject({ status: 'False', reason: 'StepFailed', lastTransitionTime: T0 });
    expect(readyIsDerived(out)).toBe(false);
    const ready = [cond('Ready', 'True', 'Ready', 'all in the cluster')];
    const growing = apply(ready, { kind: 'working', reason: 'Updating', message: 'growing' }, 'Updating');
    expect(of(growing, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(of(growing, 'Reconciling')?.status).toBe('True');
  });

  it('derives a derived Ready afresh as the work moves on, and keeps transition times of unchanged statuses', () => {
    const first = apply([], { kind: 'working', reason: 'Pending', message: 'ensuring the proxy' });
    const next = withStandardConditions(
      first,
      { kind: 'working', reason: 'Allocating', message: 'allocating' },
      { phase: 'Allocating', observedGeneration: 3, nowIso: '2026-12-06T12:00:00.000Z' },
    );
    expect(of(next, 'Ready')).toMatchObject({ status: 'False', reason: 'Allocating', lastTransitionTime: T1 });
    expect(of(next, 'Reconciling')?.lastTransitionTime).toBe(T1);
  });
});

describe('failures that need a person', () => {
  it.each(['ImageNotAllowed', 'ExecForbidden', 'InvalidObject', 'WekaStateConflict'])('%s does', (type) => {
    expect(needsAPerson(type)).toBe(true);
  });
  it.each(['WekaCommandFailed', 'ExecPodMissing', 'WekaOutputError', undefined])('%s does not', (type) => {
    expect(needsAPerson(type)).toBe(false);
  });
});
