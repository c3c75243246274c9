# Sourced by the project's scripts: brings up the services the tests and the
# harness talk to (PostgreSQL, Redis, NATS with JetStream, an S3-compatible
# server) on loopback and the Python tools in a virtual environment.
#
# - A service already answering on its usual port is reused (NATS only with
#   JetStream on); any other is started privately on a free loopback port
#   (another port is tried when the bind fails) and stopped by the PID recorded
#   here when the script exits, on success, failure or Ctrl-C.
# - Missing Debian packages are named, then installed (through sudo when not
#   root); Python tools go into a virtual environment under the cache directory,
#   pinned by scripts/requirements.txt.
#
# Callers: `services_begin`, then `services_up`; the exit trap stops what was
# started and checks that none of it is left.

PARLEY_CACHE=${PARLEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parley}
PARLEY_VENV=${PARLEY_VENV:-$PARLEY_CACHE/venv}
export PARLEY_VENV # the harness's fault run starts an S3 server from it
services_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
services_work=
started_pids=()  # "label pid" of every process this script started
started_stops=() # how to stop each gracefully (same order)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when root, else through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "root is needed for: $* (run as root, or install sudo)"; fi
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# apt_install PKG...: installs the missing ones from Debian's packages.
apt_updated=
apt_install() {
  local missing=() p
  for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]}, and no apt-get to install them with"
  local how="as root"; [ "$(id -u)" = 0 ] || how="with sudo"
  log "installing from Debian's packages ($how): ${missing[*]}"
  if [ -z "$apt_updated" ]; then as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  hash -r
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A loopback port nothing listens on now (the start is retried when another
# process takes it first).
pick_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    port_open "$p" || { echo "$p"; return; }
  done
}

