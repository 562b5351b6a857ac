{{/* Names and labels shared by the chart's templates. */}}

{{- define "weka-drives-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name alone when it already contains the chart's name. */}}
{{- define "weka-drives-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "weka-drives-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weka-drives-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "weka-drives-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "weka-drives-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "weka-drives-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "weka-drives-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Where the Temporal TLS Secret is mounted. */}}
{{- define "weka-drives-operator.temporalTlsDir" -}}
/etc/weka-drives/temporal-tls
{{- end }}

{{/* The username the apiserver gives the operator's service account; the admission policies match it. */}}
{{- define "weka-drives-operator.serviceAccountUsername" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "weka-drives-operator.serviceAccountName" .) }}
{{- end }}

{{/*
The image allow-list (value allowedImages) as one comma-separated setting, each entry checked the
way the operator checks it (src/manifests/image-policy.ts): a repository, without tag or digest,
or a prefix ending in "/".
*/}}
{{- define "weka-drives-operator.allowedImages" -}}
{{- $entries := list }}
{{- range $entry := .Values.allowedImages }}
{{- $entry = trim $entry }}
{{- if not (regexMatch "^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*/?$" $entry) }}
{{- fail (printf "allowedImages: %q is not a repository without tag or digest (such as quay.io/weka.io/weka-in-container) nor a prefix ending in \"/\" (such as registry.example.com/weka/)" $entry) }}
{{- end }}
{{- $entries = append $entries $entry }}
{{- end }}
{{- if not $entries }}
{{- fail "allowedImages must list at least one image repository, such as quay.io/weka.io/weka-in-container" }}
{{- end }}
{{- join "," $entries }}
{{- end }}

{{/*
Whether the image given as .image passes the allow-list given as .allowed (a list): the same rule
as imageAllowed in src/manifests/image-policy.ts and the CEL of the image admission policy.
Renders "true" or nothing.
*/}}
{{- define "weka-drives-operator.imageAllowed" -}}
{{- $image := .image }}
{{- range $entry := .allowed }}
{{- if hasPrefix $entry $image }}
{{- $rest := trimPrefix $entry $image }}
{{- if and (hasSuffix "/" $entry) (regexMatch (include "weka-drives-operator.afterPrefix" $) $rest) }}true{{- end }}
{{- if and (not (hasSuffix "/" $entry)) (regexMatch (include "weka-drives-operator.afterRepository" $) $rest) }}true{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* What may follow an allowed repository: a tag and/or a digest (AFTER_REPOSITORY in src/manifests/image-policy.ts). */}}
{{- define "weka-drives-operator.afterRepository" -}}
^(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$
{{- end }}

{{/* What may follow an allowed prefix ending in "/": path components, then a tag and/or a digest (AFTER_PREFIX). */}}
{{- define "weka-drives-operator.afterPrefix" -}}
^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$
{{- end }}

{{/* The allow-list (a list) as a message reads it (describeAllowedImages in src/manifests/image-policy.ts). */}}
{{- define "weka-drives-operator.describeAllowedImages" -}}
{{- $described := list }}
{{- range $entry := . }}
{{- $described = append $described (printf (ternary "%s (any repository under it)" "%s (any tag or digest)" (hasSuffix "/" $entry)) $entry) }}
{{- end }}
{{- join ", " $described }}
{{- end }}
