#!/usr/bin/env bash
# Builds the local control plane's servers from Go modules, once per machine.
#
# Each tool lands in $WEKA_TOOLS_CACHE/<tool>-<version>/bin (default ~/.cache/weka-drives); a
# directory that already holds its binary is never rebuilt, so a fresh clone of the repository
# reuses what the machine built before. Prints a line when a tool's build starts and when it ends,
# and every $WEKA_TOOLS_PROGRESS_SECONDS (15) in between: the packages compiled and the modules
# downloaded so far, counted in the build log (go -v writes one line per package). Exits non-zero,
# with the log's last lines and its path, when Go is missing or a build fails.
#
# Usage: build-tools.sh [--print-env] [tool ...]
#   (tools: temporal kwok etcd kube-apiserver kube-scheduler kube-controller-manager helm kstatus kubectl promtool
#    temporal-server)
#   --print-env  prints WEKA_TOOLS_CACHE, and per tool WEKA_<TOOL>_BIN (its binary) and
#                WEKA_<TOOL>_BUILD_LOG
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${WEKA_TOOLS_CACHE:-$HOME/.cache/weka-drives}

# The versions are part of the cache key; change them here and the next run builds anew.
TEMPORAL_VERSION=v1.5.1
# The Temporal server itself, the version the CLI above embeds, with its SQL schema tool: the test of
# Temporal as production runs it (PostgreSQL, mTLS) starts it.
TEMPORAL_SERVER_VERSION=v1.29.1
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.21.4
# promtool (Prometheus's rule checker and tester) runs the chart's alert rules in the tests.
PROMTOOL_VERSION=v0.316.0
ETCD_VERSION=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" {print $3}' "$here/etcd/go.mod")
KUBE_VERSION=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$here/kubernetes/go.mod")
# kstatus is a small command over sigs.k8s.io/cli-utils (the tests' health checks), keyed by that version.
KSTATUS_VERSION=$(awk '$1 == "sigs.k8s.io/cli-utils" {print $2}' "$here/kstatus/go.mod")

ALL_TOOLS="temporal kwok etcd kube-apiserver kube-scheduler kube-controller-manager helm kstatus kubectl promtool temporal-server"

dir_of() {
  case "$1" in
    temporal) echo "$cache/temporal-$TEMPORAL_VERSION" ;;
    temporal-server) echo "$cache/temporal-server-$TEMPORAL_SERVER_VERSION" ;;
    kwok) echo "$cache/kwok-$KWOK_VERSION" ;;
    helm) echo "$cache/helm-$HELM_VERSION" ;;
    promtool) echo "$cache/promtool-$PROMTOOL_VERSION" ;;
    etcd) echo "$cache/etcd-$ETCD_VERSION" ;;
    kstatus) echo "$cache/kstatus-$KSTATUS_VERSION" ;;
    kube-apiserver | kube-scheduler | kube-controller-manager | kubectl) echo "$cache/$1-$KUBE_VERSION" ;;
    *) echo "build-tools: unknown tool '$1'" >&2; exit 2 ;;
  esac
}

if [[ ${1:-} == --print-env ]]; then
  shift
  echo "WEKA_TOOLS_CACHE=$cache"
  for tool in $ALL_TOOLS; do
    var=$(echo "${tool}_BIN" | tr 'a-z-' 'A-Z_')
    echo "WEKA_${var}=$(dir_of "$tool")/bin/$tool"
    echo "WEKA_${var%_BIN}_BUILD_LOG=$(dir_of "$tool")/build.log"
  done
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-tools: Go is not installed (need Go >= 1.25 to build the local control plane's servers)." >&2
  exit 1
fi

progress_every=${WEKA_TOOLS_PROGRESS_SECONDS:-15}
[[ $progress_every =~ ^[1-9][0-9]*$ ]] || {
  echo "build-tools: WEKA_TOOLS_PROGRESS_SECONDS must be a whole number of seconds above 0, got '$progress_every'" >&2
  exit 2
}

# One line on how far the build in $2 (its log) has come, $3 seconds after it started.
progress() {
  local tool=$1 log=$2 seconds=$3 packages modules
  packages=$(grep -cv '^go: ' "$log" || true)
  modules=$(grep -c '^go: downloading ' "$log" || true)
  echo "build-tools: building $tool: $seconds s, $packages packages compiled, $modules modules downloaded"
}

build() {
  local tool=$1 dir bin log started
  dir=$(dir_of "$tool")
  bin="$dir/bin/$tool"
  if [[ -x $bin ]]; then
    echo "build-tools: $tool cached at $bin"
    return 0
  fi
  mkdir -p "$dir"
  log="$dir/build.log"
  started=$(date +%s)
  echo "build-tools: building $tool into $dir (log: $log) ..."
  # Build into a scratch directory first so an interrupted build never looks cached.
  local tmp="$dir/bin.partial"
  rm -rf "$tmp" && mkdir -p "$tmp"
  # The progress lines come from a ticker beside the build; it ends with the build, or with this
  # script (it checks every second that the script still runs).
  (
    next=$progress_every
    while sleep 1 && kill -0 $$ 2>/dev/null; do
      if (($(date +%s) - started >= next)); then
        progress "$tool" "$log" "$(($(date +%s) - started))"
        next=$((next + progress_every))
      fi
    done
  ) &
  local ticker=$!
  if ! (
    set -e
    export GOFLAGS=-mod=mod CGO_ENABLED=0
    case "$tool" in
      temporal) GOBIN="$tmp" go install -v "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION" ;;
      temporal-server)
        GOBIN="$tmp" go install -v "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
          "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
        mv "$tmp/server" "$tmp/temporal-server" && mv "$tmp/sql" "$tmp/temporal-sql-tool" ;;
      kwok) GOBIN="$tmp" go install -v "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" ;;
      helm) GOBIN="$tmp" go install -v "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" ;;
      promtool) GOBIN="$tmp" go install -v "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" ;;
      etcd) cd "$here/etcd" && go build -v -trimpath -o "$tmp/etcd" . ;;
      kstatus) cd "$here/kstatus" && go build -v -trimpath -o "$tmp/kstatus" . ;;
      # The three Kubernetes servers and kubectl (the tests' `kubectl wait`) share one wrapper module
      # (and so one version and module cache).
      kube-apiserver | kube-scheduler | kube-controller-manager | kubectl)
        cd "$here/kubernetes" && go build -v -trimpath -o "$tmp/$tool" "k8s.io/kubernetes/cmd/$tool" ;;
    esac
  ) >"$log" 2>&1; then
    kill "$ticker" 2>/dev/null || true
    wait "$ticker" 2>/dev/null || true
    echo "build-tools: FAILED to build $tool after $(($(date +%s) - started)) s; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    echo "build-tools: the whole log: $log" >&2
    exit 1
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  rm -rf "$dir/bin" && mv "$tmp" "$dir/bin"
  echo "build-tools: built $tool in $(($(date +%s) - started)) s"
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || read -r -a tools <<<"$ALL_TOOLS"
for tool in "${tools[@]}"; do build "$tool"; done
