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


# ---------------------------------------------------------------------------------------------
# Upstream's blackbox storage scenarios (tests/positive|negative/partitions, filesystems,
# regression/filesystem.go of coreos/ignition), in the harness's form. Their disks: partitions
# laid out one after the other from sector 34, each start aligned (2048 sectors for the disks a
# test adds, 4096 for the "base disk"), a gap where a blank entry sits; the image is as large
# as the input or the expected output needs (alignment of the protective MBR area, the aligned
# lengths, and the backup GPT). Filesystems made with upstream's mkfs options. Disks are $D,
# $E, $F, $G (their partitions $Dp1, $Ep2, ...); a scenario's fourth element is then a dict:
# {"disks": [sectors, ...], "stages": "mount" (run disks, mount, files, umount too), "root":
# [commands on $ROOT, the target root, before the run]}.
# Run just these: STORAGE_SUITE=upstream python3 tests/differential/difftest.py storage --corpora-only
EFI = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
RESIZE = "3884DD41-8582-4404-B9A8-E9B84F2DF50E"
TYPECODES = {"efi": EFI, "data": LINUX, "coreos-resize": RESIZE}
MIB = 2048  # sectors
UPSTREAM_ALIGN = 2048
BASE_ALIGN = 4096
FIXTURES = "/work/.mirror/coreos+ignition/repo"


def _align(n, a):
    return n if n % a == 0 else n + a - n % a


def _fixture(name, dev):
    """Writes upstream's canned image NAME (base64 of a bzip2 stream, in tests/fixtures) to dev."""
    return ("git -C %s show HEAD:tests/fixtures/fs_image.go | python3 -c \"import sys,re;"
            "print(re.search(r'\\b%s = \\x60([^\\x60]*)\\x60', sys.stdin.read()).group(1))\" | base64 -d | bzcat"
            " | dd of=%s bs=1M conv=notrunc status=none" % (FIXTURES, name, dev))


def _mkfs(fs, dev, label=None, uuid=None):
    if fs == "vfat":
        cmd = "mkfs.fat"
        lab, uu = "-n", "-i"
    elif fs in ("ext2", "ext4"):
        cmd = "mke2fs -q -F -t %s -b 4096 -i 4096 -I 128 -e remount-ro" % fs
        lab, uu = "-L", "-U"
    elif fs == "btrfs":
        cmd, lab, uu = "mkfs.btrfs -q -f", "--label", "--uuid"
    elif fs == "xfs":
        cmd, lab, uu = "mkfs.xfs -q -f --unsupported", "-L", "-m uuid="
    elif fs == "swap":
        cmd, lab, uu = "mkswap", "-L", "-U"
    else:
        raise ValueError(fs)
    if label:
        cmd += " %s '%s'" % (lab, label)
    if uuid:
        cmd += (" %s%s" if uu.endswith("=") else " %s %s") % (uu, uuid)
    return cmd + " %s >/dev/null 2>&1" % dev


def udisk(var, parts, align=UPSTREAM_ALIGN, corrupt=False):
    """Setup commands and size (sectors) of an upstream-style disk on device `var` ($D, $E..).
    parts: dicts n (number; absent: a gap of `len` sectors), len, label, type (a GUID or a
    type code), guid, fs (vfat, ext2, ext4, btrfs, xfs, swap, or image:NAME), fslabel, fsuuid,
    hybrid."""
    off, size = 34, _align(63, align)
    sg, hyb, mk = [], [], []
    for p in parts:
        size += _align(p["len"], align)
        if not p["len"]:
            continue
        off = _align(off, align)
        start, off = off, off + p["len"]
        n = p.get("n")
        if n is None:
            continue
        sg.append("--new=%d:%d:+%d --change-name=%d:'%s'" % (n, start, p["len"], n, p.get("label", "")))
        t = TYPECODES.get(p.get("type"), p.get("type"))
        if t:
            sg.append("--typecode=%d:%s" % (n, t))
        if p.get("guid"):
            sg.append("--partition-guid=%d:%s" % (n, p["guid"]))
        if p.get("hybrid"):
            hyb.append(str(n))
        fs = p.get("fs")
        if fs and fs.startswith("image:"):
            mk.append(_fixture(fs[6:], "%sp%d" % (var, n)))
        elif fs:
            mk.append(_mkfs(fs, "%sp%d" % (var, n), p.get("fslabel"), p.get("fsuuid")))
    cmds = []
    if sg:
        cmds.append("sgdisk %s %s%s >/dev/null" % (" ".join(sg), "-h=%s " % ":".join(hyb) if hyb else "", var))
        cmds.append("partx -a %s 2>/dev/null || partx -u %s 2>/dev/null || true" % (var, var))
    cmds += mk
    if corrupt:
        cmds.append("head -c 1536 /dev/urandom | dd of=%s conv=notrunc status=none" % var)
        cmds.append("partx -d %s 2>/dev/null || true" % var)
    return cmds, size + 33


def base(**changes):
    """Upstream's base disk (EFI-SYSTEM 1, OEM 6, ROOT 9; 128 MiB each, 2 MiB aligned), as
    part dicts; changes: number -> dict of fields to change (None drops the partition)."""
    # Upstream's filesystems get random UUIDs and it compares files to tell a kept filesystem
    # from a new one; here they get fixed UUIDs (compared), so a filesystem made anew shows.
    parts = [{"n": 1, "label": "EFI-SYSTEM", "type": "efi", "len": 262144, "fs": "vfat", "hybrid": True,
              "fsuuid": "00000001"},
             {"n": 6, "label": "OEM", "type": "data", "len": 262144, "fs": "ext4",
              "fsuuid": "00000006-0000-4000-8000-000000000000"},
             {"n": 9, "label": "ROOT", "type": "coreos-resize", "len": 262144, "fs": "ext4",
              "fsuuid": "00000009-0000-4000-8000-000000000000"}]
    out = []
    for p in parts:
        c = changes.get("p%d" % p["n"], {})
        if c is None:
            continue
        out.append(dict(p, **c))
    return out


def up(name, disks, storage, stages=None, root=None, min_sectors=None, skip_critical=False):
    """An upstream-style scenario: disks is a list of (parts, align[, corrupt]) for $D, $E...
    (parts None: a disk of min_sectors with nothing on it)."""
    setup, sizes = [], []
    for i, d in enumerate(disks):
        var = "$" + "DEFG"[i]
        parts, align = d[0], d[1]
        cmds, sectors = udisk(var, parts or [], align, corrupt=len(d) > 2 and d[2])
        setup += cmds
        want = (min_sectors or {}).get(var, 0)
        sizes.append(max(sectors, want))
    opts = {"disks": sizes}
    if stages:
        opts["stages"] = stages
    if root:
        opts["root"] = root
    if skip_critical:
        opts["skip_critical"] = True
    return (name, setup, storage, opts)


def D(*parts, **kw):
    return {"device": kw.pop("dev", "$D"), "partitions": list(parts), **kw}


def P(**kw):
    return kw



def usz(lengths, align=UPSTREAM_ALIGN):
    """The size (sectors) upstream gives a disk of these partition lengths."""
    return _align(63, align) + sum(_align(n, align) for n in lengths) + 33


