#!/usr/bin/env bash
# Runs one command with the test services up (the same ones scripts/test.sh
# brings up) and PARLEY_TEST_* naming them, then stops what it started:
#
#   scripts/with-services.sh cargo bench -p parley-worker --bench history
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
# shellcheck source=lib/services.sh
source scripts/lib/services.sh
(($#)) || die "usage: scripts/with-services.sh COMMAND [ARG...]"
services_begin
services_up
"$@"
