#!/usr/bin/env python3
"""Differential check of `flint validate` against a reference ignition-validate.

Generates random Ignition configs for every spec version flint reads (3.0.0 through
3.7.0-experimental) from pools of valid, invalid and hostile values, runs both validators on
each, and reports the inputs whose exit code or report lines (severity, path, line/col,
message; compared as multisets, since the reference orders some reports randomly) differ.

    scripts/validate-diff.py --count 2000 --seed 1 --out /tmp/diffs \
        --ref ../shared/oracles/ignition-validate --flint "target/debug/flint validate --rules upstream"

Diverging inputs are written to OUT/NNNN.ign with OUT/NNNN.diff. Not run by the tests (it
needs the reference binary); what it finds is turned into corpus cases and fixtures.
"""

import argparse
import json
import os
import random
import shlex
import subprocess
import sys

VERSIONS = ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0-experimental"]

PATHS = ["/etc/a", "/etc/b", "/", "a/b", "/etc/../x", "/etc//x", "/etc/x/", "", "/etc/a/b",
         "/etc/systemd/system/a.service", "/etc/systemd/system/a.service.d/b.conf", "/var/l",
         "/var/l/x", "/etc/./y", "/ü", "/etc/a b", "//etc"]
SCHEMES = ["http://h/x", "https://h/x", "HTTPS://h/x", "Http://h/y", "tftp://h/x", "s3://b/k",
           "S3://b/k?versionId=", "s3://b/k?versionId=1", "gs://b/o", "GS://b/o", "data:,x",
           "DATA:,x", "data:text/plain;base64,aGk=", "data:;base64,!!", "data:x", "data:,%zz",
           "oem:///x", "OEM:///x", "ftp://h/x", "file:///x", "arn:aws:s3:::b/k",
           "arn:aws:s3:us-east-1:1:accesspoint/ap/object/k", "arn:aws:s3:us-east-1:1:accesspoint/ap",
           "ARN:aws:s3:::b/k", "arn:aws:ec2:::b/k", "", "http://[::1]:80/x", "http://h:port/x",
           "http://h/%zz", "://x", ":x", "h/x", "/x", "http://h x/", "data:text/plain,a b",
           "https://u:p@h/x#f", "http://h/x?a=b", "\u0001http://h"]
HASHES = ["sha512-" + "0" * 128, "sha256-" + "0" * 64, "sha512-00", "md5-00", "sha512", "",
          "SHA512-" + "0" * 128, "sha256-" + "a" * 63, "sha512-" + "g" * 128]
MODES = [420, 493, 0, 511, 2541, 1023, 1512, 4095, 4096, -1, 3072, 73, None]
NAMES = ["a.service", "b.socket", "c.timer", "x", "a@.service", "a@b.service", "d.mount",
         "e.conf", "bad name.service", "", "a.service.d", "a.target", "../x.service",
         "f.path", "g.slice", "h.scope", "i.swap", "j.device", "k.automount", "l.link"]
UNITS = ["[Unit]\nDescription=x\n", "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
         "garbage", "[Unit]\nDescription", "[Install]\n", "", "[Unit]\n\\\n", "[Unit\n",
         "[Service]\nExecStart=/bin/echo \\\n  continued\n", "#comment\n;c\n[Unit]\n",
         "[Unit]\nA=" + "x" * 70000 + "\n", "\ufeff[Unit]\n", "[Unit]\r\nA=b\r\n",
         "key=value\n", "[Unit]\n[Unit]\n", "[ Unit ]\n", "[Unit]\n  A = b  \n", "[Unit]\nA=\"\n"]
DEVICES = ["/dev/sda", "/dev/sdb", "/dev/sda1", "sda", "/dev/../sda", "", "/dev/disk/by-label/x",
           "/dev/md/a", "/dev/mapper/x"]
FORMATS = ["ext4", "xfs", "btrfs", "vfat", "swap", "none", "zfs", "", None, "EXT4"]
LABELS = ["root", "x" * 11, "x" * 12, "x" * 13, "x" * 16, "x" * 17, "a:b", "", "x" * 36,
          "x" * 37, "x" * 47, "x" * 48, "ÿ" * 9]
GUIDS = ["0FC63DAF-8483-4772-8E79-3D69D8477DE4", "0fc63daf-8483-4772-8e79-3d69d8477de4",
         "not-a-guid", "", "0FC63DAF84834772-8E79-3D69D8477DE4", "0FC63DAF-8483-4772-8E79-3D69D8477DEX"]
