#!/usr/bin/env bash
# Runs the commands shown in README.md and docs/ (see scripts/check_docs.py for
# how each block is checked). Needs the test services: scripts/test.sh runs it
# with them; alone, run `scripts/with-services.sh scripts/check-docs.sh [FILE...]`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
: "${PARLEY_TEST_POSTGRES_URL:?run it under scripts/with-services.sh or scripts/test.sh}"
# The commands use the release build: build it once, up front.
cargo build --release --quiet -p parley -p parley-tests
exec python3 scripts/check_docs.py "$@"
