#!/usr/bin/env python3
"""Runs the shell commands shown in README.md and docs/*.md, so none of them rots.

Each fenced shell block says how it is checked by its info string:

  sh                     run: a file's plain blocks between two `sh serve` blocks
                         run in order as one bash script (set -euo pipefail) from
                         the repository root, against the server last started
  sh serve               one command starting `parley serve` in the foreground:
                         started in the background, ready once /health/ready
                         answers 200, stopped before the next one and at the
                         file's end
  sh cluster             run as one bash script with the test services; its
                         background processes are stopped at the block's end
  sh bench               a benchmark or harness run: run as it is, must exit 0
  sh self                the test command itself (`scripts/test.sh`): checked to
                         be what `.ci/run` runs, not run again
  sh no-run=kubernetes   needs a Kubernetes cluster, a Docker engine or a real
  sh no-run=docker       phone: not run; every repository path it names must
  sh no-run=phone        exist (deploy/validate.py renders and checks the chart,
                         the manifests and the compose file)

Every runnable block sees the test services (PARLEY_TEST_* from
scripts/lib/services.sh), the prebuilt `parley` on PATH, and these
rewrites: `localhost:8080`, `127.0.0.1:8080` and `0.0.0.0:8080` become the
port of the server the checker started; `:9090` a second free port;
`PARLEY_OPS_BIND` is a free loopback port unless a block sets it;
`parley-data/` a fresh data directory; the service URLs of the examples
(`postgres://postgres@127.0.0.1:5432/parley`, `nats://127.0.0.1:4222`,
`redis://127.0.0.1:6379`, `http://127.0.0.1:9000`) the test services, with a
fresh database.

The commands are run with what scripts/test.sh built up front, in one profile
(PARLEY_PREBUILT names its directory, e.g. $CARGO_TARGET_DIR/debug): a block
stays as a newcomer types it, and the checker runs `cargo run --release -- X`
as `parley X`, `cargo run --release -p P --bin B -- X` as `B X`, `cargo bench
-p P --bench B -- X` as that benchmark's prebuilt executable, skips `cargo
build` lines, reads `$CARGO_TARGET_DIR/release/` as the prebuilt directory,
and counts a block that runs `cargo nextest run` as run by the suite's own
nextest step. Under CI=true a block whose output shows cargo compiling fails:
everything must have been built up front.

Ends with `docs: N passed, M failed`; exits 1 when a block failed or a shell
block has an unknown tag.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh"}
NO_RUN = {"kubernetes", "docker", "phone"}
TAGS = {"", "serve", "cluster", "bench", "self"} | {f"no-run={k}" for k in NO_RUN}
# A block may start with a cold release build (on a fresh two-core machine
# `cargo run --release` and the wire bench's binaries each took over 15
# minutes); the limits catch hangs, not slow builds.
BLOCK_TIMEOUT = 2400
READY_TIMEOUT = 2400
# With everything built up front, a block has minutes, not a cold build.
PREBUILT = os.environ.get("PARLEY_PREBUILT", "")
if PREBUILT:
    BLOCK_TIMEOUT = READY_TIMEOUT = 600
COMPILING = re.compile(r"^\s*Compiling \S+ v\d", re.M)


def prebuilt_benches() -> dict[str, str]:
    """Benchmark name -> executable, as the up-front build listed them."""
    listing = Path(PREBUILT) / "benches.tsv"
    if not PREBUILT or not listing.exists():
        return {}
    return dict(line.split("\t", 1) for line in listing.read_text().splitlines() if "\t" in line)


def use_prebuilt(text: str) -> str:
    """The block's cargo commands as the prebuilt executables (see above)."""
    if not PREBUILT:
        return text
    benches = prebuilt_benches()

    def bench(m: re.Match) -> str:
        exe = benches.get(m.group(1))
        return shlex.quote(exe) if exe else m.group(0)

    text = re.sub(r"cargo run --release -p \S+ --bin (\S+) --", r"\1", text)
    text = re.sub(r"cargo run --release --", "parley", text)
    text = re.sub(r"cargo bench -p \S+ --bench (\S+) --", bench, text)
    text = re.sub(r"^(\s*)cargo build\b.*$", r"\1: # built up front", text, flags=re.M)
    return text.replace('"$CARGO_TARGET_DIR"/release/', shlex.quote(PREBUILT.rstrip("/")) + "/")


