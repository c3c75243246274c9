#!/usr/bin/env bash
# Tries the README's two commands as a newcomer on a fresh Debian 12 machine:
#
# 1. builds a minimal Debian 12 root with debootstrap (from the mirror this
#    machine's apt uses), with this machine's Rust toolchain mounted read-only;
# 2. as a non-root user with sudo, installs the README's prerequisites and
#    clones the project, then fetches everything the commands need while the
#    network is there (`scripts/test.sh --prepare`);
# 3. inside a network namespace of its own (loopback only: the host's
#    PostgreSQL, Redis and NATS are not visible, so the test script must start
#    its own), runs the first command until /health/ready answers, stops it,
#    then runs the second to its last line.
#
# Slow (two cold builds): not part of the test suite. Needs root.
#   scripts/fresh-debian.sh [--keep]     --keep leaves the root in place
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# shellcheck source=lib/services.sh
source scripts/lib/services.sh
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, mounts and network namespaces need it)"
keep=; [ "${1:-}" = --keep ] && keep=1

apt_install debootstrap iproute2
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || die "no Debian mirror found in this machine's apt sources"

base=$(mktemp -d /var/tmp/parley-fresh-debian.XXXXXX)
root=$base/root
mounts=()
finish() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ -z "$keep" ]; then rm -rf --one-file-system "$base"; else log "root kept at $root"; fi
}
trap finish EXIT

log "debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$base/debootstrap.log" 2>&1 ||
  { tail -n 20 "$base/debootstrap.log" >&2; die "debootstrap failed"; }

bind() { # bind SRC DEST [ro]
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"; mounts+=("$root$2")
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$root$2"
  return 0
}
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
bind /dev /dev
mount -t devpts devpts "$root/dev/pts" -o newinstance,ptmxmode=0666 2>/dev/null && mounts+=("$root/dev/pts") || true
# This machine's network settings: name servers, its host name, and the
# certificate authorities it trusts beyond Debian's (an intercepting proxy's).
cp /etc/resolv.conf "$root/etc/resolv.conf"
# debootstrap's minbase writes no /etc/hosts: a real install names localhost.
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n127.0.1.1 %s\n' \
  "$(hostname)" >"$root/etc/hosts"
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi

# This machine's Rust toolchain, read-only: rustup's home and the cargo
# proxies (the README has Rust installed with rustup). Nothing else comes
# from this machine: cargo-nextest is installed by the test script itself
# (`--prepare`), from crates.io, as on a newcomer's machine.
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=$(dirname "$(command -v cargo)")
bind "$rustup_home" /opt/rust/rustup ro
bind "$cargo_bin" /opt/rust/bin ro
toolchain=$(rustup show active-toolchain 2>/dev/null | cut -d' ' -f1)

# The newcomer: a user with sudo, and the project cloned into their home.
chroot "$root" /bin/bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo ca-certificates >/dev/null && update-ca-certificates >/dev/null'
chroot "$root" useradd -m -s /bin/bash newcomer
echo 'newcomer ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/newcomer"
git clone -q "$repo" "$root/home/newcomer/parley"
[ -d "$repo/../shared" ] && cp -r "$repo/../shared" "$root/home/newcomer/shared"
chroot "$root" chown -R newcomer: /home/newcomer

# The newcomer's shell in the project: online, or offline in a network
# namespace of its own with loopback only.
newcomer() {
  cmd=(chroot "$root" /usr/bin/sudo -u newcomer -H env -i HOME=/home/newcomer USER=newcomer LANG=C.UTF-8
    PATH=/opt/rust/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
    RUSTUP_HOME=/opt/rust/rustup RUSTUP_TOOLCHAIN="$toolchain" CI="${CI:-}"
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
    bash -c "cd ~/parley && $1")
}
as_newcomer() { newcomer "$1"; "${cmd[@]}"; }
offline() { newcomer "$1"; unshare --net bash -c 'ip link set lo up && exec "$@"' offline "${cmd[@]}"; }

# The README's prerequisites line, as the newcomer would type it.
prereq=$(grep -m1 -o 'sudo apt-get install -y [^`]*' README.md) || die "README.md has no 'sudo apt-get install -y' line"
log "prerequisites: $prereq"
as_newcomer "$prereq >/dev/null"
log "fetching what the commands need (scripts/test.sh --prepare)"
as_newcomer "scripts/test.sh --prepare"

log "first command: cargo run --release -- serve (until /health/ready answers)"
offline '
  set -e
  cargo run --release -- serve >~/serve.log 2>&1 & pid=$!
  # Up to 2 hours: the cold release build comes first, and on a busy 2-core
  # machine it took over 30 minutes.
  for i in $(seq 1 14400); do
    if curl -fsS localhost:8080/health/ready >/dev/null 2>&1; then ready=1; break; fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.5
  done
  curl -sS localhost:8080/health/ready || true; echo
  kill -TERM $pid; wait $pid || true
  [ -n "${ready:-}" ] || { tail -n 30 ~/serve.log; exit 1; }
  echo "serve: ready, then stopped"
'
log "second command: scripts/test.sh"
set +e
offline 'scripts/test.sh 2>&1 | tee ~/test.log | tail -n 40; exit ${PIPESTATUS[0]}'
rc=$?
set -e
cp "$root/home/newcomer/test.log" "$base.test.log" 2>/dev/null && log "test log: $base.test.log"
log "scripts/test.sh exited with $rc"
exit "$rc"
