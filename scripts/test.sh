#!/usr/bin/env bash
# Runs the whole test suite against real services on loopback: PostgreSQL,
# Redis, NATS with JetStream and an S3-compatible server (moto), brought up by
# scripts/lib/services.sh (reused when already running, else installed and
# started privately, and stopped again at the end).
#
# Steps, each timed (`step <name>: <s> s`, and a table at the end):
#   deploy     the deployment files (deploy/validate.py)
#   locks      the wire-level workspace's lock file follows the root's
#   fmt        cargo fmt --check, both workspaces
#   build      every binary the later steps run, once, in the dev profile
#              (docs/development.md), Parley's own crates linted by clippy
#              (-D warnings) as they compile: tests, the harness, the benchmarks,
#              `parley`, and the wire-level workspace (`parley-test-network`,
#              its tests and `wire-bench`); cargo's timing report is kept
#   docs       the commands in README.md and docs/, with the prebuilt binaries
#   api-fuzz   the OpenAPI document against a running server (schemathesis)
#   nextest    every test of the root workspace (JUnit: the slowest listed)
#   faults     the harness's fault run in its smallest form (docs/benchmarks.md)
#   wire       the real adapter on the wire-level test network
# After the build step nothing compiles: a step that does fails.
# Extra arguments go to the nextest step.
#
#   scripts/test.sh --prepare   only install what the suite needs, then exit
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# The suite runs in the build tree, a copy of this checkout at a fixed path
# whose unchanged files keep their times (scripts/build_tree.py): a fresh
# clone then recompiles only the crates that changed since the last run.
# One run at a time holds it. PARLEY_BUILD_TREE=here runs in place.
if [ -z "${PARLEY_BUILD_TREE:-}" ]; then
  tree=$HOME/.cache/parley-src
  mkdir -p "$tree"
  exec 9>"$tree.lock"
  if ! flock -n 9; then
    echo "==> another run of the suite holds the build tree $tree: waiting" >&2
    flock 9
  fi
  python3 scripts/build_tree.py "$root" "$tree"
  PARLEY_BUILD_TREE=$tree PARLEY_SOURCE_ROOT=$root exec bash "$tree/scripts/test.sh" "$@"
fi
source_root=${PARLEY_SOURCE_ROOT:-$root}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# shellcheck source=lib/services.sh
source scripts/lib/services.sh
# shellcheck source=lib/steps.sh
source scripts/lib/steps.sh
# shellcheck source=lib/target_dir.sh
source scripts/lib/target_dir.sh

command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (see README.md, Prerequisites)"
# Clippy runs inside the build: Parley's own crates (and only they) compile
# through clippy's driver, which lints them with -D warnings as it builds
# them, so the dependency graph compiles once instead of once checked for
# `cargo clippy` and once more built. Every cargo command of the suite runs
# with these settings, so no later step compiles again.
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
services_begin
trap 'rc=$?; trap - EXIT INT TERM; steps_summary; services_stop || { [ $rc = 0 ] && rc=1; }; exit $rc' EXIT
wire=(--manifest-path tests/wire-network/Cargo.toml)
if [ "${1:-}" = --prepare ]; then
  # Everything private instances need, so that a later run works offline.
  # shellcheck disable=SC2046
  apt_install $(PARLEY_PRIVATE_SERVICES=1 needed_packages)
  venv_up
  node_packages
  nextest_up
  log "fetching crates"
  cargo fetch --locked
  cargo fetch --locked "${wire[@]}"
  log "prepared"
  exit 0
fi
step services services_up
step tools tools_up
target_dir_bounded

step deploy "$PARLEY_VENV/bin/python" deploy/validate.py
step locks python3 scripts/check_locks.py

# Each step's commands stop at the first failure (`set -e` does not reach
# into a function run as `step`'s condition).
fmt() {
  cargo fmt --all -- --check || return
  cargo fmt --all "${wire[@]}" -- --check
}
step fmt fmt

build() {
  # The benchmarks' executables, for the docs checker (its `cargo bench` blocks).
  mkdir -p "$CARGO_TARGET_DIR/debug"
  cargo build --workspace --all-targets --locked --timings --message-format=json-render-diagnostics |
    python3 scripts/bench_executables.py >"$CARGO_TARGET_DIR/debug/benches.tsv" || return
  settle_build_scripts "$CARGO_TARGET_DIR/debug"
  cargo build "${wire[@]}" --all-targets --locked || return
  log "cargo's timing report: $CARGO_TARGET_DIR/cargo-timings/cargo-timing.html"
}
step build build
export PARLEY_PREBUILT=$CARGO_TARGET_DIR/debug

logged() { # logged NAME COMMAND...: runs COMMAND, its output also in a log checked for compiling
  local log=$CARGO_TARGET_DIR/step-$1.log rc=0
  shift
  # Cargo says why a crate is stale (at info level only for stale ones), so
  # a compile after the build step comes with its reason.
  CARGO_LOG=${CARGO_LOG:-cargo::core::compiler::fingerprint=info} "$@" 2>&1 | tee "$log" || rc=$?
  ((rc == 0)) || return "$rc"
  no_compiling "$log"
}

step docs logged docs python3 scripts/check_docs.py
# Its smallest form: every operation and check, fewer examples (the full
# form is scripts/api-fuzz.sh by hand).
step api-fuzz logged api-fuzz env PARLEY_FUZZ_EXAMPLES="${PARLEY_FUZZ_EXAMPLES:-25}" \
  PARLEY_FUZZ_SECONDS="${PARLEY_FUZZ_SECONDS:-100}" scripts/api-fuzz.sh "$PARLEY_PREBUILT/parley"
# The console's browser tests take the screenshots docs/console.md shows.
step nextest logged nextest env PARLEY_CONSOLE_SCREENSHOTS="$source_root/docs/console" \
  cargo nextest run --workspace --locked --profile ci "$@"
slowest target/nextest/ci/junit.xml
# The fault run's smallest form: few sessions, slow load, short pauses
# (the full run: docs/benchmarks.md, "The fault run").
step faults logged faults "$PARLEY_PREBUILT/parley-harness" --faults --sessions 6 \
  --pair-rate 20 --send-rate 4 --event-rate 4 --settle 3 --s3-pause 5
step wire logged wire scripts/wire-e2e.sh
slowest tests/wire-network/target/nextest/ci/junit-wire.xml
