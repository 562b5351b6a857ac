// The Helm chart's copies of the CRDs: templates, not files under the chart's crds/, because Helm
// installs crds/ on the first install only and never upgrades them. Each is the canonical YAML
// (renderCrdYaml) wrapped in the chart's `crds.enabled` switch, with the `crds.keep` annotation that
// makes `helm uninstall` leave the CRD (and so every WekaContainer) in place, and the chart's labels.
import type { CustomResourceDefinition } from '../src/api/crd-builder.js';
import { renderCrdYaml } from '../src/api/crds.js';

/** The chart directory the templates are written under, relative to the repository root. */
export const CHART_CRD_TEMPLATE_DIR = 'deploy/helm/weka-drives-operator/templates/crds';

/** Go template actions in the YAML would be run by Helm; print them as text instead. */
function escapeTemplateActions(yaml: string): string {
  return yaml.replace(/\{\{|\}\}/g, (delimiter) => `{{ "${delimiter}" }}`);
}

export function renderChartCrdTemplate(crd: CustomResourceDefinition): string {
  const yaml = escapeTemplateActions(renderCrdYaml({ ...crd, metadata: { name: crd.metadata.name } }));
  const metadata = `\nmetadata:\n  name: ${crd.metadata.name}\n`;
  if (!yaml.includes(metadata))
    throw new Error(`the YAML of CRD ${crd.metadata.name} has no "metadata:" block holding only its name`);
  const templated = [
    '',
    'metadata:',
    '  name: ' + crd.metadata.name,
    '  labels:',
    '    {{- include "weka-drives-operator.labels" . | nindent 4 }}',
    '  {{- if .Values.crds.keep }}',
    '  annotations:',
    '    # helm uninstall leaves the CRD, and with it every object of its kind.',
    '    helm.sh/resource-policy: keep',
    '  {{- end }}',
    '',
  ].join('\n');
  return `{{- if .Values.crds.enabled }}\n${yaml.replace(metadata, templated)}{{- end }}\n`;
}
