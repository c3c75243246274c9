#!/usr/bin/env bash
# Runs the real network adapter end to end on Parley's wire-level test
# network (tests/wire-network): builds what it needs and ends with
# `N passed, N failed`.
#
# The package turns on the adapter's `test-network` feature (and the
# certificate-chain switch it carries), so it is built in a cargo run of its
# own: the workspace's other builds, and the release binary, never see it.
#
#   scripts/wire-e2e.sh [TEST-FILTER]
#
# Brings up the test services through scripts/with-services.sh when they are
# not given (PARLEY_TEST_*).
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
export RUST_LOG=${RUST_LOG:-warn}

# The cluster test needs PostgreSQL, Redis, NATS and S3: run inside the test
# services unless the caller (scripts/test.sh) already provides them.
if [ -z "${PARLEY_TEST_POSTGRES_URL:-}" ]; then
  exec scripts/with-services.sh "$0" "$@"
fi

# The independent client (Baileys, on Node.js) for the cross-check.
# shellcheck source=lib/services.sh
(source scripts/lib/services.sh && node_packages) || exit

# `parley serve` with the real adapter runs this binary: the program built
# with the feature under its own name (the default `parley` stays without it).
cargo build -p parley --features test-network --bin parley-test-network || exit
export PARLEY_TEST_NETWORK_BIN="$CARGO_TARGET_DIR/debug/parley-test-network"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test -p parley-wire-network --tests --no-fail-fast -- "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
read -r passed failed < <(awk '/^test result:/ { p += $4; f += $6 } END { print p+0, f+0 }' "$log")
echo "wire-e2e: $passed passed, $failed failed"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "wire-e2e: the build or a test binary failed (exit $status)" >&2
fi
exit "$status"
