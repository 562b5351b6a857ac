// The operator's settings read from its environment: the image allow-list (WEKA_ALLOWED_IMAGES) and the proxy image it must allow, the SDK metrics buffer, and a workflow bundle made beforehand.
import { describe, expect, it } from 'vitest';
import { parseOperatorConfig } from '../../../src/operator/config.js';

describe('WEKA_ALLOWED_IMAGES', () => {
  it('defaults to the Weka repository, which the default proxy image is of', () => {
    const parsed = parseOperatorConfig({});
    expect(parsed.ok && parsed.config.allowedImages).toEqual(['quay.io/weka.io/weka-in-container']);
    expect(parsed.ok && parsed.config.proxyImage).toBe('quay.io/weka.io/weka-in-container:4.4.10.183');
  });

  it('reads a comma-separated list', () => {
    const parsed = parseOperatorConfig({
      WEKA_ALLOWED_IMAGES: 'registry.example.com/weka/, quay.io/weka.io/weka-in-container',
      WEKA_PROXY_IMAGE: 'registry.example.com/weka/weka-in-container:4.4',
    });
    expect(parsed.ok && parsed.config.allowedImages).toEqual([
      'registry.example.com/weka/',
      'quay.io/weka.io/weka-in-container',
    ]);
  });

  it('refuses an entry with a tag, by variable name', () => {
    const parsed = parseOperatorConfig({ WEKA_ALLOWED_IMAGES: 'quay.io/weka.io/weka-in-container:4.4' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.errors.join('\n')).toMatch(
        /^WEKA_ALLOWED_IMAGES "quay.io\/weka.io\/weka-in-container:4.4" is not a repository/m,
      );
  });

  it('refuses a proxy image the list does not allow: the operator would never get a proxy pod', () => {
    const parsed = parseOperatorConfig({ WEKA_PROXY_IMAGE: 'quay.io/weka.io/weka-in-container-evil:1' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.errors).toEqual([
        expect.stringMatching(
          /^WEKA_PROXY_IMAGE "quay.io\/weka.io\/weka-in-container-evil:1" is not allowed by WEKA_ALLOWED_IMAGES \(quay.io\/weka.io\/weka-in-container \(any tag or digest\)\)/,
        ),
      ]);
  });
});

describe('WEKA_SDK_METRICS_BUFFER_SIZE', () => {
  it('holds 100,000 updates unless set', () => {
    const parsed = parseOperatorConfig({});
    expect(parsed.ok && parsed.config.sdkMetricsBufferSize).toBe(100_000);
  });

  it.each(['9', '1.5', 'lots'])('refuses %s by variable name', (value) => {
    const parsed = parseOperatorConfig({ WEKA_SDK_METRICS_BUFFER_SIZE: value });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.errors).toEqual([
        `WEKA_SDK_METRICS_BUFFER_SIZE must be a whole number from 10 to 10000000, got "${value}"`,
      ]);
  });
});

describe('WEKA_WORKFLOW_BUNDLE', () => {
  it('is unset unless given: the operator loads the bundle made at build time, or bundles from source', () => {
    const parsed = parseOperatorConfig({ WEKA_WORKFLOW_BUNDLE: '  ' });
    expect(parsed.ok && parsed.config.workflowBundlePath).toBeUndefined();
  });

  it('names the bundle file the workers load', () => {
    const parsed = parseOperatorConfig({ WEKA_WORKFLOW_BUNDLE: '/tmp/run-1/workflow-bundle.js' });
    expect(parsed.ok && parsed.config.workflowBundlePath).toBe('/tmp/run-1/workflow-bundle.js');
  });
});

describe('WEKA_MAX_CONCURRENT_BRINGUPS and WEKA_BRINGUP_HOLD_SECONDS', () => {
  it('bring up half the workflow cache at once, each counting for at most 60 s, unless set', () => {
    const parsed = parseOperatorConfig({ WEKA_MAX_CACHED_WORKFLOWS: '25' });
    expect(parsed.ok && [parsed.config.maxConcurrentBringUps, parsed.config.bringUpHoldSeconds]).toEqual([12, 60]);
    const smallest = parseOperatorConfig({ WEKA_MAX_CACHED_WORKFLOWS: '2' });
    expect(smallest.ok && smallest.config.maxConcurrentBringUps).toBe(1);
  });

  it('take the values given', () => {
    const parsed = parseOperatorConfig({ WEKA_MAX_CONCURRENT_BRINGUPS: '300', WEKA_BRINGUP_HOLD_SECONDS: '5' });
    expect(parsed.ok && [parsed.config.maxConcurrentBringUps, parsed.config.bringUpHoldSeconds]).toEqual([300, 5]);
  });

  it.each([
    ['WEKA_MAX_CONCURRENT_BRINGUPS', '0', 'from 1 to 1000000'],
    ['WEKA_BRINGUP_HOLD_SECONDS', '0', 'from 1 to 86400'],
    ['WEKA_BRINGUP_HOLD_SECONDS', 'soon', 'from 1 to 86400'],
  ])('refuse %s=%s by variable name', (name, value, range) => {
    const parsed = parseOperatorConfig({ [name]: value });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toEqual([`${name} must be a whole number ${range}, got "${value}"`]);
  });
});