def part(n, label, length, type=None, guid=None, **kw):
    return dict(n=n, label=label, len=length, type=type, guid=guid, **kw)


def _rest():
    r = []
    B = BASE_ALIGN
    U = UPSTREAM_ALIGN
    C1 = "B921B045-1DF0-41C3-AF44-4C6F280D3FAE"
    C2 = "CA7D7CCB-63ED-4C53-861C-1742536059CC"
    G05 = "05AE8178-224E-4744-862A-4F4B042662D0"
    F39 = "F39C522B-9966-4429-A8F8-417CD5D83E5E"
    U0, U1, U2, U3 = ("11111111-2222-4333-8444-%012d" % i for i in range(4))
    GR = {"$D": usz([262144, 262144, 12943360 + 65536], B)}

    # complex-mb.go's disks one at a time, without the shouldExist entries the reference
    # refuses next to partitions of start or size 0 (the whole of it is in UPSTREAM_SCENARIOS)
    cx = (None, None, CX_STORAGE)
    cx_disks = CX_DISKS
    d1 = [p for p in cx[2]["disks"][0]["partitions"] if p.get("shouldExist") is not False]
    r.append(up("up-complex-disk1-nodelete", [cx_disks[0]], {"disks": [D(*d1)]}))
    r.append(up("up-complex-disk1-nodelete-lowercase", [cx_disks[0]], {"disks": [D(*[
        {k: (v.lower() if k in ("typeGuid", "guid") else v) for k, v in p.items()} for p in d1])]}))
    r.append(up("up-complex-disk1-explicit", [cx_disks[0]], {"disks": [D(*(d1[:2] + [dict(d1[2], startMiB=97, sizeMiB=128)] + [
        P(number=4, shouldExist=False, wipePartitionEntry=True), P(number=9, shouldExist=False)]))]}))
    d2 = cx[2]["disks"][1]["partitions"]
    r.append(up("up-complex-disk2-replace", [cx_disks[1]], {"disks": [D(d2[0], dict(d2[2], number=2), dict(d2[3], number=3))]},
                min_sectors={"$D": usz([65536, 131072, 196608])}))
    r.append(up("up-complex-disk2-number0", [cx_disks[1]], {"disks": [D(d2[0], P(number=2, wipePartitionEntry=True, label="to-replace2", sizeMiB=64), d2[3])]},
                min_sectors={"$D": usz([65536, 131072, 196608])}))
    r.append(up("up-complex-disk2-explicit", [cx_disks[1]], {"disks": [D(d2[0], d2[1], dict(d2[2], startMiB=33), dict(d2[3], startMiB=97))]},
                min_sectors={"$D": usz([65536, 131072, 196608])}))
    # -- creation-mb.go: partitions on an empty disk
    for sfx, pa in [("", {}), ("-withstart", {"startMiB": 1}), ("-start0", {"startMiB": 0}),
                    ("-lowercase", {"typeGuid": C1.lower(), "guid": G05.lower()}),
                    ("-notype", {"typeGuid": None}), ("-number2", {"number": 2}),
                    ("-number128", {"number": 128}), ("-size16", {"sizeMiB": 16}),
                    ("-size0", {"sizeMiB": 0}), ("-toobig", {"sizeMiB": 33}),
                    ("-start-beyond", {"startMiB": 40}), ("-number0", {"number": 0})]:
        pp = dict(number=1, sizeMiB=32, label="create-partition", typeGuid=C1, guid=G05)
        pp.update(pa)
        pp = {k: v for k, v in pp.items() if v is not None}
        r.append(up("up-partition-create" + sfx, [([], U)], {"disks": [D(pp)]},
                    min_sectors={"$D": usz([65536])}))
    # wipeTable then create, over partitions of other GUIDs
    wt_in = [part(1, "important-data", 65536, C1, C1), part(2, "ephemeral-data", 131072, C2, C1)]
    for sfx, parts, extra in [
            ("", [P(label="important-data", number=1, sizeMiB=32, typeGuid=C1, guid=G1),
                  P(label="ephemeral-data", number=2, sizeMiB=64, typeGuid=C2, guid="A51034E6-26B3-48DF-BEED-220562AC7AD1")], {}),
            ("-one", [P(label="x", number=2, sizeMiB=16)], {}),
            ("-none", [], {}),
            ("-shouldnotexist", [P(number=1, shouldExist=False), P(number=3, sizeMiB=8, label="t")], {}),
            ("-lowercase", [P(label="important-data", number=1, sizeMiB=32, typeGuid=C1.lower(), guid=G1.lower())], {}),
            ("-false", [P(label="important-data", number=1, sizeMiB=32, typeGuid=C1, guid=G1)], {"wipeTable": False})]:
        r.append(up("up-partition-create-wipetable" + sfx, [(wt_in, U)],
                    {"disks": [D(*parts, **dict({"wipeTable": True}, **extra))]}))
    # append
    ap_in = [part(1, "important-data", 65536, C1, G1), part(2, "ephemeral-data", 131072, C2, C1)]
    for sfx, parts in [
            ("", [P(label="additional-partition", number=3, sizeMiB=32, typeGuid=F39, guid="3ED3993F-0016-422B-B134-09FCBA6F66EF"),
                  P(label="additional-partition2", number=4, sizeMiB=32, typeGuid=F39, guid="accedd09-76c2-4363-9893-f5689a78c47f")]),
            ("-number0", [P(label="a", sizeMiB=32), P(label="b", number=0, sizeMiB=32)]),
            ("-start", [P(label="a", number=3, startMiB=97, sizeMiB=32), P(label="b", number=4, startMiB=129, sizeMiB=0)]),
            ("-overlap", [P(label="a", number=3, startMiB=64, sizeMiB=32)]),
            ("-sparse-number", [P(label="a", number=7, sizeMiB=32), P(label="b", number=5, sizeMiB=32)]),
            ("-verify-and-add", [P(number=1, label="important-data", typeGuid=C1.lower(), guid=G1.lower()),
                                 P(number=2, label="ephemeral-data", startMiB=33, sizeMiB=64),
                                 P(number=3, label="add", sizeMiB=32)]),
            ("-toobig", [P(label="a", number=3, sizeMiB=65)])]:
        r.append(up("up-partition-append" + sfx, [(ap_in, U)], {"disks": [D(*parts, wipeTable=False)]},
                    min_sectors={"$D": usz([65536, 131072, 65536, 65536])}))
    # resize the root of the base disk (it grows into a larger disk)
    for sfx, pp in [("", P(label="ROOT", number=9, sizeMiB=6352, typeGuid=RESIZE, guid="3ED3993F-0016-422B-B134-09FCBA6F66EF", wipePartitionEntry=True)),
                    ("-lowercase", P(label="ROOT", number=9, sizeMiB=6352, typeGuid=RESIZE.lower(), wipePartitionEntry=True)),
                    ("-nowipe", P(label="ROOT", number=9, sizeMiB=6352)),
                    ("-existing", P(label="ROOT", number=9, sizeMiB=6352, resize=True)),
                    ("-existing-size0", P(label="ROOT", number=9, sizeMiB=0, resize=True)),
                    ("-existing-shrink", P(label="ROOT", number=9, sizeMiB=64, resize=True)),
                    ("-existing-nolabel", P(number=9, sizeMiB=6352, resize=True)),
                    ("-existing-otherlabel", P(number=9, label="root", sizeMiB=6352, resize=True)),
                    ("-existing-othertype", P(number=9, sizeMiB=6352, resize=True, typeGuid=LINUX)),
                    ("-existing-startmismatch", P(label="ROOT", number=9, sizeMiB=6352, startMiB=100, resize=True)),
                    ("-existing-start", P(label="ROOT", number=9, sizeMiB=6352, startMiB=258, resize=True)),
                    ("-existing-resize-false", P(label="ROOT", number=9, sizeMiB=6352, resize=False)),
                    ("-zeros", P(label="ROOT", number=9, startMiB=0, sizeMiB=0, typeGuid=RESIZE, wipePartitionEntry=True)),
                    ("-zeros-nowipe", P(label="ROOT", number=9, startMiB=0, sizeMiB=0, typeGuid=RESIZE)),
                    ("-size0-wipe", P(label="ROOT", number=9, sizeMiB=0, wipePartitionEntry=True))]:
        r.append(up("up-partition-resizeroot" + sfx, [(base(), B)], {"disks": [D(pp)]}, min_sectors=GR))
    # deletion
    for sfx, parts in [("", [P(number=1, shouldExist=False, wipePartitionEntry=True)]),
                       ("-nowipe", [P(number=1, shouldExist=False)]),
                       ("-wipe-false", [P(number=1, shouldExist=False, wipePartitionEntry=False)]),
                       ("-with-label", [P(number=1, label="deleteme", shouldExist=False, wipePartitionEntry=True)]),
                       ("-other-label", [P(number=1, label="keepme", shouldExist=False, wipePartitionEntry=True)])]:
        r.append(up("up-partition-delete" + sfx, [([part(1, "deleteme", 65536)], U)], {"disks": [D(*parts)]}))
    nums = [1, 2, 3, 4, 6, 7, 9]
    for sfx, parts in [("", [P(number=n, shouldExist=False, wipePartitionEntry=True) for n in nums]),
                       ("-nowipe", [P(number=n, shouldExist=False) for n in nums]),
                       ("-and-create", [P(number=n, shouldExist=False, wipePartitionEntry=True) for n in nums] +
                        [P(number=0, label="new", sizeMiB=0)]),
                       ("-beyond", [P(number=n, shouldExist=False, wipePartitionEntry=True) for n in (9, 127, 128, 129, 200)])]:
        r.append(up("up-partition-delete-all" + sfx, [(base(), B)], {"disks": [D(*parts)]}))
    # mixed.go
    mx_in = [part(1, "important-data", 65536, U0, U1), part(2, "ephemeral-data", 65536, U2, U0),
             part(3, "bunch-of-junk", 131072, U2, U0)]
    for sfx, parts in [
            ("", [P(label="important-data", number=1, startMiB=1, sizeMiB=32),
                  P(label="ephemeral-data", number=2, startMiB=33, sizeMiB=64, wipePartitionEntry=True),
                  P(number=3, shouldExist=False, wipePartitionEntry=True),
                  P(label="even-more-data", number=4, startMiB=97, sizeMiB=32)]),
            ("-nowipe3", [P(label="important-data", number=1, startMiB=1, sizeMiB=32),
                          P(label="ephemeral-data", number=2, startMiB=33, sizeMiB=64, wipePartitionEntry=True),
                          P(number=3, shouldExist=False),
                          P(label="even-more-data", number=4, startMiB=97, sizeMiB=32)]),
            ("-zeros", [P(label="important-data", number=1, startMiB=0, sizeMiB=32),
                        P(label="ephemeral-data", number=2, startMiB=0, sizeMiB=64, wipePartitionEntry=True),
                        P(number=3, shouldExist=False, wipePartitionEntry=True),
                        P(label="even-more-data", number=4, startMiB=0, sizeMiB=0)]),
            ("-guids", [P(label="important-data", number=1, typeGuid=U0.upper(), guid=U1.upper()),
                        P(label="ephemeral-data", number=2, typeGuid=U2, guid=U0, sizeMiB=32)])]:
        r.append(up("up-partition-mixed" + sfx, [(mx_in, U)], {"disks": [D(*parts)]}))
    nm_in = [part(1, "important-data", 65536, U0), part(2, "ephemeral-data", 65536, None, U0),
             part(3, "bunch-of-junk", 131072)]
    for sfx, w in [("", True), ("-nowipe", False)]:
        r.append(up("up-partition-nothing-matches" + sfx, [(nm_in, U)], {"disks": [D(
            P(label="important-data", number=1, startMiB=1, sizeMiB=32, wipePartitionEntry=w, typeGuid=U1),
            P(label="ephemeral-data", number=2, startMiB=33, sizeMiB=32, wipePartitionEntry=w, guid=U1),
            P(label="even-more-data", number=3, startMiB=65, sizeMiB=32, wipePartitionEntry=w))]}))
    # no-op.go
    r.append(up("up-partition-noop", [(base(), B)], {"disks": [{"device": "$D"}]}))
    r.append(up("up-partition-noop-wipefalse", [(base(), B)], {"disks": [{"device": "$D", "wipeTable": False, "partitions": []}]}))
    r.append(up("up-partition-noop-nonexistent", [(base(), B), ([], U)], {"disks": [
        D(P(number=10, shouldExist=False), P(number=11, shouldExist=False), P(number=999, shouldExist=False)),
        D(P(number=1, shouldExist=False), P(number=11, shouldExist=False), P(number=999, shouldExist=False), dev="$E")]}))
    r.append(up("up-partition-noop-nonexistent-128", [(base(), B)], {"disks": [
        D(P(number=128, shouldExist=False), P(number=129, shouldExist=False))]}))
    # verification.go
    va = [("EFI-SYSTEM", 1, 2, EFI), ("OEM", 6, 130, LINUX), ("ROOT", 9, 258, RESIZE)]
    for sfx, f in [("", lambda l, n, st, t: P(label=l, number=n, startMiB=st, sizeMiB=128, typeGuid=t)),
                   ("-withwipe", lambda l, n, st, t: P(label=l, number=n, startMiB=st, sizeMiB=128, typeGuid=t, wipePartitionEntry=True)),
                   ("-lowercase", lambda l, n, st, t: P(label=l, number=n, startMiB=st, sizeMiB=128, typeGuid=t.lower())),
                   ("-startonly", lambda l, n, st, t: P(number=n, startMiB=st)),
                   ("-start0", lambda l, n, st, t: P(label=l, number=n, startMiB=0, sizeMiB=128)),
                   ("-wrongstart", lambda l, n, st, t: P(label=l, number=n, startMiB=st + 1, sizeMiB=128)),
                   ("-wrongtype", lambda l, n, st, t: P(label=l, number=n, typeGuid=LINUX if t != LINUX else EFI)),
                   ("-wrongtype-wipe", lambda l, n, st, t: P(label=l, number=n, typeGuid=LINUX if t != LINUX else EFI, wipePartitionEntry=True)),
                   ("-wronglabel", lambda l, n, st, t: P(label=l.lower(), number=n)),
                   ("-wronglabel-wipe", lambda l, n, st, t: P(label=l.lower(), number=n, wipePartitionEntry=True))]:
        r.append(up("up-partition-match-all" + sfx, [(base(), B)], {"disks": [D(*[f(*x) for x in va])]}))
    # wipe.go: a corrupt table
    for sfx, dk in [("", {"device": "$D", "wipeTable": True}),
                    ("-and-create", D(P(number=1, label="new", sizeMiB=16), wipeTable=True)),
                    ("-nowipe", D(P(number=1, label="new", sizeMiB=16))),
                    ("-nowipe-nothing", {"device": "$D"})]:
        r.append(up("up-partition-wipebadtable" + sfx, [([part(1, "deleteme", 65536)], U, True)], {"disks": [dk]},
                    skip_critical=True))
    # zeros.go
    for sfx, pp in [("", P(label="fills-disk", number=1, startMiB=0, sizeMiB=0, typeGuid=U0, guid=U1)),
                    ("-unset", P(label="fills-disk", number=1, typeGuid=U0, guid=U1)),
                    ("-number0", P(label="fills-disk", startMiB=0, sizeMiB=0)),
                    ("-number5", P(label="fills-disk", number=5, sizeMiB=0))]:
        r.append(up("up-partition-create-startsize0" + sfx, [([], U)], {"disks": [D(pp, wipeTable=False)]},
                    min_sectors={"$D": usz([65536])}))
    for sfx, extra in [("", {}), ("-last-size0", {"sizeMiB": 0})]:
        parts = [P(label="uno", sizeMiB=32, typeGuid=U0, guid=U1), P(label="dos", sizeMiB=32, typeGuid=U0, guid=U2),
                 P(label="tres", sizeMiB=32, typeGuid=U0, guid=U3)]
        parts[2].update(extra)
        r.append(up("up-partition-create-numbersize0" + sfx, [([], U)], {"disks": [D(*parts, wipeTable=False)]},
                    min_sectors={"$D": usz([65536] * 3)}))
    r.append(up("up-partition-create-numbersize0-too-many", [([], U)], {"disks": [D(
        P(label="uno", sizeMiB=32), P(label="dos", sizeMiB=32), P(label="tres", sizeMiB=32), P(label="cuatro", sizeMiB=32))]},
        min_sectors={"$D": usz([65536] * 3)}))
    for sfx, pp in [("", P(label="ROOT", number=9, startMiB=0, sizeMiB=0, typeGuid=RESIZE)),
                    ("-lowercase", P(label="ROOT", number=9, startMiB=0, sizeMiB=0, typeGuid=RESIZE.lower())),
                    ("-size0", P(number=9, sizeMiB=0)),
                    ("-start0", P(number=9, startMiB=0))]:
        r.append(up("up-partition-match-rootfillsdisk" + sfx, [(base(), B)], {"disks": [D(pp)]}))
    gap_after = base() + [{"len": 65536}]
    gap_before = base(p9=None) + [{"len": 65536}] + [base()[2]]
    r.append(up("up-partition-match-sizestart-unspecd", [(gap_after, B)], {"disks": [D(P(label="ROOT", number=9, typeGuid=RESIZE))]}))
    r.append(up("up-partition-match-failstofill", [(gap_after, B)], {"disks": [D(P(number=9, sizeMiB=0))]}))
    r.append(up("up-partition-match-failstofill-wipe", [(gap_after, B)], {"disks": [D(P(number=9, sizeMiB=0, wipePartitionEntry=True))]}))
    r.append(up("up-partition-match-failstostart", [(gap_before, B)], {"disks": [D(P(number=9, startMiB=0))]}))
    r.append(up("up-partition-match-failstostart-wipe", [(gap_before, B)], {"disks": [D(P(number=9, startMiB=0, wipePartitionEntry=True))]}))
    r.append(up("up-partition-match-gapbefore-size", [(gap_before, B)], {"disks": [D(P(number=9, sizeMiB=128))]}))
    n0_in = [dict(n=1, label="foobar", len=65536, type=U0, guid=U1)]
    for sfx, parts in [("", [P(label="newpart", sizeMiB=32), P(number=1, label="foobar")]),
                       ("-size0", [P(label="newpart", sizeMiB=0), P(number=1, label="foobar")]),
                       ("-two", [P(label="a", sizeMiB=16), P(label="b", sizeMiB=16), P(number=1)]),
                       ("-then-number2", [P(label="a", sizeMiB=16), P(number=2, label="b", sizeMiB=16)])]:
        r.append(up("up-partition-number0" + sfx, [(n0_in, U)], {"disks": [D(*parts)]},
                    min_sectors={"$D": usz([65536, 65536])}))
    # negative/partitions/simple.go
    for sfx, parts in [("delete-nowipe", [P(number=9, shouldExist=False)]),
                       ("match-fail", [P(number=9, sizeMiB=2)]),
                       ("partialmatch-fail", [P(number=1), P(number=9, sizeMiB=2)]),
                       ("partialmatch-fail-nonexistent", [P(number=10, shouldExist=False), P(number=9, sizeMiB=2)]),
                       ("match-fail-start", [P(number=9, startMiB=2)]),
                       ("match-fail-label", [P(number=6, label="oem")])]:
        r.append(up("up-neg-partition-" + sfx, [(base(), B)], {"disks": [D(*parts)]}))

    # small shapes of the above: numbers beyond the GPT's 128 entries, a wiped table whose
    # partitions the config gives other GUIDs
    for n in (129, 999):
        r.append(up("up-min-shouldnotexist-%d-notable" % n, [([], U)], {"disks": [D(P(number=n, shouldExist=False))]},
                    min_sectors={"$D": usz([16384])}))
        r.append(up("up-min-shouldnotexist-%d" % n, [([part(1, "a", 16384)], U)], {"disks": [D(P(number=n, shouldExist=False))]}))
        r.append(up("up-min-create-%d" % n, [([part(1, "a", 16384)], U)], {"disks": [D(P(number=n, sizeMiB=4))]},
                    min_sectors={"$D": usz([16384, 16384])}))
    r.append(up("up-min-wipetable-guid", [([part(1, "a", 16384, LINUX, G2)], U)], {"disks": [D(
        P(number=1, label="a", sizeMiB=8, guid=G1), wipeTable=True)]}))
    r.append(up("up-min-wipetable-guid-same", [([part(1, "a", 16384, LINUX, G1)], U)], {"disks": [D(
        P(number=1, label="a", sizeMiB=8, guid=G1.lower()), wipeTable=True)]}))
    r.append(up("up-min-wipetable-noguid", [([part(1, "a", 16384, LINUX, G2)], U)], {"disks": [D(
        P(number=1, label="a", sizeMiB=8), wipeTable=True)]}))
    # -- filesystems, on the base disk (EFI-SYSTEM $Dp1, OEM $Dp6, ROOT $Dp9)
    def fs(name, changes, fss, stages=None, root=None, disks=None, **kw):
        r.append(up(name, disks or [(base(**changes), B)], {"filesystems": fss}, stages=stages, root=root, **kw))
    V = "2e24ec82"
    fs("up-fs-create-wipe-sametype", {"p1": {"fs": "ext4"}}, [{"device": "$Dp1", "format": "ext4", "path": "/boot", "wipeFilesystem": True}])
    fs("up-fs-create-nowipe-sametype", {"p1": {"fs": "ext4"}}, [{"device": "$Dp1", "format": "ext4", "path": "/boot"}])
    fs("up-fs-create-nowipe-sametype-label", {"p1": {"fs": "ext4", "fslabel": "boot"}}, [{"device": "$Dp1", "format": "ext4", "label": "boot"}])
    fs("up-fs-erase-withfs", {}, [{"device": "$Dp6", "format": "none", "path": "/tmp0", "wipeFilesystem": True}])
    fs("up-fs-erase-nofs", {"p6": {"fs": None}}, [{"device": "$Dp6", "format": "none", "path": "/tmp0", "wipeFilesystem": False}])
    fs("up-fs-erase-nofs-wipe", {"p6": {"fs": None}}, [{"device": "$Dp6", "format": "none", "wipeFilesystem": True}])
    fs("up-fs-erase-vfat-wipe", {}, [{"device": "$Dp1", "format": "none", "wipeFilesystem": True}])
    fs("up-fs-erase-swap-wipe", {"p6": {"fs": "swap"}}, [{"device": "$Dp6", "format": "none", "wipeFilesystem": True}])
    fs("up-fs-erase-noformat-wipe", {}, [{"device": "$Dp6", "wipeFilesystem": True}])
    md = [(base(), B)] + [([dict(n=1, label="data-%d" % i, len=65536)], U) for i in range(3)]
    r.append(up("up-fs-create-multipledisks", md[1:] + [([dict(n=1, label="data-3", len=65536)], U)], {"filesystems": [
        {"path": "/tmp-%d" % i, "device": "$%sp1" % "DEFG"[i], "format": "ext4", "label": "data-%d" % i} for i in range(4)]}))
    r.append(up("up-fs-create-multipledisks-mixed", md[1:] + [([dict(n=1, label="data-3", len=65536)], U)], {"filesystems": [
        {"device": "$Dp1", "format": "ext4", "label": "data-0"}, {"device": "$Ep1", "format": "xfs", "label": "data-1"},
        {"device": "$Fp1", "format": "vfat", "label": "DATA-2"}, {"device": "$Gp1", "format": "swap", "label": "data-3"}]}))
    # reformat_filesystem.go
    for fmt, extra, ch in [("btrfs", {}, {}), ("xfs", {"label": "OEM", "uuid": U0, "options": ["--unsupported"]}, {}),
                           ("vfat", {"label": "OEM", "uuid": V}, {}), ("ext4", {"label": "OEM", "uuid": U0}, {"p6": {"fs": "ext2"}}),
                           ("swap", {"label": "OEM", "uuid": U0}, {"p6": {"fs": "ext2"}})]:
        fs("up-fs-reformat-" + fmt, ch, [dict({"path": "/tmp0", "device": "$Dp6", "format": fmt, "wipeFilesystem": True}, **extra)])
        fs("up-fs-reformat-%s-nowipe" % fmt, ch, [dict({"path": "/tmp0", "device": "$Dp6", "format": fmt}, **extra)])
    fs("up-fs-reformat-xfs-nounsupported", {}, [{"device": "$Dp6", "format": "xfs", "label": "OEM", "wipeFilesystem": True}])
    fs("up-fs-reformat-ext4-uppercase-uuid", {"p6": {"fs": "ext2"}}, [{"device": "$Dp6", "format": "ext4", "uuid": U0.upper(), "wipeFilesystem": True}])
    fs("up-fs-reformat-vfat-uppercase-uuid", {}, [{"device": "$Dp6", "format": "vfat", "uuid": V.upper(), "wipeFilesystem": True}])
    fs("up-fs-reformat-vfat-longlabel", {}, [{"device": "$Dp6", "format": "vfat", "label": "ABCDEFGHIJKL", "wipeFilesystem": True}])
    fs("up-fs-reformat-ext4-badoption", {}, [{"device": "$Dp6", "format": "ext4", "options": ["--bogus"], "wipeFilesystem": True}])
    fs("up-fs-reformat-ext4-options", {}, [{"device": "$Dp6", "format": "ext4", "options": ["-E", "nodiscard"], "label": "x", "wipeFilesystem": True}])
    zdisk = lambda img: [([dict(n=1, label="ROOT", type="data", len=131072, fs="ext4"),
                           dict(n=2, label="ZFS", type="data", len=131072, fs="image:" + img)], B)]
    fs("up-fs-zfs-canned", {}, [], disks=zdisk("ZFS"))
    for fmt, opt in [("ext4", ["-E", "nodiscard"]), ("xfs", ["-K", "--unsupported"]), ("vfat", None), ("btrfs", None), ("swap", None)]:
        f = {"path": "/tmp0", "device": "$Dp2", "format": fmt, "wipeFilesystem": True}
        if opt:
            f["options"] = opt
        fs("up-fs-zfs-" + fmt, {}, [f], disks=zdisk("ZFS"))
    fs("up-fs-zfs-ext4-nowipe", {}, [{"device": "$Dp2", "format": "ext4"}], disks=zdisk("ZFS"))
    # reuse_filesystem.go
    ru = lambda **kw: [(base(), B), ([dict(n=1, label="important-data", len=2621440, fs="xfs", fslabel="data", fsuuid=U0, **kw)], U)]
    fs("up-fs-reuse", {}, [{"path": "/tmp0", "device": "$Ep1", "wipeFilesystem": False, "format": "xfs", "label": "data", "uuid": U0}], disks=ru())
    fs("up-fs-reuse-uppercase-uuid", {}, [{"device": "$Ep1", "format": "xfs", "label": "data", "uuid": U0.upper()}], disks=ru())
    fs("up-fs-reuse-nolabel-nouuid", {}, [{"device": "$Ep1", "format": "xfs"}], disks=ru())
    fs("up-fs-reuse-otherlabel", {}, [{"device": "$Ep1", "format": "xfs", "label": "DATA"}], disks=ru())
    fs("up-fs-reuse-otheruuid", {}, [{"device": "$Ep1", "format": "xfs", "uuid": U1}], disks=ru())
    fs("up-fs-reuse-othertype", {}, [{"device": "$Ep1", "format": "ext4", "label": "data"}], disks=ru())
    fs("up-fs-reuse-mount", {}, [{"path": "/tmp0", "device": "$Ep1", "format": "xfs", "label": "data", "uuid": U0}], disks=ru(), stages="mount")
    amb = [([dict(n=1, label="ROOT", type="data", len=131072, fs="ext4"),
             dict(n=2, label="ZFS", type="data", len=131072, fs="image:Ext4ZFS")], B)]
    fs("up-fs-reuse-ambivalent", {}, [{"path": "/tmp0", "device": "$Dp2", "wipeFilesystem": False, "format": "ext4",
                                       "label": "some-label", "uuid": "f63bf118-f6d7-40a3-b64c-a92b05a7f9ee"}], disks=amb)
    fs("up-fs-reuse-ambivalent-otherlabel", {}, [{"device": "$Dp2", "format": "ext4", "label": "other"}], disks=amb)
    fs("up-fs-reuse-ambivalent-wipe", {}, [{"device": "$Dp2", "format": "ext4", "wipeFilesystem": True, "label": "x"}], disks=amb)
    fs("up-fs-reuse-ambivalent-vfat", {}, [{"device": "$Dp2", "format": "vfat"}], disks=amb)
    # mount_filesystem.go (positive and negative): disks, mount, files and umount stages
    fs("up-fs-mount-options", {"p6": {"fs": "btrfs"}}, [{"path": "/tmp0", "device": "$Dp6", "wipeFilesystem": False, "format": "btrfs",
                                                        "mountOptions": ["noexec", "subvolid=5"]}], stages="mount")
    fs("up-fs-mount-options-ext4", {}, [{"path": "/tmp0", "device": "$Dp6", "format": "ext4", "mountOptions": ["noexec", "ro"]}], stages="mount")
    fs("up-neg-fs-mount-invalidoptions", {}, [{"path": "/tmp0", "device": "$Dp6", "wipeFilesystem": False, "format": "ext4",
                                               "mountOptions": ["doesnotexist"]}], stages="mount")
    fs("up-neg-fs-mount-invalidoptions-btrfs", {"p6": {"fs": "btrfs"}}, [{"path": "/tmp0", "device": "$Dp6", "format": "btrfs",
                                                                       "mountOptions": ["subvolid=99"]}], stages="mount")
    # symlinks.go: the mount path is a symlink in the root
    fs("up-neg-fs-pathusessymlinks", {}, [{"format": "ext4", "path": "/tmp0", "device": "$Dp6"}], stages="mount",
       root=["ln -s / $ROOT/tmp0"])
    fs("up-neg-fs-pathusessymlinks-relative", {}, [{"format": "ext4", "path": "/a/b", "device": "$Dp6"}], stages="mount",
       root=["mkdir -p $ROOT/real && ln -s real $ROOT/a"])
    # regression/filesystem.go
    fs("up-fs-regression-uuids-ext4", {"p1": {"fs": "ext4", "fsuuid": U0}}, [{"path": "/tmp0", "device": "$Dp1", "format": "ext4", "uuid": U0}])
    fs("up-fs-regression-uuids-ext4-uppercase", {"p1": {"fs": "ext4", "fsuuid": U0}}, [{"device": "$Dp1", "format": "ext4", "uuid": U0.upper()}])
    fs("up-fs-regression-uuids-vfat", {"p1": {"fsuuid": V}}, [{"path": "/tmp0", "device": "$Dp1", "format": "vfat", "uuid": V.upper()}])
    fs("up-fs-regression-uuids-vfat-lower", {"p1": {"fsuuid": V}}, [{"device": "$Dp1", "format": "vfat", "uuid": V}])
    fs("up-fs-regression-uuids-vfat-dash", {"p1": {"fsuuid": V}}, [{"device": "$Dp1", "format": "vfat", "uuid": "2E24-EC82"}])
    fs("up-fs-regression-uuids-vfat-other", {"p1": {"fsuuid": V}}, [{"device": "$Dp1", "format": "vfat", "uuid": "12345678"}])
    fs("up-fs-regression-uuids-swap", {"p6": {"fs": "swap", "fsuuid": U0}}, [{"device": "$Dp6", "format": "swap", "uuid": U0.upper()}])
    fs("up-fs-regression-uuids-btrfs", {"p6": {"fs": "btrfs", "fsuuid": U0}}, [{"device": "$Dp6", "format": "btrfs", "uuid": U0.upper()}])
    fs("up-neg-fs-regression-ignoreswipe", {}, [{"device": "$Dp6", "format": "vfat", "path": "/tmp0", "wipeFilesystem": False}])
    fs("up-neg-fs-regression-ignoreswipe-xfs", {}, [{"device": "$Dp6", "format": "xfs", "wipeFilesystem": False}])
    fs("up-neg-fs-regression-ignoreswipe-swap", {}, [{"device": "$Dp6", "format": "swap"}])
    # negative/filesystems/creation.go: format none without wipeFilesystem over a filesystem
    fs("up-neg-fs-erase-invalidoptions", {"p1": {"fs": "ext4"}}, [{"device": "$Dp1", "format": "none", "path": "/tmp0", "wipeFilesystem": False}])
    fs("up-neg-fs-erase-invalidoptions-vfat", {}, [{"device": "$Dp1", "format": "none"}])
    fs("up-neg-fs-erase-invalidoptions-swap", {"p6": {"fs": "swap"}}, [{"device": "$Dp6", "format": "none"}])
    # no_device.go: a filesystem without a device (the config is invalid)
    fs("up-neg-fs-nodevice", {}, [{"format": "ext4", "path": "/tmp0"}])
    fs("up-neg-fs-nodevice-missing", {}, [{"device": "$Dp5", "format": "ext4"}])
    # more filesystem shapes over the base disk: labels and UUIDs against what is there
    fs("up-fs-more-vfat-label-case", {"p1": {"fslabel": "EFI"}}, [{"device": "$Dp1", "format": "vfat", "label": "efi"}])
    fs("up-fs-more-vfat-label-same", {"p1": {"fslabel": "EFI"}}, [{"device": "$Dp1", "format": "vfat", "label": "EFI"}])
    fs("up-fs-more-ext4-label-empty", {"p6": {"fslabel": "OEM"}}, [{"device": "$Dp6", "format": "ext4", "label": ""}])
    fs("up-fs-more-ext4-uuid-empty", {}, [{"device": "$Dp6", "format": "ext4", "uuid": ""}])
    fs("up-fs-more-ext4-label-long", {}, [{"device": "$Dp6", "format": "ext4", "label": "x" * 17, "wipeFilesystem": True}])
    fs("up-fs-more-xfs-label-long", {}, [{"device": "$Dp6", "format": "xfs", "label": "x" * 13, "wipeFilesystem": True,
                                          "options": ["--unsupported"]}])
    fs("up-fs-more-swap-reuse-label", {"p6": {"fs": "swap", "fslabel": "swap"}}, [{"device": "$Dp6", "format": "swap", "label": "swap"}])
    fs("up-fs-more-swap-other-label", {"p6": {"fs": "swap", "fslabel": "swap"}}, [{"device": "$Dp6", "format": "swap", "label": "SWAP"}])
    fs("up-fs-more-btrfs-reuse-label", {"p6": {"fs": "btrfs", "fslabel": "data"}}, [{"device": "$Dp6", "format": "btrfs", "label": "data"}])
    fs("up-fs-more-ext2-as-ext4", {"p6": {"fs": "ext2"}}, [{"device": "$Dp6", "format": "ext4"}])
    fs("up-fs-more-two-on-one", {}, [{"device": "$Dp6", "format": "ext4", "label": "a", "wipeFilesystem": True},
                                     {"device": "$Dp9", "format": "btrfs", "label": "b", "wipeFilesystem": True}])
    fs("up-fs-more-ext4-options-reuse", {}, [{"device": "$Dp6", "format": "ext4", "options": ["-b", "1024"]}])
    fs("up-fs-more-vfat-uuid-reuse-nolabel", {"p1": {"fsuuid": "ABCD1234"}}, [{"device": "$Dp1", "format": "vfat", "uuid": "abcd1234", "label": ""}])
    # partitions and filesystems together, on the base disk
    r.append(up("up-mixed-root-recreate-fs", [(base(), B)], {
        "disks": [D(P(number=9, label="ROOT", sizeMiB=0, wipePartitionEntry=True, typeGuid=RESIZE))],
        "filesystems": [{"device": "$Dp9", "format": "ext4", "label": "ROOT", "wipeFilesystem": True}]}, min_sectors=GR))
    r.append(up("up-mixed-root-recreate-fs-reuse", [(base(), B)], {
        "disks": [D(P(number=9, label="ROOT", sizeMiB=0, wipePartitionEntry=True, typeGuid=RESIZE))],
        "filesystems": [{"device": "$Dp9", "format": "ext4", "uuid": "00000009-0000-4000-8000-000000000000"}]}, min_sectors=GR))
    r.append(up("up-mixed-new-partition-fs", [(base(), B)], {
        "disks": [D(P(number=2, label="DATA", sizeMiB=0))],
        "filesystems": [{"device": "$Dp2", "format": "xfs", "label": "DATA"}]}, min_sectors=GR))
    r.append(up("up-mixed-deleted-partition-fs", [(base(), B)], {
        "disks": [D(P(number=6, shouldExist=False, wipePartitionEntry=True))],
        "filesystems": [{"device": "$Dp6", "format": "ext4"}]}))
    # more partition shapes
    r.append(up("up-partition-more-label-36", [([], U)], {"disks": [D(P(number=1, label="x" * 36, sizeMiB=8))]},
                min_sectors={"$D": usz([16384])}))
    r.append(up("up-partition-more-label-37", [([], U)], {"disks": [D(P(number=1, label="x" * 37, sizeMiB=8))]},
                min_sectors={"$D": usz([16384])}))
    r.append(up("up-partition-more-label-unicode", [([], U)], {"disks": [D(P(number=1, label="d\u00e9j\u00e0-\u00fc", sizeMiB=8))]},
                min_sectors={"$D": usz([16384])}))
    r.append(up("up-partition-more-start-beyond-end", [([], U)], {"disks": [D(P(number=1, startMiB=100, sizeMiB=8))]},
                min_sectors={"$D": usz([16384])}))
    r.append(up("up-partition-more-start-in-gap", [(gap_before, B)], {"disks": [D(P(number=2, startMiB=258, sizeMiB=0))]}))
    r.append(up("up-partition-more-start-overlaps", [(gap_before, B)], {"disks": [D(P(number=2, startMiB=130, sizeMiB=0))]}))
    r.append(up("up-partition-more-number0-in-gap", [(gap_before, B)], {"disks": [D(P(label="gap", sizeMiB=0))]}))
    r.append(up("up-partition-more-size-in-gap-toobig", [(gap_before, B)], {"disks": [D(P(number=2, startMiB=258, sizeMiB=33))]}))
    r.append(up("up-partition-more-typeguid-only-match", [(base(), B)], {"disks": [D(P(number=1, typeGuid=EFI.lower()))]}))
    r.append(up("up-partition-more-guid-mismatch", [(base(p1={"guid": G2}), B)], {"disks": [D(P(number=1, guid=G1))]}))
    r.append(up("up-partition-more-guid-case", [(base(p1={"guid": G2}), B)], {"disks": [D(P(number=1, guid=G2.lower()))]}))
    r.append(up("up-partition-more-guid-mismatch-wipe", [(base(p1={"guid": G2}), B)], {"disks": [D(P(number=1, guid=G1, wipePartitionEntry=True))]}))
    return r


