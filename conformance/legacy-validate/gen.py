#!/usr/bin/env python3
"""Regenerates this corpus: every config of ../legacy-translate, pretty-printed (so that
positions fall on distinct lines), plus the extra cases below, is written to NNN-name/in.ign;
`expected` is Flatcar's ignition-validate run on it (exit code on line 1, then its output);
`expected.flint` is flint's own report (`flint validate in.ign`, exit code on line 1), kept
so that changes to flint's 2.x messages, paths and positions show in review.
Usage: gen.py FLINT_BINARY"""
import json, os, subprocess, sys, glob

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.environ.get("IGNITION_VALIDATE", "/work/shared/oracles/flatcar/ignition-validate")

EXTRA = [
    ("syntax-error", '{"ignition": {"version": "2.3.0"},\n "storage": {"files": [}\n}\n'),
    ("v23-many-errors", json.dumps({"ignition": {"version": "2.3.0"}, "storage": {
        "files": [{"filesystem": "root", "path": "rel", "mode": 99999, "user": {"id": 1, "name": "x"},
                   "contents": {"source": "ftp://x", "compression": "xz", "verification": {"hash": "md5-00"}}}],
        "filesystems": [{"name": "a", "mount": {"device": "dev", "format": "ntfs", "label": "x"}}],
        "disks": [{"device": "", "partitions": [{"number": 1, "sizeMiB": 1, "typeGuid": "nope", "label": "a:b"},
                                                 {"number": 1, "startMiB": 2}]}],
        "raid": [{"name": "md", "level": "raid0", "spares": 1, "devices": ["sdb"]}]},
        "systemd": {"units": [{"name": "x.service", "enable": True, "contents": "[Unit]\n",
                               "dropins": [{"name": "x.txt", "contents": "[Unit"}]}]}}, indent=2)),
    ("v24-header-errors", json.dumps({"ignition": {"version": "2.4.0", "config": {"append": [
        {"source": "https://example.com/c.ign", "httpHeaders": [{"name": "", "value": "a"}, {"name": "X", "value": "1"}, {"name": "X", "value": "2"}]}]}}}, indent=2)),
    ("v1-bad-unit", json.dumps({"ignitionVersion": 1, "systemd": {"units": [{"name": "a.txt"}]},
        "storage": {"filesystems": [{"device": "/dev/sdb", "format": "ext4", "files": [{"path": "rel", "mode": 70000}]}]}}, indent=2)),
    ("v21-filesystem-shadows-root", json.dumps({"ignition": {"version": "2.1.0"}, "storage": {"filesystems": [
        {"name": "root", "mount": {"device": "/dev/sda9", "format": "ext4"}}]}}, indent=2)),
    ("v23-unit-no-install-warning", json.dumps({"ignition": {"version": "2.3.0"}, "systemd": {"units": [
        {"name": "a.service", "enabled": True, "contents": "[Service]\nExecStart=/bin/true\n"}]}}, indent=2)),
]

def run(cmd, cwd):
    r = subprocess.run(cmd + ["in.ign"], cwd=cwd, capture_output=True, text=True)
    return f"{r.returncode}\n{r.stdout}{r.stderr}"

def main():
    flint = os.path.abspath(sys.argv[1])
    cases = []
    for c in sorted(glob.glob(os.path.join(HERE, "..", "legacy-translate", "[0-9]*", "config.ign"))):
        name = os.path.basename(os.path.dirname(c))[4:]
        cases.append((name, json.dumps(json.load(open(c)), indent=2) + "\n"))
    cases += EXTRA
    for n, (name, text) in enumerate(cases, 1):
        d = os.path.join(HERE, f"{n:03d}-{name}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "in.ign"), "w").write(text)
        open(os.path.join(d, "expected"), "w").write(run([REF], d))
        open(os.path.join(d, "expected.flint"), "w").write(run([flint, "validate"], d))
    print(len(cases), "cases")

if __name__ == "__main__":
    main()
