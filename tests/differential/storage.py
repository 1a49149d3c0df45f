"""Storage scenarios for difftest.py: the disks stage of flint and of the reference on loop
devices, compared by the layout they leave.

Each scenario: a disk size, a setup (sgdisk/mkfs commands run on the fresh device, `$D`
is the device, `$P1`... its partitions), and the `storage` section of a config (`$D` and
`$Pn` substituted). The reference runs through run-reference.sh (fake systemd, no udev),
flint through `flint apply --stage disks`. Compared: exit status (0 or not), and the layout:
the GPT partitions (number, start, size, type GUID, name, and the partition GUID where the
config or the setup fixes it), each partition's filesystem (blkid TYPE, LABEL, and UUID
where fixed). Shapes follow upstream's blackbox tests (tests/positive|negative/partitions,
filesystems) and the areas of the fidelity issue; --generated N adds N random partition
configs over random existing tables and N random filesystems over random existing ones.
"""
import json
import os
import random
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LINUX = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
SWAP = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"
G1 = "8A7A6E26-5E8F-4CCA-A654-46215D4696AC"
G2 = "2B7A6E26-5E8F-4CCA-A654-46215D4696AC"


def table(*parts):
    """sgdisk commands for partitions (num, start_mib, size_mib, name)."""
    cmds = ["sgdisk -Z $D >/dev/null 2>&1 || true"]
    for n, start, size, name in parts:
        cmds.append("sgdisk -n %d:%dM:+%dM -c %d:%s -t %d:%s -u %d:%s $D >/dev/null" % (
            n, start, size, n, name, n, LINUX, n, "%08d-0000-4000-8000-000000000000" % n))
    cmds.append("partx -u $D 2>/dev/null || partx -a $D 2>/dev/null || true")
    return cmds


BASE3 = table((1, 1, 8, "ONE"), (2, 9, 8, "TWO"), (3, 17, 8, "THREE"))