LEVELS = ["raid0", "raid1", "raid5", "raid6", "raid10", "linear", "stripe", "mirror", "0", "1",
          "4", "10", "raid7", "", None, "RAID1"]
PINS = ["tpm2", "tang", "sss", "foo", "", None]
USERS = ["core", "root", "", "x" * 40, "a:b", "user name", "UPPER"]


def maybe(p=0.5):
    return random.random() < p


def pick(pool):
    return random.choice(pool)


def opt(d, key, value, p=0.5):
    if maybe(p):
        d[key] = value


def resource(version, required=False):
    r = {}
    if required or maybe(0.8):
        r["source"] = pick(SCHEMES)
    opt(r, "compression", pick(["gzip", "", "bzip2", "GZIP"]), 0.2)
    opt(r, "verification", {"hash": pick(HASHES)}, 0.2)
    if maybe(0.2):
        r["httpHeaders"] = [{"name": pick(["A", "a", "", "B"]), "value": pick(["v", "", None])}
                            for _ in range(random.randint(0, 3))]
    return r


def node(kind):
    n = {"path": pick(PATHS)}
    opt(n, "overwrite", pick([True, False, None]), 0.3)
    if maybe(0.2):
        n["user"] = {}
        opt(n["user"], "id", pick([0, 1000, -1, 4294967296]), 0.6)
        opt(n["user"], "name", pick(USERS), 0.5)
    if maybe(0.2):
        n["group"] = {}
        opt(n["group"], "id", pick([0, 1000]), 0.6)
        opt(n["group"], "name", pick(USERS), 0.5)
    return n


def storage(version):
    s = {}
    if maybe(0.6):
        files = []
        for _ in range(random.randint(1, 3)):
            f = node("file")
            opt(f, "mode", pick(MODES), 0.5)
            opt(f, "contents", resource(version), 0.7)
            if maybe(0.2):
                f["append"] = [resource(version) for _ in range(random.randint(1, 2))]
            files.append(f)
        s["files"] = files
    if maybe(0.4):
        s["directories"] = []
        for _ in range(random.randint(1, 2)):
            d = node("dir")
            opt(d, "mode", pick(MODES), 0.5)
            s["directories"].append(d)
    if maybe(0.4):
        s["links"] = []
        for _ in range(random.randint(1, 2)):
            l = node("link")
            opt(l, "target", pick(PATHS + ["rel/x", "../y"]), 0.8)
            opt(l, "hard", pick([True, False, None]), 0.4)
            s["links"].append(l)
    if maybe(0.3):
        disks = []
        for _ in range(random.randint(1, 2)):
            d = {"device": pick(DEVICES)}
            opt(d, "wipeTable", pick([True, False]), 0.3)
            parts = []
            for _ in range(random.randint(0, 3)):
                p = {}
                opt(p, "number", pick([0, 1, 2, 1, -1]), 0.7)
                opt(p, "label", pick(LABELS), 0.5)
                opt(p, "sizeMiB", pick([0, 100, 1, None, -5]), 0.4)
                opt(p, "startMiB", pick([0, 1, 50, 100, None]), 0.4)
                opt(p, "typeGuid", pick(GUIDS), 0.2)
                opt(p, "guid", pick(GUIDS), 0.2)
                opt(p, "shouldExist", pick([True, False]), 0.2)
                opt(p, "wipePartitionEntry", pick([True, False]), 0.1)
                opt(p, "resize", pick([True, False]), 0.1)
                parts.append(p)
            if parts:
                d["partitions"] = parts
            disks.append(d)
        s["disks"] = disks
    if maybe(0.3):
        fss = []
        for _ in range(random.randint(1, 2)):
            f = {"device": pick(DEVICES)}
            v = pick(FORMATS)
            if v is not None:
                f["format"] = v
            opt(f, "path", pick(PATHS), 0.4)
            opt(f, "label", pick(LABELS), 0.3)
            opt(f, "uuid", pick(["", "x", "8d7d1d6e-4b2a-4a4e-9a7b-0f8b2f1c3d4e"]), 0.2)
            opt(f, "wipeFilesystem", pick([True, False]), 0.3)
            opt(f, "options", pick([["-a"], ["-a", "-a"], []]), 0.2)
            opt(f, "mountOptions", pick([["ro"], ["ro", "ro"], []]), 0.2)
            fss.append(f)
        s["filesystems"] = fss
    if maybe(0.25):
        raids = []
        for _ in range(random.randint(1, 2)):
            r = {"name": pick(["md0", "md1", "", "a/b"])}
            v = pick(LEVELS)
            if v is not None:
                r["level"] = v
            opt(r, "devices", [pick(DEVICES) for _ in range(random.randint(0, 3))], 0.8)
            opt(r, "spares", pick([0, 1, -1]), 0.3)
            opt(r, "options", pick([["--x"], ["--x", "--x"]]), 0.2)
            raids.append(r)
        s["raid"] = raids
    if maybe(0.3):
        luks = []
        for _ in range(random.randint(1, 2)):
            l = {"name": pick(["data", "data", "a/b", "", "x"])}
            opt(l, "device", pick(DEVICES), 0.8)
            opt(l, "label", pick(LABELS), 0.3)
            opt(l, "keyFile", resource(version), 0.3)
            opt(l, "wipeVolume", pick([True, False]), 0.2)
            opt(l, "discard", pick([True, False]), 0.2)
            opt(l, "openOptions", pick([["--a"], ["--a", "--a"]]), 0.2)
            opt(l, "options", pick([["--a"], ["--a", "--a"]]), 0.2)
            opt(l, "cex", {"enabled": pick([True, False, None])}, 0.3)
            if maybe(0.4):
                c = {}
                opt(c, "tpm2", pick([True, False]), 0.4)
                opt(c, "threshold", pick([0, 1, 2, -1]), 0.3)
                if maybe(0.4):
                    c["tang"] = []
                    for _ in range(random.randint(1, 2)):
                        t = {"url": pick(["http://t", "https://t", "ftp://t", "", "HTTP://t", "t:x"])}
                        opt(t, "thumbprint", pick(["tp", "", None]), 0.7)
                        opt(t, "advertisement", pick(['{"a":1}', "{", "", "null"]), 0.3)
                        c["tang"].append(t)
                if maybe(0.3):
                    cu = {}
                    opt(cu, "pin", pick(PINS), 0.7)
                    opt(cu, "config", pick(["{}", "", None]), 0.6)
                    opt(cu, "needsNetwork", pick([True, False]), 0.3)
                    c["custom"] = cu
                l["clevis"] = c
            luks.append(l)
        s["luks"] = luks
    return s


