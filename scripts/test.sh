#!/usr/bin/env bash
# Runs the whole test suite against real services on loopback: PostgreSQL,
# Redis, NATS with JetStream and an S3-compatible server (moto), brought up by
# scripts/lib/services.sh (reused when already running, else installed and
# started privately, and stopped again at the end). Then: the deployment files,
# formatting, lints, the commands shown in the README and docs/, the OpenAPI
# document against a running server (schemathesis), every test with cargo
# nextest, and the real adapter on the wire-level test network. Extra arguments go to cargo nextest.
#
#   scripts/test.sh --prepare   only install what the suite needs, then exit
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# shellcheck source=lib/services.sh
source scripts/lib/services.sh

command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (see README.md, Prerequisites)"
services_begin
if [ "${1:-}" = --prepare ]; then
  # Everything private instances need, so that a later run works offline.
  # shellcheck disable=SC2046
  apt_install $(PARLEY_PRIVATE_SERVICES=1 needed_packages)
  venv_up
  node_packages
  log "fetching crates"
  cargo fetch --locked
  log "prepared"
  exit 0
fi
services_up

log "deploy/validate.py"
"$PARLEY_VENV/bin/python" deploy/validate.py

log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy"
# The wire-level test network turns the adapter's test-network feature on;
# linted apart, so the rest is linted as it ships.
cargo clippy --workspace --exclude parley-wire-network --all-targets --quiet -- -D warnings
cargo clippy -p parley-wire-network --all-targets --quiet -- -D warnings

log "the commands in README.md and docs/"
scripts/check-docs.sh

log "the OpenAPI document against the server (schemathesis, at most 5 minutes)"
scripts/api-fuzz.sh

if cargo nextest --version >/dev/null 2>&1; then
  log "cargo nextest run"
  cargo nextest run --workspace --exclude parley-wire-network --no-fail-fast --failure-output final "$@"
else
  log "cargo test (cargo-nextest not installed)"
  cargo test --workspace --exclude parley-wire-network --no-fail-fast "$@"
fi

log "the real adapter on the wire-level test network"
scripts/wire-e2e.sh