SCENARIOS = [
    ("create-two", [], {"disks": [{"device": "$D", "partitions": [
        {"number": 1, "sizeMiB": 8, "label": "a"}, {"number": 2, "label": "b"}]}]}),
    ("wipe-table-matching", BASE3, {"disks": [{"device": "$D", "wipeTable": True, "partitions": [
        {"number": 1, "startMiB": 1, "sizeMiB": 8, "label": "ONE"},
        {"number": 2, "startMiB": 9, "sizeMiB": 8, "label": "TWO"},
        {"number": 3, "startMiB": 17, "sizeMiB": 8, "label": "THREE"}]}]}),
    ("wipe-table-matching-guids", BASE3, {"disks": [{"device": "$D", "wipeTable": True, "partitions": [
        {"number": 1, "startMiB": 1, "sizeMiB": 8, "label": "ONE",
         "guid": "00000001-0000-4000-8000-000000000000"}]}]}),
    ("wipe-table-other", BASE3, {"disks": [{"device": "$D", "wipeTable": True, "partitions": [
        {"number": 2, "sizeMiB": 4, "label": "new"}]}]}),
    ("should-not-exist-beyond-table", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 9, "shouldExist": False}]}]}),
    ("should-not-exist-beyond-table-empty", [], {"disks": [{"device": "$D", "partitions": [
        {"number": 5, "shouldExist": False}]}]}),
    ("should-not-exist-with-size0", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 2, "shouldExist": False}, {"number": 4, "sizeMiB": 0, "label": "rest"}]}]}),
    ("should-not-exist-with-start0", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 1, "shouldExist": False}, {"number": 4, "startMiB": 0, "sizeMiB": 4, "label": "x"}]}]}),
    ("should-not-exist-then-reuse-space", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 2, "shouldExist": False}, {"number": 5, "startMiB": 0, "sizeMiB": 0, "label": "fill"}]}]}),
    ("delete-all-with-wipe-entry", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 1, "shouldExist": False}, {"number": 2, "shouldExist": False},
        {"number": 3, "shouldExist": False}]}]}),
    ("wipe-entry-recreate", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 2, "sizeMiB": 4, "label": "TWO", "wipePartitionEntry": True}]}]}),
    ("wipe-entry-unsized-moves", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 5, "sizeMiB": 2}, {"number": 2, "label": "TWO", "wipePartitionEntry": True}]}]}),
    ("mismatch-no-wipe-entry", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 2, "sizeMiB": 4, "label": "TWO"}]}]}),
    ("number0-appends", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 0, "sizeMiB": 4, "label": "z"}]}]}),
    ("number0-and-size0", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 0, "label": "z"}, {"number": 6, "sizeMiB": 2, "label": "six"}]}]}),
    ("verify-unspecified-dont-care", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 1}, {"number": 2, "label": "TWO"}, {"number": 3, "sizeMiB": 8}]}]}),
    ("resize-last", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 3, "resize": True, "sizeMiB": 0, "label": "THREE"}]}]}),
    ("type-guid-change-fails", BASE3, {"disks": [{"device": "$D", "partitions": [
        {"number": 1, "typeGuid": SWAP}]}]}),
    ("fs-ambivalent-vfat", ["mkfs.vfat $D >/dev/null", "truncate -s 8M /tmp/.flint-amb-$$.img && mkfs.ext4 -q -F /tmp/.flint-amb-$$.img && dd if=/tmp/.flint-amb-$$.img of=$D bs=1024 skip=1 seek=1 count=1 conv=notrunc 2>/dev/null; rm -f /tmp/.flint-amb-$$.img"],
     {"filesystems": [{"device": "$D", "format": "vfat"}]}),
    ("fs-ambivalent-ext4", ["mkfs.vfat $D >/dev/null", "truncate -s 8M /tmp/.flint-amb-$$.img && mkfs.ext4 -q -F /tmp/.flint-amb-$$.img && dd if=/tmp/.flint-amb-$$.img of=$D bs=1024 skip=1 seek=1 count=1 conv=notrunc 2>/dev/null; rm -f /tmp/.flint-amb-$$.img"],
     {"filesystems": [{"device": "$D", "format": "ext4"}]}),
    ("fs-reuse-label", ["mkfs.ext4 -q -F -L data $D"], {"filesystems": [{"device": "$D", "format": "ext4", "label": "data"}]}),
    ("fs-label-mismatch", ["mkfs.ext4 -q -F -L data $D"], {"filesystems": [{"device": "$D", "format": "ext4", "label": "other"}]}),
    ("fs-uuid", [], {"filesystems": [{"device": "$D", "format": "xfs", "uuid": G1, "label": "x"}]}),
    ("fs-wipe", ["mkfs.ext4 -q -F -L data $D"], {"filesystems": [{"device": "$D", "format": "btrfs", "wipeFilesystem": True, "label": "b"}]}),
    ("fs-none-over-ext4", ["mkfs.ext4 -q -F $D"], {"filesystems": [{"device": "$D", "format": "none"}]}),
    ("fs-swap-vfat-uuid", [], {"filesystems": [{"device": "$D", "format": "vfat", "uuid": "2e24ec82", "label": "EFI"}]}),
    ("partitions-and-fs", [], {"disks": [{"device": "$D", "wipeTable": True, "partitions": [
        {"number": 1, "sizeMiB": 16, "label": "root", "guid": G2}]}],
        "filesystems": [{"device": "$P1", "format": "ext4", "label": "ROOT"}]}),
]