def systemd():
    units = []
    for _ in range(random.randint(1, 3)):
        u = {"name": pick(NAMES)}
        opt(u, "contents", pick(UNITS), 0.5)
        opt(u, "enabled", pick([True, False, None]), 0.3)
        opt(u, "mask", pick([True, False]), 0.2)
        if maybe(0.3):
            u["dropins"] = [{"name": pick(["a.conf", "b.conf", "x", "", "a.conf"]),
                             **({"contents": pick(UNITS)} if maybe(0.6) else {})}
                            for _ in range(random.randint(1, 2))]
        units.append(u)
    return {"units": units}


def passwd():
    p = {}
    if maybe(0.7):
        users = []
        for _ in range(random.randint(1, 2)):
            u = {"name": pick(USERS)}
            opt(u, "uid", pick([0, 1000, -1]), 0.3)
            opt(u, "sshAuthorizedKeys", pick([["ssh-ed25519 AAAA"], ["a", "a"], [""]]), 0.4)
            opt(u, "passwordHash", pick(["$6$x", ""]), 0.2)
            opt(u, "groups", pick([["wheel"], ["a", "a"], [""]]), 0.3)
            opt(u, "shouldExist", pick([True, False]), 0.2)
            opt(u, "homeDir", pick(PATHS), 0.2)
            opt(u, "shell", pick(["/bin/bash", "bash", ""]), 0.2)
            opt(u, "primaryGroup", pick(["wheel", ""]), 0.1)
            opt(u, "noCreateHome", pick([True, False]), 0.1)
            users.append(u)
        p["users"] = users
    if maybe(0.4):
        p["groups"] = [{"name": pick(USERS), **({"gid": pick([0, 100])} if maybe() else {}),
                        **({"shouldExist": False} if maybe(0.2) else {})}
                       for _ in range(random.randint(1, 2))]
    return p