BA = BASE_ALIGN
UA = UPSTREAM_ALIGN
# sizes of the expected outputs where they are larger than the inputs
GROWN = {"$D": 4096 + 262144 * 2 + 12943360 + 65536 + 33}
CX_DISKS = [
        ([{"n": 1, "label": "p1", "len": 131072, "type": "316f19f9-9e0f-431e-859e-ae6908dbe8ca",
           "guid": "3ED3993F-0016-422B-B134-09FCBA6F66EF"},
          {"n": 2, "label": "dont-delete", "len": 65536, "type": "F39C522B-9966-4429-A8F8-417CD5D83E5E",
           "guid": "26cc1e6a-39a2-4502-a957-28f8e0ac00e7"},
          {"n": 3, "label": "garbo-town", "len": 65536, "type": "9dfde6db-a308-497b-9f8c-55db12d4d9a1",
           "guid": "115ee54b-00bd-4afe-be9b-bf1912dec92d"},
          {"len": 131072},
          {"n": 4, "label": "more-junk", "len": 65536, "type": "ee378f79-6b7a-4f7a-8029-7a5736d12bbf",
           "guid": "5e89fa40-183c-4346-b2e1-2f10fa2190e1"},
          {"n": 5, "label": "dont-delete2", "len": 65536, "type": "9dd1a91a-a39a-4594-b431-60a7fb630bcb",
           "guid": "39baf7ef-cb3e-4343-8bfc-c2391b8b5607"},
          {"len": 131072}], UA),
        ([{"n": 1, "label": "p1", "len": 65536, "type": "316f19f9-9e0f-431e-859e-ae6908dbe8ca",
           "guid": "3ED3993F-0016-422B-B134-09FCBA6F66EF"},
          {"n": 2, "label": "to-replace", "len": 163840, "type": "c1ea8ad5-2663-44c8-859e-da7fa0c2c059",
           "guid": "bd5febf1-f8d3-4b55-9c16-678d4a98ea72"}], UA)]
