#!/usr/bin/env bash
# Checks that /openapi.json tells the truth: starts `parley serve` (sandbox
# network, default settings, a private data directory, a free port), runs
# schemathesis with scripts/schemathesis.toml against it, stops the server
# by its PID and fails on any failure.
#
#   scripts/api-fuzz.sh [BINARY]     (default: the release build)
#
# The full form (by hand): 100 examples an operation, at most 280 s.
# PARLEY_FUZZ_EXAMPLES and PARLEY_FUZZ_SECONDS make it smaller: the test
# script runs its smallest form (docs/development.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
# shellcheck source=lib/services.sh
source scripts/lib/services.sh
bin=${1:-$CARGO_TARGET_DIR/release/parley}
[ -x "$bin" ] || die "no parley binary at $bin (cargo build --release first)"
venv_up

dir=$(mktemp -d)
port=$(pick_port)
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
pid=
stop() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap stop EXIT
PARLEY_DATA_DIR="$dir/data" PARLEY_BIND="127.0.0.1:$port" PARLEY_NETWORK=sandbox \
  PARLEY_ACCOUNT_TOKEN="$token" RUST_LOG=warn "$bin" serve >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1 && break
  running "$pid" || { cat "$dir/serve.log" >&2; die "parley serve exited"; }
  sleep 0.1
done
examples=${PARLEY_FUZZ_EXAMPLES:-100}
seconds=${PARLEY_FUZZ_SECONDS:-280}
log "schemathesis ($examples examples an operation, at most $seconds s) against http://127.0.0.1:$port/openapi.json"
# From the temporary directory: schemathesis keeps its example database there.
config=$(pwd)/scripts/schemathesis.toml
(cd "$dir" && PARLEY_FUZZ_TOKEN="$token" timeout $((seconds + 20)) "$PARLEY_VENV/bin/schemathesis" --no-color \
  --config-file "$config" run --max-examples "$examples" --max-time "$seconds" \
  "http://127.0.0.1:$port/openapi.json" >"$dir/schemathesis.txt" 2>&1) &&
  rc=0 || rc=$?
tail -n 25 "$dir/schemathesis.txt"
if grep -q "panicked" "$dir/serve.log"; then
  grep -A5 panicked "$dir/serve.log" >&2
  die "parley serve panicked during the run"
fi
[ "$rc" = 0 ] || { cat "$dir/schemathesis.txt" >&2; die "schemathesis found failures (exit $rc)"; }