def ignition_section(version):
    ig = {"version": version}
    if maybe(0.3):
        c = {}
        if maybe(0.6):
            c["merge"] = [resource(version, required=maybe(0.8)) for _ in range(random.randint(1, 2))]
        if maybe(0.4):
            c["replace"] = resource(version)
        ig["config"] = c
    if maybe(0.2):
        ig["security"] = {"tls": {"certificateAuthorities": [resource(version, required=maybe(0.8))
                                                             for _ in range(random.randint(1, 2))]}}
    if maybe(0.15):
        pr = {}
        opt(pr, "httpProxy", pick(SCHEMES), 0.6)
        opt(pr, "httpsProxy", pick(SCHEMES), 0.6)
        opt(pr, "noProxy", pick([["a"], ["a", "a"], [""]]), 0.4)
        ig["proxy"] = pr
    if maybe(0.1):
        ig["timeouts"] = {"httpTotal": pick([1, 0, -1]), "httpResponseHeaders": pick([1, 0, -1])}
    return ig


def config():
    version = pick(VERSIONS)
    c = {"ignition": ignition_section(version)}
    if maybe(0.6):
        c["storage"] = storage(version)
    if maybe(0.3):
        c["systemd"] = systemd()
    if maybe(0.25):
        c["passwd"] = passwd()
    if maybe(0.15):
        c["kernelArguments"] = {"shouldExist": pick([["a"], ["a", "a"], ["a b"]]),
                                "shouldNotExist": pick([["a"], ["b"], []])}
    return c


def mutate_json(c):
    """Structural hostility on the decoded value: nulls, wrong types, unknown keys."""
    def walk(v, depth=0):
        if isinstance(v, dict):
            for k in list(v):
                r = random.random()
                if r < 0.02:
                    v[k] = None
                elif r < 0.03:
                    v[k] = pick([1, "s", [], {}, True, 1.5])
                else:
                    walk(v[k], depth + 1)
            if maybe(0.02):
                v[pick(["bogus", "Path", "cex", "mountOptions", "luks"])] = pick([1, "x", None])
        elif isinstance(v, list):
            for i in range(len(v)):
                if maybe(0.02):
                    v[i] = None
                else:
                    walk(v[i], depth + 1)
    if maybe(0.5):
        walk(c)
    return c


def render(c):
    text = json.dumps(c, indent=pick([None, None, 2, 4]), ensure_ascii=maybe(0.5))
    r = random.random()
    if r < 0.03:
        text = "\ufeff" + text
    elif r < 0.05:
        text = text + "\n" + pick(["", "{}", "x", " "])
    elif r < 0.06:
        text = text.replace("{", "{\"a\":1,\"a\":2,", 1)
    elif r < 0.07:
        text = text[: random.randint(0, len(text))]
    elif r < 0.08:
        text = pick(["null", "[]", "{}", '{"ignition":null}', '{"ignition":{"version":null}}',
                     '{"ignition":{"version":"3.5.0"},"storage":null}', "\ufeff{}", ""])
    return text.encode()


def run(cmd, path):
    p = subprocess.run(cmd + [path], capture_output=True, timeout=30)
    lines = (p.stdout + p.stderr).decode(errors="replace").splitlines()
    return p.returncode, sorted(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/validate-diff")
    ap.add_argument("--ref", default="../shared/oracles/ignition-validate")
    ap.add_argument("--flint", default="target/debug/flint validate --rules upstream")
    args = ap.parse_args()
    random.seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    ref = shlex.split(args.ref)
    fl = shlex.split(args.flint)
    tmp = os.path.join(args.out, "in.ign")
    bad = 0
    for i in range(args.count):
        data = render(mutate_json(config()))
        with open(tmp, "wb") as f:
            f.write(data)
        a = run(ref, tmp)
        b = run(fl, tmp)
        if a != b:
            bad += 1
            base = os.path.join(args.out, "%04d" % i)
            with open(base + ".ign", "wb") as f:
                f.write(data)
            with open(base + ".diff", "w") as f:
                f.write("ref rc=%d\n" % a[0])
                f.writelines("  " + l + "\n" for l in a[1] if l not in b[1])
                f.write("flint rc=%d\n" % b[0])
                f.writelines("  " + l + "\n" for l in b[1] if l not in a[1])
    print("%d compared, %d differ" % (args.count, bad))


if __name__ == "__main__":
    sys.exit(main())