def gen_scenarios(n, seed):
    r = random.Random(seed)
    for i in range(n):
        existing = []
        start = 1
        for num in range(1, r.randint(0, 4) + 1):
            size = r.choice([2, 4, 8])
            if r.random() < 0.2:
                start += 2
            existing.append((num, start, size, r.choice(["A", "B", "C"])))
            start += size
        parts = []
        for _ in range(r.randint(1, 4)):
            p = {}
            if r.random() < 0.9:
                p["number"] = r.choice([0, 1, 2, 3, 4, 5, 9])
            if r.random() < 0.5:
                p["label"] = r.choice(["A", "B", "C", "new"])
            if r.random() < 0.5:
                p["sizeMiB"] = r.choice([0, 2, 4, 8])
            if r.random() < 0.4:
                p["startMiB"] = r.choice([0, 1, 3, 5, 9, 20])
            if r.random() < 0.3:
                p["shouldExist"] = r.random() < 0.4
            if r.random() < 0.3:
                p["wipePartitionEntry"] = r.random() < 0.6
            if r.random() < 0.1:
                p["resize"] = True
            # seeds from 1900 on: type and partition GUIDs too (upstream compares them, in
            # any letter case), and a filesystem on one of the partitions
            if seed >= 1900 and r.random() < 0.15:
                p["typeGuid"] = r.choice([LINUX, LINUX.lower(), SWAP, SWAP.lower()])
            if seed >= 1900 and r.random() < 0.1:
                p["guid"] = r.choice(["%08d-0000-4000-8000-000000000000" % r.randint(1, 4), G1, G1.lower()])
            if "number" not in p and "label" not in p:
                p["label"] = "L%d" % i
            parts.append(p)
        nums = set()
        parts = [p for p in parts if not (p.get("number", 0) and (p["number"] in nums or nums.add(p["number"])))]
        disk = {"device": "$D", "partitions": parts}
        if r.random() < 0.2:
            disk["wipeTable"] = True
        storage = {"disks": [disk]}
        if seed >= 1900 and r.random() < 0.25:
            fs = {"device": "$P%d" % r.choice([1, 2, 3]), "format": r.choice(["ext4", "vfat", "swap"])}
            if r.random() < 0.5:
                fs["label"] = r.choice(["data", "A"])
            if r.random() < 0.3:
                fs["wipeFilesystem"] = True
            storage["filesystems"] = [fs]
        setup = table(*existing) if existing else []
        if seed >= 1900 and existing and r.random() < 0.2:
            # an existing partition of another type
            setup.insert(-1, "sgdisk -t 1:%s $D >/dev/null 2>&1 || true" % SWAP)
        yield ("gen-%d-%d" % (seed, i), setup, storage)


FORMATS = ["ext4", "xfs", "btrfs", "vfat", "swap"]


def mkfs(fmt, label, uuid):
    """The setup command that puts a `fmt` filesystem (label, UUID where given) on $D."""
    if fmt == "vfat":
        return "mkfs.vfat %s%s$D >/dev/null" % ("-n '%s' " % label if label else "", "-i %s " % uuid if uuid else "")
    opt = {"ext4": ("mkfs.ext4 -q -F", "-U"), "xfs": ("mkfs.xfs -q -f", "-m uuid="),
           "btrfs": ("mkfs.btrfs -q -f", "-U"), "swap": ("mkswap", "-U")}[fmt]
    cmd = opt[0]
    if label:
        cmd += " -L '%s'" % label
    if uuid:
        cmd += (" %s%s" if opt[1].endswith("=") else " %s %s") % (opt[1], uuid)
    return cmd + " $D >/dev/null"