# Whether process $1 runs (a zombie waiting to be reaped does not).
running() {
  local state
  state=$(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# wait_until <what> <seconds> <pid> <command...>: runs the command until it
# succeeds; fails when the process <pid> has exited or the time is up.
wait_until() {
  local what=$1 secs=$2 pid=$3; shift 3
  local until=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    running "$pid" || { log "$what exited while starting"; return 1; }
    ((SECONDS <= until)) || { log "$what did not come up within ${secs}s"; return 1; }
    sleep 0.1
  done
}

started() { started_pids+=("$2 $1"); started_stops+=("$3"); }

# Stops every process this script started, newest first, then checks that
# none is left (SIGKILL for any that outlived its graceful stop).
services_stop() {
  local i label pid left=0
  for ((i = ${#started_pids[@]} - 1; i >= 0; i--)); do
    read -r pid label <<<"${started_pids[$i]}"
    running "$pid" || continue
    eval "${started_stops[$i]}" >/dev/null 2>&1 || true
    local until=$((SECONDS + 15))
    while running "$pid" && ((SECONDS < until)); do sleep 0.1; done
    if running "$pid"; then log "$label (pid $pid) ignored its stop: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for ((i = 0; i < ${#started_pids[@]}; i++)); do
    read -r pid label <<<"${started_pids[$i]}"
    if running "$pid"; then
      log "still running after the stop: $label (pid $pid)"; left=1
    fi
  done
  if ((${#started_pids[@]})); then
    ((left)) && log "some services this script started are still running" || log "stopped every service this script started (${#started_pids[@]})"
  fi
  [ -n "$services_work" ] && rm -rf "$services_work"
  return $left
}

services_begin() {
  services_work=$(mktemp -d "${TMPDIR:-/tmp}/parley-services.XXXXXX")
  chmod 755 "$services_work"
  trap 'rc=$?; trap - EXIT INT TERM; services_stop || { [ $rc = 0 ] && rc=1; }; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# --- what is reused, what must be installed ---------------------------------

# PARLEY_PRIVATE_SERVICES=1 starts private instances even when shared ones run.
private_only() { [ "${PARLEY_PRIVATE_SERVICES:-}" = 1 ]; }
reuse_postgres() {
  ! private_only && command -v psql >/dev/null && psql "postgres://postgres@127.0.0.1:5432/postgres" -qtAc 'select 1' >/dev/null 2>&1
}
reuse_redis() {
  ! private_only && command -v redis-cli >/dev/null && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]
}
# A NATS server's INFO line tells whether JetStream is on.
nats_jetstream() {
  local info
  info=$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && head -n1 <&3" 2>/dev/null) || return 1
  [[ $info == INFO* && $info == *'"jetstream":true'* ]]
}
reuse_nats() { ! private_only && port_open 4222 && nats_jetstream 4222; }

postgres_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
nats_bin() { command -v nats-server || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; }; }

# The Debian packages this run needs, given what can be reused.
needed_packages() {
  local pkgs=(curl ca-certificates)
  # The servers' programs even where running ones are reused: tests and the
  # harness's fault run start servers of their own, which they stop and restart.
  [ -n "$(postgres_bindir)" ] || pkgs+=(postgresql)
  command -v redis-server >/dev/null || pkgs+=(redis-server redis-tools)
  [ -n "$(nats_bin)" ] || pkgs+=(nats-server)
  python_ok || pkgs+=(python3 python3-venv)
  # The independent client of the wire-network tests (Baileys) runs on Node.js.
  { command -v node >/dev/null && command -v npm >/dev/null; } || pkgs+=(nodejs npm)
  # The browser tests of /docs and the console drive Debian's Chromium.
  command -v chromium >/dev/null || pkgs+=(chromium)
  command -v chromedriver >/dev/null || pkgs+=(chromium-driver)
  echo "${pkgs[@]}"
}

python_ok() { command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' >/dev/null 2>&1; }

# --- the Python tools ---------------------------------------------------------

# Creates (or refreshes) the virtual environment from scripts/requirements.txt.
venv_up() {
  local req=$services_root/scripts/requirements.txt stamp=$PARLEY_VENV/.requirements.sha256 want
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$PARLEY_VENV/bin/python" ] && "$PARLEY_VENV/bin/python" -c '' 2>/dev/null &&
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return
  fi
  log "Python tools: virtual environment $PARLEY_VENV (scripts/requirements.txt)"
  rm -rf "$PARLEY_VENV"
  mkdir -p "$(dirname "$PARLEY_VENV")"
  python3 -m venv "$PARLEY_VENV"
  "$PARLEY_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  echo "$want" >"$stamp"
}

# The independent client of the wire-level tests (Baileys, on Node.js): its
# packages as tests/wire-network/baileys/package-lock.json pins them,
# installed again only when the lock file changes. The lock file's overrides
# (registry versions in place of git dependencies) need npm 10 or later;
# where the machine's npm is older (Debian 12 ships 9.2), a pinned npm from
# the registry installs them.
NPM_PINNED=10.9.2
node_packages() {
  local dir=$services_root/tests/wire-network/baileys want npm_major
  command -v npm >/dev/null || die "npm not found (Node.js runs the wire-level tests' Baileys client; see README.md, Prerequisites)"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  [ "$(cat "$dir/node_modules/.parley-lock" 2>/dev/null)" = "$want" ] && return
  log "Node.js packages of the wire-level tests (tests/wire-network/baileys)"
  npm_major=$(npm --version | cut -d. -f1)
  local npm=(npm)
  [ "$npm_major" -ge 10 ] 2>/dev/null || npm=(npx --yes "npm@$NPM_PINNED")
  (cd "$dir" && "${npm[@]}" ci --no-audit --no-fund --loglevel=error) || die "installing the wire-level tests' Node.js packages failed"
  echo "$want" >"$dir/node_modules/.parley-lock"
}

# --- starting private instances -------------------------------------------------

# try_ports <label> <start-function>: calls <start-function> PORT with fresh
# ports until one binds (5 tries).
try_ports() {
  local label=$1 fn=$2 try port
  for try in 1 2 3 4 5; do
    port=$(pick_port)
    if "$fn" "$port"; then return 0; fi
    log "$label: could not start on 127.0.0.1:$port (try $try), trying another port"
  done
  die "$label: no port could be bound"
}

start_postgres_on() {
  local port=$1 bindir dir=$services_work/pg-$1 owner=() pid
  bindir=$(postgres_bindir)
  mkdir -p "$dir"
  # initdb refuses to run as root: run the private cluster as the postgres user.
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd -r postgres
    chown postgres "$dir"; owner=(runuser -u postgres --)
  fi
  "${owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
  "${owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1" \
    -l "$dir/log" -w -t 60 start >/dev/null 2>&1 || return 1
  pid=$(head -n1 "$dir/data/postmaster.pid")
  started PostgreSQL "$pid" "kill -INT $pid"
  export PARLEY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres
  log "PostgreSQL: started on 127.0.0.1:$port (pid $pid)"
}

start_redis_on() {
  local port=$1 pid
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize no \
    --logfile "$services_work/redis-$port.log" --dir "$services_work" &
  pid=$!
  if ! wait_until Redis 20 "$pid" redis-cli -h 127.0.0.1 -p "$port" ping ||
    [ "$(redis-cli -h 127.0.0.1 -p "$port" info server | tr -d '\r' | sed -n 's/^process_id://p')" != "$pid" ]; then
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 1
  fi
  started Redis "$pid" "kill -TERM $pid"
  export PARLEY_TEST_REDIS_URL=redis://127.0.0.1:$port
  log "Redis: started on 127.0.0.1:$port (pid $pid)"
}

start_nats_on() {
  local port=$1 pid logf=$services_work/nats-$1.log
  "$(nats_bin)" -a 127.0.0.1 -p "$port" -js -sd "$services_work/nats-$port" -l "$logf" &
  pid=$!
  # Its own log line names the port it listens on: another server on it does not count.
  if ! wait_until NATS 20 "$pid" grep -q "Listening for client connections on 127.0.0.1:$port" "$logf"; then
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 1
  fi
  started NATS "$pid" "kill -TERM $pid"
  export PARLEY_TEST_NATS_URL=nats://127.0.0.1:$port
  log "NATS (JetStream): started on 127.0.0.1:$port (pid $pid)"
}

start_s3_on() {
  local port=$1 pid logf=$services_work/moto-$1.log
  "$PARLEY_VENV/bin/moto_server" -H 127.0.0.1 -p "$port" >"$logf" 2>&1 &
  pid=$!
  if ! wait_until "S3 (moto)" 60 "$pid" grep -q "Running on http://127.0.0.1:$port" "$logf"; then
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 1
  fi
  started "S3 (moto)" "$pid" "kill -TERM $pid"
  export PARLEY_TEST_S3_ENDPOINT=http://127.0.0.1:$port
  log "S3 (moto): started on 127.0.0.1:$port (pid $pid)"
}

# Installs what is missing, then reuses or starts each service and exports
# PARLEY_TEST_POSTGRES_URL, _REDIS_URL, _NATS_URL and _S3_ENDPOINT.
services_up() {
  if [ -n "${PARLEY_TEST_POSTGRES_URL:-}" ] && [ -n "${PARLEY_TEST_REDIS_URL:-}" ] &&
    [ -n "${PARLEY_TEST_NATS_URL:-}" ] && [ -n "${PARLEY_TEST_S3_ENDPOINT:-}" ]; then
    log "services: using the ones PARLEY_TEST_* name"
    return
  fi
  # shellcheck disable=SC2046
  apt_install $(needed_packages)
  venv_up
  if reuse_postgres; then
    export PARLEY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres
    log "PostgreSQL: reusing 127.0.0.1:5432"
  else try_ports PostgreSQL start_postgres_on; fi
  if reuse_redis; then
    export PARLEY_TEST_REDIS_URL=redis://127.0.0.1:6379; log "Redis: reusing 127.0.0.1:6379"
  else try_ports Redis start_redis_on; fi
  if reuse_nats; then
    export PARLEY_TEST_NATS_URL=nats://127.0.0.1:4222; log "NATS: reusing 127.0.0.1:4222 (JetStream on)"
  else
    ! private_only && port_open 4222 && log "NATS on 127.0.0.1:4222 has no JetStream: starting a private one"
    try_ports NATS start_nats_on
  fi
  try_ports "S3 (moto)" start_s3_on
}