def compiled(log: Path) -> bool:
    """Under CI=true: whether a block's output shows cargo compiling."""
    return os.environ.get("CI") == "true" and log.exists() and bool(COMPILING.search(log.read_text(errors="replace")))


@dataclass
class Block:
    file: Path
    line: int
    tag: str
    text: str

    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    out, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, info, start, body = m.group(2), m.group(3).strip(), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        lang, _, tag = info.partition(" ")
        if lang in SHELL_LANGS:
            out.append(Block(path, start, tag.strip() if lang == "sh" else f"lang={lang}", "\n".join(body) + "\n"))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Env:
    """What every runnable block sees; one per file."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.port2 = free_port()
        self.data = tmp / "parley-data"
        self.database = None
        self.database_name = None

    def drop_database(self) -> None:
        """Drops the database this file's blocks used (its servers are stopped)."""
        if self.database_name:
            admin = os.environ["PARLEY_TEST_POSTGRES_URL"]
            subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {self.database_name} WITH (FORCE)"],
                           capture_output=True)
            self.database_name = self.database = None

    def fresh_database(self) -> str:
        admin = os.environ["PARLEY_TEST_POSTGRES_URL"]
        name = "parley_docs_" + uuid.uuid4().hex[:12]
        subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        self.database_name = name
        base, _, query = admin.partition("?")
        return base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")

    def rewrite(self, text: str) -> str:
        text = use_prebuilt(text)
        for host in ("localhost:8080", "127.0.0.1:8080", "0.0.0.0:8080"):
            text = text.replace(host, f"127.0.0.1:{self.port}")
        text = text.replace(":9090", f":{self.port2}")
        text = text.replace("parley-data/", f"{self.data}/")
        if "postgres://postgres@127.0.0.1:5432/parley" in text:
            self.database = self.database or self.fresh_database()
            text = text.replace("postgres://postgres@127.0.0.1:5432/parley", self.database)
        for doc_url, var in (
            ("nats://127.0.0.1:4222", "PARLEY_TEST_NATS_URL"),
            ("redis://127.0.0.1:6379", "PARLEY_TEST_REDIS_URL"),
            ("http://127.0.0.1:9000", "PARLEY_TEST_S3_ENDPOINT"),
        ):
            text = text.replace(doc_url, os.environ[var])
        return text

    def vars(self) -> dict[str, str]:
        env = dict(os.environ)
        target = Path(env.get("CARGO_TARGET_DIR", ROOT / "target"))
        env["PATH"] = f"{PREBUILT or target / 'release'}:{env['PATH']}"
        env["PARLEY_BIND"] = f"127.0.0.1:{self.port}"
        env["PARLEY_OPS_BIND"] = f"127.0.0.1:{free_port()}"
        env["PARLEY_DATA_DIR"] = str(self.data)
        env["PARLEY_CLUSTER_NAME"] = "docs" + uuid.uuid4().hex[:10]
        # JetStream reserves a stream's limit on the shared server: a small
        # one for the cluster a block starts (the tests sweep it later).
        env["PARLEY_EVENT_STREAM_MAX_BYTES"] = str(64 << 20)
        env.pop("PARLEY_NETWORK", None)
        return env


def run_script(script: str, env: dict[str, str], log: Path, timeout: int = BLOCK_TIMEOUT) -> tuple[bool, str]:
    """Runs bash in its own process group; stops what it left behind."""
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=timeout)
            why = f"exit {rc}"
        except subprocess.TimeoutExpired:
            rc, why = -1, f"timed out after {timeout}s"
        finally:
            stop_group(proc)
    if rc == 0 and compiled(log):
        return False, "cargo compiled after the build step (a new feature set or profile?)"
    return rc == 0, why


def stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Server:
    def __init__(self, block: Block, env: Env, log: Path):
        self.block = block
        self.out = open(log, "w")
        self.proc = subprocess.Popen(
            ["bash", "-c", env.rewrite(block.text).strip()],
            cwd=ROOT, env=env.vars(), stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{env.port}/health/ready"

    def ready(self) -> tuple[bool, str]:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False, f"exited with {self.proc.returncode} before it was ready"
            try:
                with urllib.request.urlopen(self.url, timeout=2) as r:
                    if r.status == 200:
                        return True, "ready"
            except OSError:
                pass
            time.sleep(0.2)
        return False, f"not ready within {READY_TIMEOUT}s"

    def stop(self) -> tuple[bool, str]:
        """SIGTERM to the command's process group (cargo and parley alike);
        everything in it must be gone within 30 s."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                break
            self.proc.poll()
            time.sleep(0.1)
        else:
            stop_group(self.proc)
            return False, "did not stop within 30s of SIGTERM"
        self.proc.wait()
        self.out.close()
        if compiled(Path(self.out.name)):
            return False, "cargo compiled after the build step (a new feature set or profile?)"
        return True, "stopped"


def paths_named(text: str) -> list[str]:
    """Repository paths a command names (arguments containing a '/' that exist
    in the repository's top-level folders)."""
    tops = {p.name for p in ROOT.iterdir()}
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        for w in words:
            if "/" in w and w.split("/", 1)[0] in tops and not w.startswith(("http", "//")):
                found.append(w)
    return found


class Checker:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.passed = 0
        self.failed = 0

    def result(self, block: Block, ok: bool, what: str, log: Path | None = None) -> None:
        if ok:
            self.passed += 1
            print(f"docs: {block.where()} [sh {block.tag}] ok ({what})", flush=True)
            return
        self.failed += 1
        print(f"docs: {block.where()} [sh {block.tag}] FAILED ({what})", flush=True)
        if log and log.exists():
            lines = log.read_text(errors="replace").splitlines()
            # A panic's message comes before its backtrace, which the tail
            # would show alone.
            for i, line in enumerate(lines[:-40]):
                if "panicked at" in line:
                    print("\n".join("    | " + t for t in lines[i : i + 3]), flush=True)
                    print("    | ...", flush=True)
            print("\n".join("    | " + t for t in lines[-40:]), flush=True)

    def file(self, path: Path) -> None:
        env = Env(Path(tempfile.mkdtemp(dir=self.tmp)))
        server: Server | None = None
        pending: list[Block] = []

        def flush() -> None:
            if not pending:
                return
            log = env.tmp / f"run-{pending[0].line}.log"
            script = "\n".join(env.rewrite(b.text) for b in pending)
            ok, why = run_script(script, env.vars(), log)
            for b in pending:
                self.result(b, ok, why, log if b is pending[-1] else None)
            pending.clear()

        def stop_server() -> None:
            nonlocal server
            if server:
                ok, why = server.stop()
                if not ok:
                    self.result(server.block, False, why)
                server = None

        for b in blocks(path):
            if b.tag not in TAGS:
                self.result(b, False, f"unknown tag; use one of: {', '.join('sh ' + t for t in sorted(TAGS))}")
            elif b.tag == "":
                pending.append(b)
            elif b.tag == "serve":
                flush()
                stop_server()
                log = env.tmp / f"serve-{b.line}.log"
                server = Server(b, env, log)
                ok, why = server.ready()
                self.result(b, ok, why, log)
            elif b.tag in ("cluster", "bench") and PREBUILT and "cargo nextest run" in b.text:
                self.result(b, True, "its tests run in the suite's nextest step")
            elif b.tag in ("cluster", "bench"):
                flush()
                log = env.tmp / f"{b.tag}-{b.line}.log"
                self.result(b, *run_script(env.rewrite(b.text), env.vars(), log), log)
            elif b.tag == "self":
                ci = (ROOT / ".ci" / "run").read_text()
                ok = b.text.strip() == "scripts/test.sh" and "exec scripts/test.sh" in ci
                self.result(b, ok, "the test command, which .ci/run runs" if ok else "not exactly what .ci/run runs")
            else:
                missing = [p for p in paths_named(b.text) if not (ROOT / p.rstrip("/")).exists()]
                self.result(b, not missing, "names missing paths: " + ", ".join(missing) if missing else "not run here")
        flush()
        stop_server()
        env.drop_database()


def main() -> int:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="parley-docs-") as tmp:
        checker = Checker(Path(tmp))
        for f in files:
            if only and f.name not in only and str(f.relative_to(ROOT)) not in only:
                continue
            checker.file(f)
    print(f"docs: {checker.passed} passed, {checker.failed} failed", flush=True)
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
