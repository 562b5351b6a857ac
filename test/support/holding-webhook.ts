// A validating admission webhook that makes the apiserver hold the dry-run pod creates of one
// namespace until the test lets them go: the operator's allocation round checks the pod of a new
// allocation with such a dry run between its read of the node and its write of the node's ledger,
// so holding it opens that window for as long as a test needs to act inside it.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eventually } from './async.js';
import { controlPlaneCertificates, kubeConfig, uniqueName } from './harness.js';

export interface HoldingWebhook {
  /** Resolves once the apiserver has sent a dry-run pod create that the webhook now holds. */
  held(): Promise<void>;
  /** Lets every held request (and every later one) through. */
  release(): void;
  /** Removes the webhook configuration and stops the server. */
  stop(): Promise<void>;
}

interface AdmissionReview {
  request?: { uid?: string; dryRun?: boolean; object?: { metadata?: { labels?: Record<string, string> } } };
}

/** A pod with this label is answered at once: the probe that tells the webhook is in effect. */
const PROBE_LABEL = 'test.weka.io/webhook-probe';

/** The longest the apiserver waits for a webhook: a held request is let through before then. */
const TIMEOUT_SECONDS = 30;

export async function holdDryRunPodCreates(namespace: string): Promise<HoldingWebhook> {
  const certs = controlPlaneCertificates();
  let releaseAll!: () => void;
  const released = new Promise<void>((resolve) => (releaseAll = resolve));
  let heldOne!: () => void;
  const held = new Promise<void>((resolve) => (heldOne = resolve));
  let probed = false;
  const server: Server = createServer(
    { cert: await readFile(certs.cert), key: await readFile(certs.key) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdmissionReview;
        const answer = () => {
          res.setHeader('Content-Type', 'application/json');
          res.end(
            JSON.stringify({
              apiVersion: 'admission.k8s.io/v1',
              kind: 'AdmissionReview',
              response: { uid: review.request?.uid, allowed: true },
            }),
          );
        };
        const probe = review.request?.object?.metadata?.labels?.[PROBE_LABEL] !== undefined;
        if (probe) probed = true;
        if (probe || !review.request?.dryRun) return answer();
        heldOne();
        const timer = setTimeout(answer, (TIMEOUT_SECONDS - 5) * 1000);
        void released.then(() => {
          clearTimeout(timer);
          answer();
        });
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const admission = kubeConfig().makeApiClient(AdmissionregistrationV1Api);
  const name = uniqueName('hold-dry-run-pods');
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [
        {
          name: 'hold-dry-run-pods.test.weka.io',
          clientConfig: {
            url: `https://127.0.0.1:${port}/validate`,
            caBundle: (await readFile(certs.caCert)).toString('base64'),
          },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          timeoutSeconds: TIMEOUT_SECONDS,
        },
      ],
    },
  });
  // The apiserver learns of a new webhook configuration a moment later: probe until it calls.
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await eventually(
    'the holding webhook to be in effect',
    async () => {
      await core.createNamespacedPod({
        namespace,
        dryRun: 'All',
        body: {
          metadata: { name: 'webhook-probe', labels: { [PROBE_LABEL]: 'true' } },
          spec: { containers: [{ name: 'probe', image: 'probe' }] },
        },
      });
      return probed ? true : undefined;
    },
    20_000,
  );
  return {
    held: () => held,
    release: releaseAll,
    async stop() {
      releaseAll();
      await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
