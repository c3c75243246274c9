#!/usr/bin/env python3
"""The console's overview routes with many sessions: starts `parley serve`
(the release build: `parley` on PATH, else the one in the Cargo target
directory), writes N sessions straight into its database (SQLite, or with
--postgres a fresh database on PARLEY_TEST_POSTGRES_URL's server), and times
GET /sessions (first page, a late page, searches) and GET /cluster.

    scripts/bench_console.py [--sessions N] [--postgres]
"""
import argparse, json, os, shutil, socket, sqlite3, subprocess, tempfile, time, urllib.parse, urllib.request, statistics

parser = argparse.ArgumentParser()
parser.add_argument("--sessions", type=int, default=10_000)
parser.add_argument("--postgres", action="store_true")
args = parser.parse_args()
N, pg = args.sessions, args.postgres
target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/parley-target"))
BIN = shutil.which("parley") or os.path.join(target, "release", "parley")
TOKEN = "bench-account-token-0123456789abcdef"
PG_URL = urllib.parse.urlparse(os.environ.get("PARLEY_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"))
PSQL = ["psql", "-h", PG_URL.hostname or "127.0.0.1", "-p", str(PG_URL.port or 5432), "-U", PG_URL.username or "postgres"]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

d = tempfile.mkdtemp()
port, ops = free_port(), free_port()
env = dict(os.environ, PARLEY_DATA_DIR=d, PARLEY_BIND=f"127.0.0.1:{port}", PARLEY_OPS_BIND=f"127.0.0.1:{ops}",
           PARLEY_NETWORK="sandbox", PARLEY_ACCOUNT_TOKEN=TOKEN, RUST_LOG="warn")
dbname = f"sessbench{os.getpid()}"
if pg:
    subprocess.run(PSQL + ["-c", f"CREATE DATABASE {dbname}"], check=True, capture_output=True)
    env["PARLEY_DATABASE_URL"] = f"postgres://{PG_URL.username or 'postgres'}@{PG_URL.hostname}:{PG_URL.port or 5432}/{dbname}"
proc = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{port}"

def call(path, method="GET", body=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())

try:
    for _ in range(100):
        try:
            call("/health/ready"); break
        except Exception:
            time.sleep(0.2)
    call("/start?clientId=tmpl", "POST", {})
    time.sleep(1)
    if pg:
        cols = subprocess.run(PSQL + ["-d", dbname, "-Atc",
            "select column_name from information_schema.columns where table_name='sessions' order by ordinal_position"],
            check=True, capture_output=True, text=True).stdout.split()
        exprs = []
        for c in cols:
            exprs.append({"client_id": "'shop'||n", "jid": "'49151'||lpad(n::text,7,'0')||'@s.whatsapp.net'",
                          "desired": "false", "org_id": "'org'||(n % 100)"}.get(c, f"t.{c}"))
        sql = (f"insert into sessions ({','.join(cols)}) select {','.join(exprs)} from generate_series(1,{N}) n "
               f"cross join (select * from sessions where client_id='tmpl') t")
        subprocess.run(PSQL + ["-d", dbname, "-c", sql], check=True, capture_output=True)
    else:
        db = sqlite3.connect(os.path.join(d, "parley.sqlite"), timeout=30)
        cur = db.execute("select * from sessions where client_id='tmpl'")
        cols = [c[0] for c in cur.description]; row = cur.fetchone()
        rows = []
        for n in range(1, N + 1):
            v = dict(zip(cols, row)); v.update(client_id=f"shop{n}", jid=f"49151{n:07d}@s.whatsapp.net", desired=0, org_id=f"org{n % 100}")
            rows.append(tuple(v[c] for c in cols))
        db.executemany(f"insert into sessions ({','.join(cols)}) values ({','.join('?' * len(cols))})", rows)
        db.commit(); db.close()
    total = call("/sessions?limit=1")["pagination"]["total"]
    print(f"{'PostgreSQL' if pg else 'SQLite'}: {total} sessions")
    for path in ["/sessions", f"/sessions?page={max(1, N // 100)}&limit=50", f"/sessions?q=shop{N // 8}", "/sessions?q=ORG7&page=3", "/sessions?q=nomatch", "/cluster"]:
        times = []
        for _ in range(30):
            t = time.perf_counter(); call(path); times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"  GET {path}: median {statistics.median(times):.1f} ms, p90 {times[int(len(times)*0.9)]:.1f} ms, max {times[-1]:.1f} ms")
finally:
    proc.terminate(); proc.wait()
    if pg:
        subprocess.run(PSQL + ["-c", f"DROP DATABASE {dbname}"], capture_output=True)
