#!/usr/bin/env python3
"""Regenerates this corpus (as root): for every case, NNN-name/setup.sh (the base root of
../files plus the case's own lines) and config.ign are written, the root is built, the
reference (run-ignition.sh: Flatcar's Ignition, fetch then files stage) runs on it, and
../files/manifest.py of the result is kept as expected.manifest (or `exit N` and the
reference's last lines as expected.fail)."""
import json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.environ.get("RUN_IGNITION", "/work/shared/oracles/run-ignition.sh")
UNIT = "[Unit]\nDescription=corpus\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"

def v(ver, **kw):
    d = {"ignition": {"version": ver}}
    d.update(kw)
    return d

def f(path, src="data:,x", **kw):
    return dict(filesystem="root", path=path, contents={"source": src}, **kw)

CASES = [
    ("v23-files-dirs-links", "files, directories and links on root with owners from the target's databases",
     v("2.3.0", storage={"files": [f("/etc/hello", "data:,hello%0A", mode=420, user={"name": "daemon"}, group={"name": "staff"})],
                         "directories": [dict(filesystem="root", path="/var/lib/app", mode=488, user={"id": 1001})],
                         "links": [dict(filesystem="root", path="/etc/hello-link", target="/etc/hello", user={"name": "alice"}, group={"id": 0}),
                                   dict(filesystem="root", path="/etc/hello-hard", target="/etc/hello", hard=True)]}), ""),
    ("v21-mode-absent-is-zero", "2.1.0 files and directories without mode get mode 0",
     v("2.1.0", storage={"files": [f("/etc/zero")], "directories": [dict(filesystem="root", path="/var/zero")]}), ""),
    ("v20-owner-ids-and-mode", "2.0.0 file: owner ids default to root, no mode is 0",
     v("2.0.0", storage={"files": [f("/etc/v20", "data:,two%20oh", user={"id": 1001})]}), ""),
    ("v23-networkd", "networkd units and drop-ins become files under /etc/systemd/network",
     v("2.3.0", networkd={"units": [{"name": "00-eth0.network", "contents": "[Match]\nName=eth0\n[Network]\nDHCP=yes\n"},
                                    {"name": "10-br.netdev", "dropins": [{"name": "mtu.conf", "contents": "[NetDev]\nMTUBytes=9000\n"}]}]}), ""),
    ("v23-units", "units: enable, enabled false, mask, drop-ins",
     v("2.3.0", systemd={"units": [{"name": "a.service", "enable": True, "contents": UNIT},
                                   {"name": "b.service", "enabled": False, "contents": UNIT},
                                   {"name": "c.service", "mask": True},
                                   {"name": "d.service", "dropins": [{"name": "10-x.conf", "contents": "[Service]\nEnvironment=A=1\n"}]}]}), ""),
    ("v23-duplicate-units-merged", "units named twice are merged: contents, enable and drop-ins of both",
     v("2.3.0", systemd={"units": [{"name": "docker.service", "enable": True, "contents": UNIT},
                                   {"name": "docker.service", "dropins": [{"name": "10-a.conf", "contents": "[Service]\nA=1\n"}]},
                                   {"name": "docker.service", "dropins": [{"name": "10-a.conf", "contents": "[Service]\nA=2\n"}]}]}), ""),
    ("v23-append-existing", "append to an existing file keeps its contents",
     v("2.3.0", storage={"files": [f("/etc/motd", "data:,appended%0A", append=True)]}), "printf 'first\\n' > etc/motd\n"),
    ("v23-overwrite-by-default", "2.x files overwrite an existing file unless told otherwise",
     v("2.3.0", storage={"files": [f("/etc/existing", "data:,new", mode=384)]}), "printf 'old\\n' > etc/existing\nchown 1001 etc/existing\n"),
    ("v23-overwrite-false-existing", "overwrite false over an existing file fails",
     v("2.3.0", storage={"files": [f("/etc/existing", "data:,new", overwrite=False)]}), "printf 'old\\n' > etc/existing\n"),
    ("v23-no-contents", "a file without contents is created empty",
     v("2.3.0", storage={"files": [dict(filesystem="root", path="/etc/empty", mode=420)]}), ""),
    ("v23-special-mode-bits", "setuid, setgid and sticky bits are dropped as for 3.x before 3.6",
     v("2.3.0", storage={"files": [f("/opt/bin/suid", mode=2541)], "directories": [dict(filesystem="root", path="/srv/sticky", mode=1023)]}), ""),
    ("v22-users-groups", "users (with create object and user-level fields) and groups",
     v("2.2.0", passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3Nza core@x"], "create": {"uid": 1500, "groups": ["wheel"]}},
                                  {"name": "svc", "uid": 1600, "system": True, "noCreateHome": True, "shell": "/bin/false"}],
                        "groups": [{"name": "ops", "gid": 3000}]}), ""),
    ("v23-oem-filesystem-files", "files on the oem filesystem land under /oem",
     v("2.3.0", storage={"filesystems": [{"name": "oem", "mount": {"device": "/dev/disk/by-label/OEM", "format": "ext4"}}],
                         "files": [dict(filesystem="oem", path="/grub.cfg", mode=420, contents={"source": "data:,set%20linux_append%3D%22x%22%0A"})]}), ""),
    ("v23-named-filesystem-files", "files on a named filesystem land under /tmp/NAME-ignN",
     v("2.3.0", storage={"filesystems": [{"name": "data", "mount": {"device": "/dev/null-data", "format": "ext4"}}],
                         "files": [dict(filesystem="data", path="/etc/conf", mode=420, contents={"source": "data:,d"})]}), ""),
    ("v1-files-units", "spec 1: a file of the first filesystem, a unit with a drop-in, networkd",
     {"ignitionVersion": 1,
      "storage": {"filesystems": [{"device": "/dev/null-v1", "format": "ext4", "files": [{"path": "/x", "contents": "hello\n", "mode": 420, "uid": 1001}]}]},
      "systemd": {"units": [{"name": "v1.service", "enable": True, "contents": UNIT, "dropins": [{"name": "d.conf", "contents": "[Service]\n"}]}]},
      "networkd": {"units": [{"name": "v1.network", "contents": "[Match]\nName=e*\n"}]}}, ""),
    ("v23-duplicate-path-fails", "two entries at one path are refused before anything is written",
     v("2.3.0", storage={"files": [f("/etc/dup")], "directories": [dict(filesystem="root", path="/etc/dup")]}), ""),
]

