#!/usr/bin/env python3
"""Regenerates this corpus: every case of CASES is written to NNN-name/config.ign, run
through Flatcar's Ignition fetch stage (render-reference.sh) and its result kept as
expected.ign (the rendered config, verbatim) or expected.fail (`exit 1` and the reference's
error lines). Needs the reference binary; the tests only read the files."""
import json, os, subprocess, sys, urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))

def v(ver, **rest):
    d = {"ignition": {"version": ver}}
    for k, val in rest.items():
        if k == "ign":
            d["ignition"].update(val)
        else:
            d[k] = val
    return d

def data(obj):
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return "data:," + urllib.parse.quote(text, safe="")

MNT = lambda dev, fmt, **kw: dict(device=dev, format=fmt, **kw)
UNIT_OK = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
H512 = "sha512-543f39af1ae7a2382ed869cbd1ee1ac598a88eb4e213cd64487c54b5c37722c6207ee6db4fa7e2ed53064259a44115c6da7bbc8c068378bb52a25e7088eeebd6"  # of "#!/bin/sh\n"

CASES = [
    ("v23-minimal", v("2.3.0")),
    ("v20-minimal", v("2.0.0")),
    ("v21-minimal", v("2.1.0")),
    ("v22-minimal", v("2.2.0")),
    ("v24-minimal", v("2.4.0")),
    ("v1-minimal", {"ignitionVersion": 1}),
    ("v24-experimental-refused", v("2.4.0-experimental")),
    ("v25-refused", v("2.5.0")),
    ("ignitionversion-2-refused", {"ignitionVersion": 2}),
    ("v23-files-root", v("2.3.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/hostname", "mode": 420, "contents": {"source": "data:,flatcar"}},
        {"filesystem": "root", "path": "/opt/bin/x", "mode": 493, "user": {"name": "core"}, "group": {"id": 500},
         "contents": {"source": "data:;base64,IyEvYmluL3NoCg==", "verification": {"hash": H512}}},
        {"filesystem": "root", "path": "/etc/empty"}]})),
    ("v23-file-append-overwrite", v("2.3.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/a", "append": True, "mode": 420, "contents": {"source": "data:,more"}},
        {"filesystem": "root", "path": "/etc/b", "overwrite": False, "contents": {"source": "data:,keep"}},
        {"filesystem": "root", "path": "/etc/c", "contents": {"source": "data:,x", "compression": ""}}]})),
    ("v22-append-and-overwrite-invalid", v("2.2.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/a", "append": True, "overwrite": True, "contents": {"source": "data:,x"}}]})),
    ("v21-mode-absent-is-zero", v("2.1.0", storage={
        "files": [{"filesystem": "root", "path": "/etc/a", "contents": {"source": "data:,x"}}],
        "directories": [{"filesystem": "root", "path": "/var/d"}],
        "links": [{"filesystem": "root", "path": "/etc/l", "target": "/etc/a"}]})),
    ("v20-file-owner-ids", v("2.0.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/a", "mode": 384, "user": {"id": 500}, "contents": {"source": "data:,x%20y"}}]})),
    ("v20-user-create", v("2.0.0", passwd={"users": [
        {"name": "core", "passwordHash": "$6$x", "sshAuthorizedKeys": ["ssh-ed25519 AAAA k"],
         "create": {"uid": 1000, "gecos": "Core", "homeDir": "/home/core", "groups": ["sudo", "docker"], "shell": "/bin/bash"}}],
        "groups": [{"name": "g", "gid": 1500, "passwordHash": "h", "system": True}]})),
    ("v21-user-fields", v("2.1.0", passwd={"users": [
        {"name": "alice", "uid": 1001, "gecos": "Alice", "homeDir": "/home/a", "noCreateHome": True, "primaryGroup": "users",
         "groups": ["wheel"], "noUserGroup": True, "noLogInit": True, "shell": "/bin/zsh", "system": True,
         "passwordHash": "", "sshAuthorizedKeys": ["k1", "k2"]}]})),
    ("v21-user-create-and-fields-invalid", v("2.1.0", passwd={"users": [
        {"name": "bob", "shell": "/bin/sh", "create": {"uid": 5}}]})),
    ("v23-user-create-deprecated-ok", v("2.3.0", passwd={"users": [
        {"name": "carl", "create": {"uid": 1002, "noCreateHome": True, "system": True}}]})),
    ("v23-networkd", v("2.3.0", networkd={"units": [
        {"name": "00-eth0.network", "contents": "[Match]\nName=eth0\n\n[Network]\nDHCP=yes\nAddress=10.0.0.2/24 # x?&=+$,;:@~\n"},
        {"name": "10-bond.netdev", "dropins": [{"name": "mtu.conf", "contents": "[NetDev]\nMTUBytes=9000\n"}]}]})),
    ("v22-networkd-unit-and-dropins", v("2.2.0", networkd={"units": [
        {"name": "br0.network", "contents": "[Match]\nName=br0\n", "dropins": [
            {"name": "a.conf", "contents": "[Network]\nDNS=1.1.1.1\n"}, {"name": "b.conf", "contents": ""}]}]})),
    ("v21-networkd-bad-extension", v("2.1.0", networkd={"units": [{"name": "eth0.conf", "contents": "[Match]\n"}]})),
    ("v23-units", v("2.3.0", systemd={"units": [
        {"name": "a.service", "enable": True, "contents": UNIT_OK},
        {"name": "b.service", "enabled": False},
        {"name": "c.service", "mask": True},
        {"name": "d.service", "dropins": [{"name": "10-x.conf", "contents": "[Service]\nEnvironment=A=1\n"}]},
        {"name": "e.service", "enable": True, "enabled": False, "contents": UNIT_OK}]})),
    ("v23-duplicate-units-merged", v("2.3.0", systemd={"units": [
        {"name": "docker.service", "enable": True},
        {"name": "docker.service", "dropins": [{"name": "10-a.conf", "contents": "[Service]\nA=1\n"}]},
        {"name": "docker.service", "dropins": [{"name": "10-a.conf", "contents": "[Service]\nA=2\n"}, {"name": "20-b.conf", "contents": "[Service]\nB=1\n"}]},
        {"name": "other.service", "mask": True}]})),
    ("v22-duplicate-units-contents-last-wins", v("2.2.0", systemd={"units": [
        {"name": "x.service", "contents": "[Service]\nExecStart=/bin/a\n"},
        {"name": "x.service", "contents": "[Service]\nExecStart=/bin/b\n", "mask": True}]})),
    ("v23-duplicate-dropin-refused", v("2.3.0", systemd={"units": [
        {"name": "x.service", "dropins": [{"name": "a.conf", "contents": "[Unit]\n"}, {"name": "a.conf", "contents": "[Service]\n"}]}]})),
    ("v23-unit-bad-extension", v("2.3.0", systemd={"units": [{"name": "x.unit", "contents": "[Unit]\n"}]})),
    ("v23-unit-bad-contents", v("2.3.0", systemd={"units": [{"name": "x.service", "contents": "[Unit\nA=b\n"}]})),
    ("v23-filesystems-named", v("2.3.0", storage={
        "filesystems": [{"name": "data", "mount": MNT("/dev/sdb1", "ext4", label="DATA", options=["-E", "lazy_itable_init=0"])},
                        {"name": "var", "mount": MNT("/dev/sdc", "xfs", wipeFilesystem=True, uuid="0b0d4d0b-1b2b-4b4b-8b8b-0b0b0b0b0b0b")},
                        {"mount": MNT("/dev/sdd", "btrfs")}],
        "files": [{"filesystem": "data", "path": "/a/b", "contents": {"source": "data:,x"}, "mode": 420}],
        "directories": [{"filesystem": "var", "path": "/lib/x", "mode": 493}],
        "links": [{"filesystem": "data", "path": "/l", "target": "/a/b", "hard": False}]})),
    ("v23-oem-filesystem", v("2.3.0", storage={
        "filesystems": [{"name": "oem", "mount": MNT("/dev/disk/by-label/OEM", "ext4")}],
        "files": [{"filesystem": "oem", "path": "/grub.cfg", "mode": 420, "contents": {"source": "data:,set%20linux_append%3D%22x%22"}}]})),
    ("v23-OEM-uppercase-filesystem", v("2.3.0", storage={
        "filesystems": [{"name": "OEM", "mount": MNT("/dev/disk/by-label/OEM", "ext4")}],
        "files": [{"filesystem": "OEM", "path": "/x", "contents": {"source": "data:,x"}}]})),
    ("v23-oem-wiped-keeps-format", v("2.3.0", storage={
        "filesystems": [{"name": "oem", "mount": MNT("/dev/disk/by-label/OEM", "ext4", wipeFilesystem=True, label="OEM")}]})),
    ("v21-create-forced", v("2.1.0", storage={
        "filesystems": [{"name": "data", "mount": MNT("/dev/sdb", "ext4", create={"force": True, "options": ["-L", "DATA"]})}]})),
    ("v21-create-without-force-refused", v("2.1.0", storage={
        "filesystems": [{"name": "data", "mount": MNT("/dev/sdb", "ext4", create={"options": ["-L", "DATA"]})}]})),
    ("v23-filesystem-path-refused", v("2.3.0", storage={"filesystems": [{"name": "x", "path": "/x"}]})),
    ("v23-root-filesystem-dropped", v("2.3.0", storage={
        "filesystems": [{"name": "root", "mount": MNT("/dev/sda9", "ext4")}],
        "files": [{"filesystem": "root", "path": "/etc/x", "contents": {"source": "data:,x"}}]})),
    ("v23-unknown-filesystem-kept-path", v("2.3.0", storage={
        "files": [{"filesystem": "elsewhere", "path": "/etc/x", "contents": {"source": "data:,x"}}]})),
    ("v23-duplicate-paths-refused", v("2.3.0", storage={
        "files": [{"filesystem": "root", "path": "/etc/x", "contents": {"source": "data:,x"}}],
        "directories": [{"filesystem": "root", "path": "/etc/x/"}]})),
    ("v23-path-below-own-link-refused", v("2.3.0", storage={
        "links": [{"filesystem": "root", "path": "/opt/l", "target": "/var"}],
        "files": [{"filesystem": "root", "path": "/opt/l/f", "contents": {"source": "data:,x"}}]})),
    ("v23-networkd-collides-with-file", v("2.3.0",
        storage={"files": [{"filesystem": "root", "path": "/etc/systemd/network/a.network", "contents": {"source": "data:,x"}}]},
        networkd={"units": [{"name": "a.network", "contents": "[Match]\n"}]})),
    ("v23-disks-mib", v("2.3.0", storage={"disks": [{"device": "/dev/sdb", "wipeTable": True, "partitions": [
        {"label": "ROOT", "number": 1, "sizeMiB": 1024, "startMiB": 0, "typeGuid": "4f68bce3-e8cd-4db1-96e7-fbcaf984b709",
         "guid": "8a5f6b7c-1d2e-4f3a-9b8c-7d6e5f4a3b2c", "wipePartitionEntry": True},
        {"number": 2, "shouldExist": False}]}]})),
    ("v23-disk-sectors-refused", v("2.3.0", storage={"disks": [{"device": "/dev/sdb", "partitions": [
        {"label": "a", "number": 1, "size": 2048, "start": 2048}]}]})),
    ("v22-partitions-refused", v("2.2.0", storage={"disks": [{"device": "/dev/sdb", "partitions": [{"label": "a", "number": 1}]}]})),
    ("v22-disk-without-partitions", v("2.2.0", storage={"disks": [{"device": "/dev/sdb", "wipeTable": True}]})),
    ("v22-raid", v("2.2.0", storage={"raid": [
        {"name": "md0", "level": "raid1", "devices": ["/dev/sdb1", "/dev/sdc1"], "spares": 1, "options": ["--metadata=1.2"]}]})),
    ("v23-raid-bad-level", v("2.3.0", storage={"raid": [{"name": "md0", "level": "raid7", "devices": ["/dev/sdb"]}]})),
    ("v22-security-timeouts", v("2.2.0", ign={
        "timeouts": {"httpResponseHeaders": 20, "httpTotal": 600},
        "security": {"tls": {"certificateAuthorities": [{"source": "data:,-----BEGIN%20CERTIFICATE-----%0A"}]}}})),
    ("v24-proxy-headers", v("2.4.0", ign={"proxy": {"httpProxy": "http://proxy:3128", "httpsProxy": "http://proxy:3129", "noProxy": ["localhost", ".local"]}},
        storage={"files": [{"filesystem": "root", "path": "/etc/x", "mode": 420,
                            "contents": {"source": "data:,x", "httpHeaders": []}}]})),
    ("v24-headers-on-data-url-invalid", v("2.4.0", storage={"files": [{"filesystem": "root", "path": "/etc/x",
        "contents": {"source": "data:,x", "httpHeaders": [{"name": "A", "value": "b"}]}}]})),
    ("v23-append-child-2x", v("2.3.0", ign={"config": {"append": [{"source": data(v("2.2.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/child", "mode": 420, "contents": {"source": "data:,child"}}]}))}]}},
        storage={"files": [{"filesystem": "root", "path": "/etc/parent", "mode": 420, "contents": {"source": "data:,parent"}}]})),
    ("v23-append-child-3x", v("2.3.0", ign={"config": {"append": [{"source": data({"ignition": {"version": "3.3.0"},
        "storage": {"files": [{"path": "/etc/child3", "contents": {"source": "data:,c3"}}]}})}]}},
        systemd={"units": [{"name": "p.service", "mask": True}]})),
    ("v22-replace-child-2x", v("2.2.0", ign={"config": {"replace": {"source": data(v("2.1.0", storage={"files": [
        {"filesystem": "root", "path": "/etc/replaced", "mode": 384, "contents": {"source": "data:,r"}}]}))}}},
        storage={"files": [{"filesystem": "root", "path": "/etc/dropped", "contents": {"source": "data:,x"}}]})),
    ("v23-two-append-children-counters", v("2.3.0", ign={"config": {"append": [
        {"source": data(v("2.3.0", storage={"filesystems": [{"name": "b", "mount": MNT("/dev/sdc", "ext4")}],
                                            "files": [{"filesystem": "b", "path": "/f", "contents": {"source": "data:,b"}}]}))}]}},
        storage={"filesystems": [{"name": "a", "mount": MNT("/dev/sdb", "ext4")}]})),
    ("v23-type-error", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "/etc/x", "mode": "0644"}]})),
    ("v23-relative-path-invalid", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "etc/x"}]})),
    ("v23-no-filesystem-invalid", v("2.3.0", storage={"files": [{"path": "/etc/x"}]})),
    ("v23-bad-hash-invalid", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "/etc/x",
        "contents": {"source": "data:,x", "verification": {"hash": "sha256-" + "0" * 64}}}]})),
    ("v20-swap-format-invalid", v("2.0.0", storage={"filesystems": [{"name": "s", "mount": MNT("/dev/sdb", "swap")}]})),
    ("v21-swap-format-ok", v("2.1.0", storage={"filesystems": [{"name": "s", "mount": MNT("/dev/sdb", "swap", label="SWAP")}]})),
    ("v23-mode-special-bits", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "/opt/suid", "mode": 2541, "contents": {"source": "data:,x"}}],
        "directories": [{"filesystem": "root", "path": "/tmp/sticky", "mode": 1023}]})),
    ("v23-unused-key-ok", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "/etc/x", "bogus": 1, "contents": {"source": "data:,x"}}]})),
    ("v20-key-of-newer-version-ignored", v("2.0.0", storage={"files": [{"filesystem": "root", "path": "/etc/x", "overwrite": False,
        "contents": {"source": "data:,x"}}], "directories": [{"filesystem": "root", "path": "/d"}]})),
    ("v1-files-units", {"ignitionVersion": 1,
        "storage": {"filesystems": [{"device": "/dev/sdb", "format": "ext4", "create": {"force": True, "options": ["-L", "X"]},
                                     "files": [{"path": "/x", "contents": "hello world\n", "mode": 420, "uid": 5, "gid": 6}]}]},
        "systemd": {"units": [{"name": "a.service", "enable": True, "contents": UNIT_OK,
                               "dropins": [{"name": "d.conf", "contents": "[Service]\n"}]}]},
        "networkd": {"units": [{"name": "e.network", "contents": "[Match]\nName=e*\n"}]},
        "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k"], "create": {"uid": 1000}}],
                   "groups": [{"name": "grp", "gid": 2000}]}}),
    ("v1-create-without-force-refused", {"ignitionVersion": 1,
        "storage": {"filesystems": [{"device": "/dev/sdb", "format": "ext4", "create": {}}]}}),
    ("v1-partitions-refused", {"ignitionVersion": 1,
        "storage": {"disks": [{"device": "/dev/sdb", "partitions": [{"label": "a", "number": 1, "size": 0, "start": 0}]}]}}),
    ("v23-data-url-fragment-invalid", v("2.3.0", storage={"files": [{"filesystem": "root", "path": "/etc/x",
        "contents": {"source": "data:,x#y"}}]})),
]

def main():
    only = set(sys.argv[1:])
    for n, (name, cfg) in enumerate(CASES, 1):
        d = os.path.join(HERE, f"{n:03d}-{name}")
        if only and name not in only:
            continue
        os.makedirs(d, exist_ok=True)
        for f in ("expected.ign", "expected.fail"):
            if os.path.exists(os.path.join(d, f)):
                os.remove(os.path.join(d, f))
        with open(os.path.join(d, "config.ign"), "w") as fh:
            fh.write(json.dumps(cfg) + "\n")
        r = subprocess.run([os.path.join(HERE, "render-reference.sh"), os.path.join(d, "config.ign")],
                           capture_output=True, text=True)
        if r.returncode == 0:
            open(os.path.join(d, "expected.ign"), "w").write(r.stdout)
        else:
            open(os.path.join(d, "expected.fail"), "w").write("exit 1\n" + r.stdout)
        print(f"{n:03d}-{name}: {'ok' if r.returncode == 0 else 'fail'}")

if __name__ == "__main__":
    main()
