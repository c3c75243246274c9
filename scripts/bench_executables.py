#!/usr/bin/env python3
"""Reads cargo's JSON messages (`cargo build --message-format=json...`) on
standard input and prints `name<TAB>executable` for each benchmark built, so
that scripts/check_docs.py runs a `cargo bench` block with the executable
built up front instead of building it again."""

import json
import sys

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    target = msg.get("target") or {}
    if msg.get("reason") == "compiler-artifact" and "bench" in target.get("kind", []) and msg.get("executable"):
        print(f'{target["name"]}\t{msg["executable"]}')