def main():
    base = open(os.path.join(HERE, "base-setup.sh")).read()
    only = set(sys.argv[1:])
    for n, (name, desc, cfg, extra) in enumerate(CASES, 1):
        if only and name not in only:
            continue
        d = os.path.join(HERE, f"{n:03d}-{name}")
        os.makedirs(d, exist_ok=True)
        for x in ("expected.manifest", "expected.fail"):
            if os.path.exists(os.path.join(d, x)):
                os.remove(os.path.join(d, x))
        open(os.path.join(d, "setup.sh"), "w").write(base + extra + f"# case: {desc}\n")
        open(os.path.join(d, "config.ign"), "w").write(json.dumps(cfg, indent=2) + "\n")
        tmp = tempfile.mkdtemp(); os.chmod(tmp, 0o755)
        root = os.path.join(tmp, "root"); os.mkdir(root); os.chmod(root, 0o755)
        subprocess.run(["sh", os.path.join(d, "setup.sh")], cwd=root, check=True)
        r = subprocess.run([REF, root, os.path.join(d, "config.ign")], capture_output=True, text=True)
        if r.returncode == 0:
            m = subprocess.run(["python3", os.path.join(HERE, "..", "files", "manifest.py"), root],
                               capture_output=True, text=True, check=True)
            open(os.path.join(d, "expected.manifest"), "w").write(m.stdout)
        else:
            tail = [l for l in r.stderr.splitlines() if "CRITICAL" in l][-3:]
            open(os.path.join(d, "expected.fail"), "w").write(f"exit {r.returncode}\n" + "\n".join(tail) + "\n")
        shutil.rmtree(tmp)
        print(f"{n:03d}-{name}: {'tree' if r.returncode == 0 else 'fail'}")

if __name__ == "__main__":
    main()