CX_STORAGE = {"disks": [
            D(P(label="p1", number=1, startMiB=1, sizeMiB=32, typeGuid="316f19f9-9e0f-431e-859e-ae6908dbe8ca",
                guid="53f2e871-f468-437c-b90d-f3c6409df81a", wipePartitionEntry=True),
              P(label="dont-delete", number=2, sizeMiB=32),
              P(label="new-biggest", number=3, sizeMiB=0, startMiB=0, typeGuid="6050e8fc-1e31-473b-bcc0-714e32fcb09d",
                guid="f14984bc-6f08-4885-b668-526263469a00", wipePartitionEntry=True),
              P(number=4, shouldExist=False, wipePartitionEntry=True),
              P(number=9, shouldExist=False), wipeTable=False),
            D(P(label="p1", number=1, startMiB=1, sizeMiB=32, typeGuid="3a5cddf2-5a21-4913-a94d-156344d0f11d",
                guid="f7c8f4c2-f406-426d-8fa2-56f0f03f2062", wipePartitionEntry=True),
              P(number=2, shouldExist=False, wipePartitionEntry=True),
              P(label="new-auto2", number=0, sizeMiB=64, typeGuid="f6b5fb7e-4856-4254-8754-971dda7f250b",
                guid="9c235a9c-6d3c-42a3-adfb-b2188234c231", wipePartitionEntry=True),
              P(label="new-auto3", number=0, sizeMiB=96, typeGuid="31ce4b8c-6107-4c81-83f0-527770ef7e1f",
                guid="74e097ce-11c3-4f68-855c-4704f597f90d", wipePartitionEntry=True), dev="$E", wipeTable=False)]}