def gen_fs_scenarios(n, seed):
    """Filesystems over what the disk already holds (nothing, the same type, another type;
    labels and UUIDs equal or not), as upstream's filesystem reuse rules are about: the
    comparison is the filesystem left (type, label, and the UUID where fixed)."""
    r = random.Random(seed * 7919 + 1)
    for i in range(n):
        setup = []
        have = None
        if r.random() < 0.7:
            fmt = r.choice(FORMATS)
            label = r.choice([None, "data", "DATA", "boot"])
            uuid = r.choice([None, "00000007-0000-4000-8000-000000000000"])
            if fmt == "vfat" and uuid:
                uuid = "1234ABCD"
            setup.append(mkfs(fmt, label, uuid))
            have = (fmt, label, uuid)
        fs = {"device": "$D"}
        if r.random() < 0.95:
            fs["format"] = (have[0] if have and r.random() < 0.5 else r.choice(FORMATS + ["none"]))
        if r.random() < 0.5:
            fs["label"] = r.choice(([have[1]] if have and have[1] else []) +
                                   ["data", "other", "x" * 12, "y" * 17, "with space", ""])
        if r.random() < 0.4:
            fs["uuid"] = r.choice(([have[2]] if have and have[2] else []) +
                                  [G1, "2e24ec82", "2E24-EC82", "not-a-uuid", ""])
        if r.random() < 0.6:
            fs["wipeFilesystem"] = r.random() < 0.7
        if r.random() < 0.1:
            fs["options"] = r.choice([["-b", "1024"], ["--bogus"], ["-m", "0"]])
        big = "xfs" in (fs.get("format"), have and have[0])
        yield ("gen-fs-%d-%d" % (seed, i), setup, {"filesystems": [fs]}, 320 if big else 64)


def sh(cmd, env):
    return subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True)


def layout(dev, fixed):
    out = {}
    p = subprocess.run(["sfdisk", "--json", dev], capture_output=True, text=True)
    if p.returncode == 0:
        t = json.loads(p.stdout)["partitiontable"]
        parts = []
        for q in t.get("partitions", []):
            num = int(re.search(r"(\d+)$", q["node"]).group(1))
            uuid = q.get("uuid", "")
            parts.append({"number": num, "start": q["start"], "size": q["size"], "type": q.get("type"),
                          "name": q.get("name", ""), "uuid": uuid if uuid.upper() in fixed else "*"})
        out["label"] = t.get("label")
        out["partitions"] = parts
    nodes = [dev] + ["%sp%d" % (dev, q["number"]) for q in out.get("partitions", [])]
    fs = {}
    for n in nodes:
        b = subprocess.run(["blkid", "-p", "-o", "export", n], capture_output=True, text=True)
        kv = dict(l.split("=", 1) for l in b.stdout.splitlines() if "=" in l)
        if b.returncode == 8:
            kv = {"TYPE": "ambivalent"}
        if kv.get("TYPE"):
            u = kv.get("UUID", "")
            fs[n.replace(dev, "$D")] = {"type": kv.get("TYPE"), "label": kv.get("LABEL", ""),
                                         "uuid": u if u.upper() in fixed else "*"}
    out["filesystems"] = fs
    return out


def one(name, setup, storage, size_mib, flint_bin, oracles, work):
    """Runs a scenario with both implementations; returns (same, ref, got)."""
    results = []
    text = json.dumps(storage)
    # UUIDs the config or the setup fixes are compared; random ones are not
    fixed = {u.upper() for u in re.findall(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27}|\b[0-9a-fA-F]{8}\b",
                                           text + " " + " ".join(setup))}
    fixed |= {"%08d-0000-4000-8000-000000000000" % n for n in range(1, 10)}
    fixed |= {f[:4].upper() + "-" + f[4:].upper() for f in fixed if len(f) == 8}
    for who in ("reference", "flint"):
        img = os.path.join(work, "disk.img")
        with open(img, "wb") as f:
            f.truncate(size_mib << 20)
        dev = subprocess.run(["losetup", "-f", "--show", "-P", img], capture_output=True, text=True,
                             check=True).stdout.strip()
        try:
            env = dict(os.environ, D=dev)
            for c in setup:
                sh(c.replace("$D", dev), env)
            subs = text.replace("$D", dev)
            for n in range(1, 10):
                subs = subs.replace("$P%d" % n, "%sp%d" % (dev, n))
            cfg = os.path.join(work, "config.ign")
            with open(cfg, "w") as f:
                f.write('{"ignition":{"version":"3.3.0"},"storage":%s}' % subs)
            root = os.path.join(work, "root-" + who)
            os.makedirs(root, exist_ok=True)
            if who == "reference":
                p = subprocess.run([os.path.join(HERE, "run-reference.sh"), "--stages", "fetch disks", root, cfg],
                                   env=dict(os.environ, IGNITION=os.path.join(oracles, "flatcar", "ignition")),
                                   capture_output=True, text=True, timeout=300)
            else:
                # A state directory of its own: the GUIDs of partitions flint made in an
                # earlier scenario (fixed ones, from a config) would make the setup's
                # partitions of those GUIDs "made by flint" here, under the re-run rules.
                state = os.path.join(work, "state")
                subprocess.run(["rm", "-rf", state])
                p = subprocess.run([os.path.join(flint_bin, "flint"), "apply", "--stage", "disks", "--root", root,
                                    "--state-dir", state, cfg],
                                   env=dict(os.environ, FLINT_DEVICE_TIMEOUT="5"), capture_output=True, text=True,
                                   timeout=300)
            lay = layout(dev, fixed) if p.returncode == 0 else {}
            results.append((p.returncode, json.dumps(lay, indent=1, sort_keys=True).replace(dev, "$D").encode(),
                            (p.stderr[-2000:]).replace(dev, "$D").encode()))
        finally:
            subprocess.run(["partx", "-d", dev], capture_output=True)
            subprocess.run(["losetup", "-d", dev], capture_output=True)
            os.remove(img)
    ref, got = results
    same = (ref[0] == 0) == (got[0] == 0) and ref[1] == got[1]
    return same, ref, got


