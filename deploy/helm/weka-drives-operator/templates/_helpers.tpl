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
