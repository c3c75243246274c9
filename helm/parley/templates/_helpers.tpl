{{/* Names, labels, the image, and the environment shared by every Parley container. */}}

{{- define "parley.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name, at most 40 characters so suffixed names (-worker-headless) stay under 63. */}}
{{- define "parley.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "parley.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "parley.selectorLabels" -}}
app.kubernetes.io/name: {{ include "parley.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "parley.labels" -}}
helm.sh/chart: {{ include "parley.chart" . }}
{{ include "parley.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: parley
{{- end -}}

{{- define "parley.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "parley.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "parley.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The chart's own Secret (values and generated credentials). */}}
{{- define "parley.secretName" -}}
{{- include "parley.fullname" . -}}
{{- end -}}

{{/*
Where each secret setting comes from: {name, key} of a Secret, either the
user's existingSecret or the chart's Secret. Also checks that exactly one
source is configured.
*/}}
{{- define "parley.ref.accountToken" -}}
{{- if .Values.auth.existingSecret -}}
{"name": {{ .Values.auth.existingSecret | quote }}, "key": {{ .Values.auth.existingSecretKey | quote }}}
{{- else -}}
{"name": {{ include "parley.secretName" . | quote }}, "key": "account-token"}
{{- end -}}
{{- end -}}

{{- define "parley.ref.storeKeys" -}}
{{- if .Values.storeKeys.existingSecret -}}
{"name": {{ .Values.storeKeys.existingSecret | quote }}, "key": {{ .Values.storeKeys.existingSecretKey | quote }}}
{{- else -}}
{"name": {{ include "parley.secretName" . | quote }}, "key": "store-keys"}
{{- end -}}
{{- end -}}

{{- define "parley.ref.service" -}}
{{- $svc := index .root.Values .service -}}
{{- $sources := 0 -}}
{{- if $svc.enabled }}{{ $sources = add1 $sources }}{{ end -}}
{{- if $svc.url }}{{ $sources = add1 $sources }}{{ end -}}
{{- if $svc.existingSecret }}{{ $sources = add1 $sources }}{{ end -}}
{{- if ne $sources 1 -}}
{{- fail (printf "%s: set exactly one of %s.enabled (bundled), %s.url or %s.existingSecret (found %d)" .service .service .service .service $sources) -}}
{{- end -}}
{{- if $svc.existingSecret -}}
{"name": {{ $svc.existingSecret | quote }}, "key": {{ $svc.existingSecretKey | quote }}}
{{- else -}}
{"name": {{ include "parley.secretName" .root | quote }}, "key": {{ .key | quote }}}
{{- end -}}
{{- end -}}

{{- define "parley.ref.database" -}}
{{- include "parley.ref.service" (dict "root" . "service" "postgresql" "key" "database-url") -}}
{{- end -}}
{{- define "parley.ref.redis" -}}
{{- include "parley.ref.service" (dict "root" . "service" "redis" "key" "redis-url") -}}
{{- end -}}
{{- define "parley.ref.nats" -}}
{{- include "parley.ref.service" (dict "root" . "service" "nats" "key" "nats-url") -}}
{{- end -}}

{{- define "parley.s3.check" -}}
{{- if and .Values.s3.enabled .Values.s3.endpoint -}}
{{- fail "s3: set either s3.enabled (bundled) or s3.endpoint (external), not both" -}}
{{- end -}}
{{- if not (or .Values.s3.enabled .Values.s3.endpoint) -}}
{{- fail "s3: set s3.endpoint (external S3-compatible store) or s3.enabled (bundled)" -}}
{{- end -}}
{{- if and .Values.s3.endpoint (not .Values.s3.existingSecret) (not (and .Values.s3.accessKey .Values.s3.secretKey)) -}}
{{- fail "s3: an external store needs s3.accessKey and s3.secretKey, or s3.existingSecret" -}}
{{- end -}}
{{- end -}}

{{- define "parley.ref.s3" -}}
{{- include "parley.s3.check" . -}}
{{- if .Values.s3.existingSecret -}}
{"name": {{ .Values.s3.existingSecret | quote }}, "access": {{ .Values.s3.accessKeySecretKey | quote }}, "secret": {{ .Values.s3.secretKeySecretKey | quote }}}
{{- else -}}
{"name": {{ include "parley.secretName" . | quote }}, "access": "s3-access-key", "secret": "s3-secret-key"}
{{- end -}}
{{- end -}}

{{/* Host names of the bundled services. */}}
{{- define "parley.postgresql.host" -}}{{ include "parley.fullname" . }}-postgresql{{- end -}}
{{- define "parley.redis.host" -}}{{ include "parley.fullname" . }}-redis{{- end -}}
{{- define "parley.nats.host" -}}{{ include "parley.fullname" . }}-nats{{- end -}}
{{- define "parley.s3.host" -}}{{ include "parley.fullname" . }}-s3{{- end -}}

{{- define "parley.s3.endpoint" -}}
{{- if .Values.s3.enabled -}}
{{- printf "http://%s:5000" (include "parley.s3.host" .) -}}
{{- else -}}
{{- .Values.s3.endpoint -}}
{{- end -}}
{{- end -}}

{{- define "parley.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name }}
      key: {{ .ref.key }}
{{- end -}}

{{/*
Environment of the cluster roles: PARLEY_POD_NAME from the downward API, the
ConfigMap, then database, Redis, NATS and S3 credentials from Secrets.
Call with (dict "root" $ "role" "api"|"worker").
*/}}
{{- define "parley.env" -}}
{{- $root := .root -}}
- name: PARLEY_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{ include "parley.secretEnv" (dict "env" "PARLEY_DATABASE_URL" "ref" (include "parley.ref.database" $root | fromJson)) }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_REDIS_URL" "ref" (include "parley.ref.redis" $root | fromJson)) }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_NATS_URL" "ref" (include "parley.ref.nats" $root | fromJson)) }}
{{- $s3 := include "parley.ref.s3" $root | fromJson }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_S3_ACCESS_KEY" "ref" (dict "name" $s3.name "key" $s3.access)) }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_S3_SECRET_KEY" "ref" (dict "name" $s3.name "key" $s3.secret)) }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_STORE_KEYS" "ref" (include "parley.ref.storeKeys" $root | fromJson)) }}
{{- with $root.Values.storeKeys.activeId }}
- name: PARLEY_STORE_KEY_ID
  value: {{ . | quote }}
{{- end }}
{{- if eq .role "api" }}
{{ include "parley.secretEnv" (dict "env" "PARLEY_ACCOUNT_TOKEN" "ref" (include "parley.ref.accountToken" $root | fromJson)) }}
{{- end }}
{{- with $root.Values.config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "parley.prometheusAnnotations" -}}
{{- if .Values.metrics.prometheusAnnotations -}}
prometheus.io/scrape: "true"
prometheus.io/port: "9464"
prometheus.io/path: {{ .Values.metrics.path | quote }}
{{- end }}
{{- end -}}

{{/* Probes on the Parley HTTP port: /health/live and /health/ready (checks take up to 2 s). */}}
{{- define "parley.probes" -}}
startupProbe:
  httpGet:
    path: /health/live
    port: http
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet:
    path: /health/live
    port: http
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /health/ready
    port: http
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{- define "parley.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The writable /tmp of a pod whose root file system is read-only; the
argument is its size limit. */}}
{{- define "parley.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ . }}
{{- end -}}
