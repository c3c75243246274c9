#!/usr/bin/env bash
# Runs the real network adapter end to end on Parley's wire-level test
# network (tests/wire-network) with cargo nextest: builds what it needs
# (nothing when scripts/test.sh built it already) and ends with nextest's
# summary.
#
# tests/wire-network is a workspace of its own: it turns on the adapter's
# `test-network` feature (and the certificate-chain switch it carries), which
# no build of the root workspace may see.
#
#   scripts/wire-e2e.sh [TEST-FILTER...]
#
# Brings up the test services through scripts/with-services.sh when they are
# not given (PARLEY_TEST_*).
set -euo pipefail
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

# `parley serve` with the real adapter runs this workspace's own build of the
# program, `parley-test-network`, which cargo builds with the tests.
exec cargo nextest run --manifest-path tests/wire-network/Cargo.toml --locked --profile ci "$@"
