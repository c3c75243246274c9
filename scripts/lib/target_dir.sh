# Sourced by scripts/test.sh: the tools the suite needs beyond Rust itself,
# and a target directory that stays bounded in size.

# The most the target directory may hold before the suite starts it afresh.
TARGET_DIR_LIMIT_GIB=${PARLEY_TARGET_DIR_LIMIT_GIB:-25}

# rustfmt and clippy come with the toolchain (README.md, Prerequisites: they
# cannot be fetched here when rustup's servers are out of reach); cargo-nextest
# is installed from crates.io when missing.
tools_up() {
  cargo fmt --version >/dev/null 2>&1 ||
    die "rustfmt is missing: rustup component add rustfmt (README.md, Prerequisites)"
  cargo clippy --version >/dev/null 2>&1 ||
    die "clippy is missing: rustup component add clippy (README.md, Prerequisites)"
  nextest_up
}

nextest_up() {
  cargo nextest --version >/dev/null 2>&1 && return 0
  log "installing cargo-nextest from crates.io (once)"
  cargo install --locked --quiet cargo-nextest
}

# Starts the target directory afresh when the toolchain changed (nothing in
# it can be reused) or when it grew past TARGET_DIR_LIMIT_GIB, and says so.
target_dir_bounded() {
  local dir=$CARGO_TARGET_DIR stamp want size_kib limit_kib
  mkdir -p "$dir"
  stamp=$dir/.toolchain
  want=$(rustc -vV | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" != "$want" ]; then
    log "the Rust toolchain changed: removing the target directory $dir"
    rm -rf "$dir" && mkdir -p "$dir"
  fi
  limit_kib=$((TARGET_DIR_LIMIT_GIB * 1024 * 1024))
  size_kib=$(du -sk "$dir" 2>/dev/null | cut -f1)
  if [ "${size_kib:-0}" -gt "$limit_kib" ]; then
    # Incremental caches grow fastest (one set per checkout path and change)
    # and are the cheapest to lose: they go first, the built crates stay.
    log "the target directory holds $((size_kib / 1024 / 1024)) GiB, over ${TARGET_DIR_LIMIT_GIB} GiB: removing its incremental caches"
    rm -rf "$dir"/*/incremental
    size_kib=$(du -sk "$dir" 2>/dev/null | cut -f1)
  fi
  if [ "${size_kib:-0}" -gt "$limit_kib" ]; then
    log "the target directory still holds $((size_kib / 1024 / 1024)) GiB: removing $dir"
    rm -rf "$dir" && mkdir -p "$dir"
  fi
  echo "$want" >"$stamp"
  log "target directory $dir: $(du -sh "$dir" | cut -f1)"
}

# settle_build_scripts PROFILE_DIR: waproto's build script (whatsapp-rust's
# protocol types) names a file it writes itself, `out/whatsapp.local.desc`,
# as an input (`rerun-if-changed`). Cargo dates a script's run to its start,
# so the file is newer than the run that wrote it, and the next cargo
# command runs the script again and recompiles waproto and everything above
# it (on a new machine: the wire workspace's build, then the root's tests).
# The file is derived from the package's own sources, which cargo still
# watches: dating it back to the epoch keeps the first run's result.
settle_build_scripts() {
  local f
  for f in "$1"/build/waproto-*/out/whatsapp.local.desc; do
    [ -f "$f" ] && touch -d @0 "$f"
  done
  return 0
}

# slowest JUNIT: the ten slowest tests of a nextest JUnit report.
slowest() {
  [ -f "$1" ] || return 0
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = [(float(c.get("time", 0)), f'{c.get("classname")} {c.get("name")}') for c in ET.parse(sys.argv[1]).iter("testcase")]
print("slowest tests:", file=sys.stderr)
for t, name in sorted(cases, reverse=True)[:10]:
    print(f"  {t:7.1f} s  {name}", file=sys.stderr)
PY
}
