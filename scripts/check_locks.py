#!/usr/bin/env python3
"""Checks that tests/wire-network/Cargo.lock (a workspace of its own) uses the
same version of every package it shares with the root's Cargo.lock, so both
workspaces build one copy of each crate in the shared target directory.
Prints what differs and exits 1; run after changing either lock file."""

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def packages(path: Path) -> dict[str, set[str]]:
    lock = tomllib.loads(path.read_text())
    found: dict[str, set[str]] = {}
    for p in lock.get("package", []):
        found.setdefault(p["name"], set()).add(f'{p["version"]} {p.get("source", "path")}')
    return found


def main() -> int:
    root = packages(ROOT / "Cargo.lock")
    wire = packages(ROOT / "tests/wire-network/Cargo.lock")
    # The wire workspace may use fewer versions of a crate, never another one.
    differ = {n: (root[n], wire[n]) for n in root.keys() & wire.keys() if not wire[n] <= root[n]}
    for name, (r, w) in sorted(differ.items()):
        print(f"lock files differ on {name}: root {sorted(r)}, tests/wire-network {sorted(w)}")
    if differ:
        print("copy the root's Cargo.lock over tests/wire-network/Cargo.lock and run "
              "`cargo metadata --manifest-path tests/wire-network/Cargo.toml >/dev/null`")
        return 1
    print(f"lock files agree on the {len(root.keys() & wire.keys())} packages they share")
    return 0


if __name__ == "__main__":
    sys.exit(main())