REST = _rest()
UPSTREAM_SCENARIOS = [
    # -- positive/partitions/complex-mb.go: everything at once on two disks
    up("up-complex", CX_DISKS, CX_STORAGE, min_sectors={"$E": usz([65536, 131072, 196608])}),
] + REST

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
    # The kernel's view of the partitions as the table now is: the reference drops the nodes
    # of partitions it changes and leaves their return to udev (there is none here), so the
    # filesystems on partitions it kept were not seen otherwise.
    subprocess.run(["partx", "-d", dev], capture_output=True)
    subprocess.run(["partx", "-a", dev], capture_output=True)
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
    """Runs a scenario with both implementations; returns (same, ref, got). size_mib: the
    size of the one disk $D in MiB, or a dict (see UPSTREAM_SCENARIOS) of several disks in
    sectors, the stages, and commands preparing the target root."""
    opts = size_mib if isinstance(size_mib, dict) else {"disks": [size_mib << 11]}
    sizes = opts["disks"]
    names = ["$" + "DEFG"[i] for i in range(len(sizes))]
    results = []
    text = json.dumps(storage)
    # UUIDs the config or the setup fixes are compared; random ones are not
    fixed = {u.upper() for u in re.findall(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27}|\b[0-9a-fA-F]{8}\b",
                                           text + " " + " ".join(setup))}
    fixed |= {"%08d-0000-4000-8000-000000000000" % n for n in range(1, 10)}
    fixed |= {f[:4].upper() + "-" + f[4:].upper() for f in fixed if len(f) == 8}
    for who in ("reference", "flint"):
        devs = []
        try:
            for i, sectors in enumerate(sizes):
                img = os.path.join(work, "disk%d.img" % i)
                with open(img, "wb") as f:
                    f.truncate(sectors * 512)
                devs.append(subprocess.run(["losetup", "-f", "--show", "-P", img], capture_output=True, text=True,
                                           check=True).stdout.strip())

            def subst(t):
                for n in range(1, 10):
                    t = t.replace("$P%d" % n, "%sp%d" % (devs[0], n))
                # longest first: /dev/loop1 is a prefix of /dev/loop10
                for v, d in sorted(zip(names, devs), key=lambda x: -len(x[1])):
                    t = t.replace(v, d)
                return t

            def unsubst(t):
                for v, d in sorted(zip(names, devs), key=lambda x: -len(x[1])):
                    t = t.replace(d, v)
                return t
            env = dict(os.environ, D=devs[0])
            root = os.path.join(work, "root-" + who)
            subprocess.run(["rm", "-rf", root])
            os.makedirs(root, exist_ok=True)
            for c in setup:
                sh(subst(c), env)
            for c in opts.get("root", []):
                sh(c.replace("$ROOT", root), env)
            subs = subst(text)
            cfg = os.path.join(work, "config.ign")
            with open(cfg, "w") as f:
                f.write('{"ignition":{"version":"3.3.0"},"storage":%s}' % subs)
            mount = opts.get("stages") == "mount"
            if who == "reference":
                stages = "fetch disks mount files umount" if mount else "fetch disks"
                p = subprocess.run([os.path.join(HERE, "run-reference.sh"), "--stages", stages, root, cfg],
                                   env=dict(os.environ, IGNITION=os.path.join(oracles, "flatcar", "ignition")),
                                   capture_output=True, text=True, timeout=300)
                if opts.get("skip_critical") and re.search(r"stage \w+ failed \(exit 0\)\s*$", p.stderr):
                    # the reference succeeded but logged a CRITICAL line run-reference.sh takes
                    # for a failure; upstream's test skips that check (SkipCriticalCheck)
                    p.returncode = 0
            else:
                # A state directory of its own: the GUIDs of partitions flint made in an
                # earlier scenario (fixed ones, from a config) would make the setup's
                # partitions of those GUIDs "made by flint" here, under the re-run rules.
                state = os.path.join(work, "state")
                subprocess.run(["rm", "-rf", state])
                cmd = [os.path.join(flint_bin, "flint"), "apply", "--root", root, "--state-dir", state, cfg]
                if mount:
                    # all stages, in a mount namespace of its own like the reference's
                    cmd = ["unshare", "-m", "--propagation", "private"] + cmd
                else:
                    cmd[2:2] = ["--stage", "disks"]
                p = subprocess.run(cmd, env=dict(os.environ, FLINT_DEVICE_TIMEOUT="5"), capture_output=True,
                                   text=True, timeout=300)
            if p.returncode == 0:
                lay = {}
                for v, d in zip(names, devs):
                    lay[v] = layout(d, fixed)
                lay = lay["$D"] if len(devs) == 1 else lay
            else:
                lay = {}
            results.append((p.returncode, unsubst(json.dumps(lay, indent=1, sort_keys=True)).encode(),
                            unsubst(p.stderr[-2000:]).encode()))
        finally:
            for i, d in enumerate(devs):
                subprocess.run(["partx", "-d", d], capture_output=True)
                subprocess.run(["losetup", "-d", d], capture_output=True)
            for i in range(len(sizes)):
                img = os.path.join(work, "disk%d.img" % i)
                if os.path.exists(img):
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
        if os.environ.get("STORAGE_SUITE") == "upstream":
            # upstream's blackbox storage scenarios and their variations only
            cases = list(UPSTREAM_SCENARIOS)
            if os.environ.get("STORAGE_ONLY"):
                cases = [c for c in cases if re.search(os.environ["STORAGE_ONLY"], c[0])]
        elif not a.generated_only:
            cases += list(UPSTREAM_SCENARIOS)
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
            if same and os.environ.get("STORAGE_KEEP"):
                # STORAGE_KEEP=1: the outputs of agreeing scenarios too, under same/
                d = os.path.join(out, "same", name)
                os.makedirs(d, exist_ok=True)
                for who, r in (("reference", ref), ("flint", got)):
                    with open(os.path.join(d, who + ".out"), "wb") as f:
                        f.write(b"exit %s\n--- layout\n" % str(r[0]).encode() + r[1] + b"\n--- stderr\n" + r[2])
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
    # Not where the config gives a partition of a wiped table its GUID: upstream draws
    # nothing anew there, so a kept table of other GUIDs is a real difference (upstream's
    # partition.create.wipetable is about exactly that).
    if any(p.get("guid") for d in storage.get("disks", []) if d.get("wipeTable")
           for p in d.get("partitions", [])):
        return None
    return deliberate.classify("storage", {"storage": storage}, ref, got)
