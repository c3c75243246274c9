#!/usr/bin/env bash
# Runs the commands shown in README.md and docs/ (see scripts/check_docs.py for
# how each block is checked) with the binaries scripts/test.sh's build step
# makes. Needs the test services: scripts/test.sh runs it with them; alone,
# run `scripts/with-services.sh scripts/check-docs.sh [FILE...]`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
: "${PARLEY_TEST_POSTGRES_URL:?run it under scripts/with-services.sh or scripts/test.sh}"
cargo build --workspace --all-targets --locked --quiet --message-format=json-render-diagnostics |
  python3 scripts/bench_executables.py >"$CARGO_TARGET_DIR/debug/benches.tsv"
cargo build --manifest-path tests/wire-network/Cargo.toml --all-targets --locked --quiet
export PARLEY_PREBUILT=$CARGO_TARGET_DIR/debug
exec python3 scripts/check_docs.py "$@"
