#!/usr/bin/env python3
"""Copies a checkout into the build tree, a fixed directory the test suite
builds in, so that a fresh clone builds incrementally.

Cargo decides what to rebuild by modification times: in a fresh clone every
file is new, so every crate of the workspace is compiled again although the
target directory holds them already. Here a file is written only when its
content (or its mode) differs from the copy already there, and then gets a new
time; an unchanged file keeps the time it had, so cargo rebuilds exactly the
crates whose sources changed.

    build_tree.py SOURCE TREE

The files copied are git's: tracked ones and untracked ones not ignored (so a
working copy's edits count). Files the previous copy put there and SOURCE no
longer has are removed; anything else in TREE (node_modules, service data) is
left alone. Prints how many files were written and removed.
"""
import os
import subprocess
import sys

MANIFEST = ".build-tree-files"


def listed(source):
    out = subprocess.run(
        ["git", "-C", source, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout
    return sorted({p.decode() for p in out.split(b"\0") if p})


def same_file(src, dst):
    try:
        if os.path.islink(dst) or not os.path.isfile(dst):
            return False
        a, b = os.stat(src), os.stat(dst)
        if a.st_size != b.st_size or (a.st_mode & 0o777) != (b.st_mode & 0o777):
            return False
        with open(src, "rb") as f, open(dst, "rb") as g:
            return f.read() == g.read()
    except OSError:
        return False


def clear(path):
    """Removes whatever is at path (a file, a link or a directory)."""
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        for root, dirs, files in os.walk(path, topdown=False):
            for name in files:
                os.unlink(os.path.join(root, name))
            for name in dirs:
                d = os.path.join(root, name)
                os.unlink(d) if os.path.islink(d) else os.rmdir(d)
        os.rmdir(path)


def copy(rel, source, tree):
    src, dst = os.path.join(source, rel), os.path.join(tree, rel)
    if os.path.islink(src):
        target = os.readlink(src)
        if os.path.islink(dst) and os.readlink(dst) == target:
            return False
        if os.path.lexists(dst):
            clear(dst)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(target, dst)
        return True
    if same_file(src, dst):
        return False
    if os.path.lexists(dst):
        clear(dst)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(src, "rb") as f:
        data = f.read()
    tmp = dst + ".build-tree-tmp"
    with open(tmp, "wb") as g:
        g.write(data)
    os.chmod(tmp, os.stat(src).st_mode & 0o777)
    os.replace(tmp, dst)
    return True


def main():
    source, tree = (os.path.abspath(p) for p in sys.argv[1:3])
    os.makedirs(tree, exist_ok=True)
    files = [
        rel
        for rel in listed(source)
        if os.path.lexists(os.path.join(source, rel))
        and not os.path.isdir(os.path.join(source, rel))
    ]
    manifest = os.path.join(tree, MANIFEST)
    before = set()
    if os.path.exists(manifest):
        with open(manifest) as f:
            before = {line.rstrip("\n") for line in f if line.strip()}
    written = sum(copy(rel, source, tree) for rel in files)
    gone = sorted(before - set(files))
    for rel in gone:
        path = os.path.join(tree, rel)
        if os.path.lexists(path):
            clear(path)
        parent = os.path.dirname(path)
        while parent != tree and os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)
            parent = os.path.dirname(parent)
    with open(manifest + ".tmp", "w") as f:
        f.writelines(rel + "\n" for rel in files)
    os.replace(manifest + ".tmp", manifest)
    print(f"build tree {tree}: {written} of {len(files)} files written, {len(gone)} removed")


if __name__ == "__main__":
    main()
