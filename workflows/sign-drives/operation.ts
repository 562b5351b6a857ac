// The steps of the operation as a whole: accept its spec, choose the nodes, sign them all at once,
// say how it ended.
import type { OperationSnapshot } from '../../activities/types.js';
import { labelSelectorText, signDrivesRequest, type SignDrivesRequest } from '../../src/node/sign-drives-request.js';
import { kube } from '../activities.js';
import { fail, refuse } from '../manual-operation/end.js';
import { runNode } from './node.js';
import type { OperationRun } from '../manual-operation/run.js';

/** The request the operation's spec makes; undefined, with the operation Refused, when it makes none. */
export async function accept(run: OperationRun, snapshot: OperationSnapshot): Promise<SignDrivesRequest | undefined> {
  const { status } = run;
  const checked = signDrivesRequest(snapshot.spec);
  if (!checked.ok) {
    await refuse(run, checked.reason, checked.message);
    return undefined;
  }
  const { request } = checked;
  const selector = labelSelectorText(request.nodeSelector);
  await status.condition(
    'Accepted',
    'True',
    'Accepted',
    `sign-drives (${request.type}, ${request.mode === 'proxy' ? 'shared' : 'exclusive'}) on the nodes matching ${selector}`,
  );
  return request;
}

/**
 * The nodes the request's selector matches, each shown with an empty result; undefined, with the
 * operation Failed, when there is none.
 */
export async function selectNodes(run: OperationRun, request: SignDrivesRequest): Promise<string[] | undefined> {
  const { status } = run;
  const selector = labelSelectorText(request.nodeSelector);
  await status.enter('Running', `listing the nodes matching ${selector}`);
  const nodes = await kube.listSelectedNodes({ nodeSelector: { ...request.nodeSelector } });
  if (nodes.length === 0) {
    await fail(
      run,
      'NoMatchingNodes',
      `no node matches ${selector}: nothing was signed`,
      'no node matched the selector',
    );
    return undefined;
  }
  for (const node of nodes) await status.result({ node });
  return nodes;
}

/** Signs every node at once; each records its own result, a failure included. */
export async function signNodes(run: OperationRun, request: SignDrivesRequest, nodes: string[]): Promise<void> {
  const { status } = run;
  await status.condition(
    'Succeeded',
    'Unknown',
    'Running',
    `signing drives on ${nodes.length} nodes: ${nodes.join(', ')}`,
    'Normal',
  );
  await status.enter('Running', `signing drives on ${nodes.length} nodes`);
  await Promise.all(nodes.map((node) => runNode(run, request, node)));
}

/** Ends the operation Succeeded when every node signed, else Failed with each failed node's error. */
export async function conclude(run: OperationRun, nodes: string[]): Promise<void> {
  const { status } = run;
  const failed = status.failedResults();
  const skipped = status.skippedDevices();
  if (failed.length === 0) {
    await status.condition(
      'Succeeded',
      'True',
      skipped === 0 ? 'AllNodesSigned' : 'SignedSomeSkipped',
      `drives signed and published on all ${nodes.length} nodes` +
        (skipped === 0 ? '' : `; ${skipped} devices were skipped, each with its reason in the node's result`),
      'Normal',
    );
    await status.enter('Succeeded', 'every node signed; waiting for deletion');
  } else {
    const detail = failed.map((r) => `${r.node}: ${r.error ?? ''}`).join('; ');
    await fail(
      run,
      'NodesFailed',
      `${failed.length} of ${nodes.length} nodes failed: ${detail}`,
      `${failed.length} of ${nodes.length} nodes failed; waiting for deletion`,
    );
  }
}