def main(a):
    import difftest
    out = os.path.join(a.out, "storage")
    subprocess.run(["rm", "-rf", out])
    work = tempfile.mkdtemp(prefix="difftest-storage-")
    total = div = delib = 0
    try:
        cases = [] if a.generated_only else [c + (64,) for c in SCENARIOS]
        if not a.corpora_only:
            # as many filesystem scenarios as partition ones
            cases += [c + (64,) for c in gen_scenarios(a.generated, a.seed)]
            cases += list(gen_fs_scenarios(a.generated, a.seed))
        for name, setup, storage, size in cases:
            try:
                same, ref, got = one(name, setup, storage, size, difftest.FLINT_BIN, difftest.ORACLES, work)
            except (subprocess.SubprocessError, OSError) as e:
                # a hung stage or a missing loop device is a divergence to look at, not the
                # end of the run
                same, ref, got = False, ("harness", b"", str(e).encode()), ("harness", b"", b"")
            total += 1
            if total % 100 == 0:
                print("  %d inputs, %d divergences (%d deliberate)" % (total, div, delib), flush=True)
            if not same:
                div += 1
                why = deliberate_storage(name, storage, ref, got)
                if why:
                    delib += 1
                d = os.path.join(out, name)
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, "scenario.json"), "w") as f:
                    json.dump({"setup": setup, "storage": storage}, f, indent=1)
                for who, r in (("reference", ref), ("flint", got)):
                    with open(os.path.join(d, who + ".out"), "wb") as f:
                        f.write(b"exit %s\n--- layout\n" % str(r[0]).encode() + r[1] + b"\n--- stderr\n" + r[2])
                # only a divergence deliberate.py explains has a reason to write down (`why` is
                # None for the others: writing it unconditionally crashed the run)
                if why:
                    with open(os.path.join(d, "deliberate"), "w") as f:
                        f.write(why + "\n")
                print("DIVERGES %s (exit %s / %s)%s" % (name, ref[0], got[0], " deliberate: " + why if why else ""),
                      flush=True)
    finally:
        subprocess.run(["rm", "-rf", work])
    print("divergences in %s" % out)
    print("storage: %d inputs, %d divergences (%d deliberate)" % (total, div, delib))
    return 0 if div == delib else 1


def deliberate_storage(name, storage, ref, got):
    """flint keeps a table that already is what wipeTable would produce (docs/guide/
    differences.md): only the partition GUIDs upstream draws anew differ."""
    import deliberate
    return deliberate.classify("storage", {"storage": storage}, ref, got)
