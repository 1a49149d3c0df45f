#!/usr/bin/env python3
"""Builds the translation corpus: writes each case (in.bu, args, files/) and records what
the reference butane prints for it (expected.status, expected.stdout, expected.stderr).

    translate-corpus/make.py [--butane PATH] [--only SUBSTRING]

The case definitions live in cases_*.py beside this script; the reference defaults to
../shared/oracles/butane of the worktree. Existing case folders are rewritten.
"""
import argparse
import importlib.util
import os
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_cases():
    cases = []
    for name in sorted(os.listdir(HERE)):
        if name.startswith("cases_") and name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(HERE, name))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            cases.extend(mod.CASES)
    return cases


def write_case(c):
    d = os.path.join(HERE, c["group"], c["name"])
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, "in.bu"), "wb") as f:
        data = c["bu"]
        f.write(data if isinstance(data, bytes) else data.encode())
    with open(os.path.join(d, "args"), "w") as f:
        f.write(c.get("args", "") + "\n")
    files = c.get("files")
    if files is not None:
        base = os.path.join(d, "files")
        os.makedirs(base)
        for rel, content in sorted(files.items()):
            p = os.path.join(base, rel)
            if content is None:  # a directory
                os.makedirs(p, exist_ok=True)
                # git keeps no empty directory: the test makes those listed here.
                with open(os.path.join(d, "empty-dirs"), "a") as f:
                    f.write(os.path.join("files", rel) + "\n")
                continue
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if isinstance(content, tuple) and content[0] == "link":
                os.symlink(content[1], p)
                continue
            mode = None
            if isinstance(content, tuple) and content[0] == "exec":
                content, mode = content[1], 0o755
            with open(p, "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())
            if mode:
                os.chmod(p, mode)
    return d


def record(d, butane):
    args = open(os.path.join(d, "args")).read().split()
    p = subprocess.run([butane] + args + ["in.bu"], cwd=d, capture_output=True, timeout=60)
    with open(os.path.join(d, "expected.status"), "w") as f:
        f.write(f"{p.returncode}\n")
    with open(os.path.join(d, "expected.stdout"), "wb") as f:
        f.write(p.stdout)
    with open(os.path.join(d, "expected.stderr"), "wb") as f:
        f.write(p.stderr)
    return p.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--butane", default=os.path.join(HERE, "../../../shared/oracles/butane"))
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    butane = os.path.abspath(a.butane)
    if not os.access(butane, os.X_OK):
        sys.exit(f"reference butane not found at {butane}")
    seen = set()
    n = 0
    for c in load_cases():
        key = (c["group"], c["name"])
        if key in seen:
            sys.exit(f"duplicate case {key}")
        seen.add(key)
        if a.only not in c["group"] + "/" + c["name"]:
            continue
        d = write_case(c)
        rc = record(d, butane)
        n += 1
        print(f"{c['group']}/{c['name']}: exit {rc}")
    print(f"{n} cases recorded")


main()
