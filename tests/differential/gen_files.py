"""Random files-stage scenarios: a starting root (as a setup.sh, the format of
conformance/files) and a valid Ignition config acting on it.

The root always holds the corpus's base (users root, daemon=4242, alice=1001, nobody; groups
wheel, staff, users, alice, daemon, nogroup). On top come, at random: directories and files
with odd modes and owners, symbolic links inside the root (relative, absolute, `..` past the
root, dangling, to directories), an existing `.ssh`, units with their `wants` links, units
shipped in /usr/lib, masks, an existing preset file. The config then writes files,
directories, links, units, drop-ins, presets, users and groups over the same few paths, so
that entries meet what is there.
"""
import base64
import hashlib
import json
import random
import shlex
import urllib.parse

BASE = r"""#!/bin/sh
# Creates the starting target root in the current directory (an empty dir).
set -e
umask 022
mkdir -p etc home/alice
cat > etc/passwd <<'EOT'
root:x:0:0:root:/root:/bin/bash
daemon:x:4242:4242:daemon:/usr/sbin:/usr/sbin/nologin
alice:x:1001:1001:Alice:/home/alice:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOT
cat > etc/group <<'EOT'
root:x:0:
wheel:x:10:
staff:x:50:alice
users:x:100:
alice:x:1001:
daemon:x:4242:
nogroup:x:65534:
EOT
cat > etc/shadow <<'EOT'
root:*:19000:0:99999:7:::
daemon:*:19000:0:99999:7:::
alice:!:19000:0:99999:7:::
nobody:*:19000:0:99999:7:::
EOT
cat > etc/gshadow <<'EOT'
root:*::
wheel:*::
staff:*::alice
users:*::
alice:!::
daemon:*::
nogroup:*::
EOT
chmod 0640 etc/shadow etc/gshadow
chown 1001:1001 home/alice
chmod 0700 home/alice
"""

# Files served on 127.0.0.1 by the campaign (conformance/files/_http), under the URLs a user
# may write for them: another letter case in the scheme, a query, a fragment, an escaped path.
HTTP_PORT = 18931
_H = "http://127.0.0.1:%d/" % HTTP_PORT
HTTP = {_H + "hello.txt": b"hello over http\n", _H + "tail.txt": b"appended over http\n",
        _H + "hello.txt?x=1": b"hello over http\n", _H + "tail.txt#part": b"appended over http\n",
        _H + "hell%6F.txt": b"hello over http\n",
        "HTTP://127.0.0.1:%d/tail.txt" % HTTP_PORT: b"appended over http\n"}
HTTP_GZ = _H + "hello.txt.gz"
HTTP_GZ_BYTES = open(__import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..",
                     "conformance", "files", "_http", "hello.txt.gz"), "rb").read()

UNIT_INSTALL = "[Unit]\nDescription=u\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
UNIT_STATIC = "[Unit]\nDescription=s\n[Service]\nExecStart=/bin/true\n"
UNIT_TEMPLATE = "[Service]\nExecStart=/bin/echo %i\n[Install]\nWantedBy=multi-user.target\n"

FILE_PATHS = ["/etc/a", "/etc/a/b", "/etc/b", "/var/x", "/var/x/y", "/opt/o", "/home/alice/f",
              "/home/alice/.ssh/config", "/lnk/f", "/lnk", "/rel/f", "/abs/g", "/up/h", "/srv/s",
              "/etc/hostname", "/dir/sub/f", "/home/bob/f", "/etc/systemd/system/x.conf",
              "/home/alice/.ssh", "/dangle/f", "/etc/ssh/sshd_config.d/10.conf",
              # paths the units step changes after the storage entries
              "/etc/systemd/system-preset/20-ignition.preset", "/etc/systemd/system/m.service",
              "/etc/systemd/system/a.service"]
OWNERS = [None, None, None, {"id": 1001}, {"name": "alice"}, {"name": "daemon"}, {"id": 0},
          {"id": 4242}, {"name": "staff"}, {"name": "bob"}, {"name": "root"}, {"id": 2000}]
GOWNERS = [None, None, None, {"id": 50}, {"name": "staff"}, {"name": "daemon"}, {"name": "users"},
           {"id": 0}, {"name": "newgrp"}, {"name": "wheel"}]
MODES = [None, None, 0o644, 0o600, 0o755, 0o700, 0o777, 0o4755, 0o2775, 0o1777, 0o640, 0]
UNITS = ["a.service", "b.service", "c@x.service", "c@y.service", "c@.service", "d.socket",
         "e.timer", "static.service", "vendor.service", "m.service", "f.target"]
# Where the units step writes, for storage entries to meet (seeds from 1850 on).
UNIT_PATHS = ["/etc/systemd/system/a.service.d", "/etc/systemd/system/b.service.d/10-a.conf",
              "/etc/systemd/system", "/etc/systemd/system-preset", "/etc/systemd",
              "/etc/systemd/system/multi-user.target.wants", "/srv/units", "/srv/units/a.service"]
SETUP_DIRS = ["etc/a", "var/x", "opt", "home/alice/.ssh", "dir", "srv", "etc/ssh/sshd_config.d",
              "home/bob", "home/alice/.ssh/authorized_keys.d"]


# The data URLs the configs use, with the bytes they hold.
DATA = {"data:,hello": b"hello", "data:,": b"", "data:;base64,AAEC": b"\x00\x01\x02",
        "data:,line%0A": b"line\n", "data:,old%0A": b"old\n", "data:,%E2%9C%93": "\u2713".encode()}


class FilesGen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        # Seeds from 1850 on also put odd things where the units step writes (directories
        # at unit and drop-in paths, a file at a drop-in directory, /etc/systemd/system
        # through a link) and storage entries there; earlier seeds give what they gave.
        self.units_paths = seed >= 1850

    def p(self, x):
        return self.r.random() < x

    def pick(self, xs):
        return self.r.choice(xs)

    # --- the root ---
    def setup(self):
        sh = [BASE.rstrip("\n"), "# generated scenario"]
        made = set()
        for d in self.r.sample(SETUP_DIRS, self.r.randint(0, 4)):
            mode = self.pick(["0755", "0700", "0777", "0750", "0711"])
            own = self.pick(["0:0", "1001:1001", "4242:50", "0:0"])
            sh.append(f"mkdir -p {d} && chmod {mode} {d} && chown {own} {d}")
            made.add(d)
        for f in self.r.sample(["etc/a/b", "etc/b", "var/x/y", "etc/hostname", "opt/o", "srv/s",
                                "home/alice/f", "home/alice/.ssh/authorized_keys"], self.r.randint(0, 3)):
            parent = f.rsplit("/", 1)[0]
            mode = self.pick(["0644", "0600", "0755", "0640"])
            own = self.pick(["0:0", "1001:1001", "4242:4242"])
            data = self.pick(["old\n", "", "old", "a\nb\n"])
            sh.append(f"mkdir -p {parent} && printf %s {shlex.quote(data)} > {f} && chmod {mode} {f} && chown {own} {f}")
        links = [("lnk", "etc"), ("lnk", "/etc"), ("rel", "var"), ("abs", "/opt"), ("up", "../../.."),
                 ("dangle", "/nowhere"), ("etc/l", "a"), ("home/alice/.ssh", "/srv"),
                 ("var/x", "../opt"), ("dir", "/etc/a"),
                 # A keys file through a link inside the root; `..` climbing over a link in a
                 # target (by its text); a record of an earlier run that leads nowhere.
                 ("home/alice/.ssh/authorized_keys.d/ignition", "../../../../srv/keys"),
                 ("etc/back", "l/.."), ("srv/up", "../var/x/.."),
                 ("etc/.ignition-result.json", "/nowhere-record")]
        for name, target in self.r.sample(links, self.r.randint(0, 3)):
            parent = name.rsplit("/", 1)[0] if "/" in name else "."
            sh.append(f"mkdir -p {parent} && rm -rf {name} && ln -s {shlex.quote(target)} {name}")
            if self.p(0.3):
                sh.append(f"chown -h {self.pick(['1001:1001', '4242:50'])} {name}")
        if self.p(0.5):
            sh.append("mkdir -p etc/systemd/system usr/lib/systemd/system")
            for u in self.r.sample(["a.service", "b.service", "static.service", "c@.service", "d.socket"],
                                   self.r.randint(0, 3)):
                body = UNIT_STATIC if u == "static.service" else (UNIT_TEMPLATE if "@" in u else UNIT_INSTALL)
                if u == "d.socket":
                    body = "[Socket]\nListenStream=1\n[Install]\nWantedBy=sockets.target\n"
                where = self.pick(["etc/systemd/system", "usr/lib/systemd/system"])
                sh.append(f"printf %s {shlex.quote(body)} > {where}/{u}")
                if self.p(0.6) and "@" not in u and u != "static.service":
                    tgt = "sockets.target" if u == "d.socket" else "multi-user.target"
                    sh.append(f"mkdir -p etc/systemd/system/{tgt}.wants && ln -sf /{where}/{u} "
                              f"etc/systemd/system/{tgt}.wants/{u}")
                if "@" in u and self.p(0.5):
                    sh.append("mkdir -p etc/systemd/system/multi-user.target.wants && ln -sf "
                              f"/{where}/{u} etc/systemd/system/multi-user.target.wants/c@x.service")
            if self.p(0.3):
                sh.append("printf '[Service]\\nExecStart=/bin/true\\n[Install]\\nWantedBy=multi-user.target\\n' "
                          "> usr/lib/systemd/system/vendor.service")
            if self.p(0.2):
                sh.append("ln -sf /dev/null etc/systemd/system/m.service")
        if self.units_paths and self.p(0.3):
            odd = [("mkdir -p etc/systemd/system/a.service/sub", None),
                   ("mkdir -p etc/systemd/system/b.service", None),
                   ("mkdir -p etc/systemd/system/a.service.d/10-a.conf", None),
                   ("mkdir -p etc/systemd/system && printf x > etc/systemd/system/b.service.d", None),
                   ("mkdir -p srv/units etc/systemd && rm -rf etc/systemd/system && "
                    "ln -s ../../srv/units etc/systemd/system", None),
                   ("mkdir -p etc/systemd && rm -rf etc/systemd/system && ln -s /srv/units etc/systemd/system",
                    None),
                   ("mkdir -p etc/systemd/system && ln -sfn /srv etc/systemd/system/a.service", None),
                   ("mkdir -p etc/systemd/system && ln -sfn ../../../etc/hostname etc/systemd/system/b.service",
                    None),
                   ("mkdir -p etc/systemd/system && printf x > etc/systemd/system/multi-user.target.wants", None),
                   ("mkdir -p etc/systemd/system-preset/20-ignition.preset", None)]
            # (one may stand where another wants to go: then it is left out)
            for cmd, _ in self.r.sample(odd, self.r.randint(1, 2)):
                sh.append("{ %s; } 2>/dev/null || true" % cmd)
        if self.p(0.25):
            text = self.pick(["enable x.service\n", "disable a.service\n", "enable a.service\n", "# c\n", ""])
            sh.append("mkdir -p etc/systemd/system-preset && printf %s "
                      f"{shlex.quote(text)} > etc/systemd/system-preset/20-ignition.preset")
            if self.p(0.3):
                sh.append("chmod 0600 etc/systemd/system-preset/20-ignition.preset")
        if self.p(0.15):
            sh.append("echo 'bob:x:1002:1002::/home/bob:/bin/sh' >> etc/passwd && "
                      "echo 'bob:x:1002:' >> etc/group && echo 'bob:!:19000:0:99999:7:::' >> etc/shadow && "
                      "echo 'bob:!::' >> etc/gshadow")
        return "\n".join(sh) + "\n"

    # --- the config ---
    def data_url(self):
        return self.pick(list(DATA))

    def source(self):
        """A data URL, or at times a file served over HTTP (in the spellings a user may
        write); the bytes it holds."""
        if self.p(0.15):
            url = self.pick(list(HTTP))
            return url, HTTP[url]
        url = self.data_url()
        return url, DATA[url]

    def owner_fields(self, d):
        u = self.pick(OWNERS)
        g = self.pick(GOWNERS)
        if u:
            d["user"] = u
        if g:
            d["group"] = g

    def verification(self, res, data):
        """A hash of the resource's bytes, right or wrong, at times (3.x: sha512; sha256 from
        3.2)."""
        if self.p(0.1):
            algo = self.pick(["sha512", "sha256"]) if self.version >= "3.2.0" else "sha512"
            digest = getattr(hashlib, algo)(data).hexdigest()
            if self.p(0.3):
                digest = digest[::-1]
            res["verification"] = {"hash": "%s-%s" % (algo, digest)}

    def paths(self, pool):
        if self.units_paths:
            return pool + UNIT_PATHS
        return pool

    def file(self, used):
        f = {"path": self.fresh(used, self.paths(FILE_PATHS))}
        if self.p(0.7):
            url, data = self.source()
            f["contents"] = {"source": url}
            self.verification(f["contents"], data)
            if self.p(0.1):
                f["contents"] = {"source": "data:;base64,H4sIAAAAAAAA/8pIzcnJBwQAAP//hZ1nDwUAAAA=",
                                 "compression": "gzip"}
                # the hash is of the compressed bytes
                self.verification(f["contents"], base64.b64decode(f["contents"]["source"][13:]))
            elif self.p(0.1):
                f["contents"] = {"source": HTTP_GZ, "compression": "gzip"}
                self.verification(f["contents"], HTTP_GZ_BYTES)
            if self.p(0.1) and self.version >= "3.1.0" and f["contents"]["source"].lower().startswith("http"):
                f["contents"]["httpHeaders"] = [{"name": "X-Flint", "value": "1"}]
        if self.p(0.2):
            f["append"] = []
            for _ in range(self.r.randint(1, 2)):
                url, data = self.source()
                a = {"source": url}
                self.verification(a, data)
                f["append"].append(a)
        if self.p(0.3) and "contents" in f:
            f["overwrite"] = self.p(0.7)
        m = self.pick(MODES)
        if m is not None:
            f["mode"] = m
        self.owner_fields(f)
        return f

    def fresh(self, used, pool):
        for _ in range(10):
            p = self.pick(pool)
            if p not in used:
                used.add(p)
                return p
        p = "/gen/%d" % self.r.randint(0, 10 ** 6)
        used.add(p)
        return p

    def directory(self, used):
        d = {"path": self.fresh(used, self.paths(FILE_PATHS + ["/etc/a", "/var/x", "/home/alice/.ssh",
                                                                "/opt", "/home/alice", "/dir", "/srv"]))}
        if self.p(0.2):
            d["overwrite"] = self.p(0.5)
        m = self.pick(MODES)
        if m is not None:
            d["mode"] = m
        self.owner_fields(d)
        return d

    def link(self, used):
        d = {"path": self.fresh(used, self.paths(FILE_PATHS + ["/etc/l", "/lnk", "/up/x", "/home/alice/link"])),
             "target": self.pick(["/etc/a", "a", "../x", "/etc/passwd", "/home/alice/f", "/nonexistent",
                                  "/home/alice", "/etc/hostname", "../../../../etc/shadow", "/etc/a/b"])}
        if self.p(0.25):
            d["hard"] = True
            d["target"] = self.pick(["/etc/a", "/etc/b", "/etc/passwd", "/etc/hostname", "/var/x/y",
                                     "/home/alice/f", "etc/passwd", "../etc/b", "hostname",
                                     "etc/../etc/a", "lnk/f"])
        if self.p(0.2):
            d["overwrite"] = self.p(0.5)
        if not d.get("hard"):
            self.owner_fields(d)
        return d

    def unit(self, used):
        name = self.fresh(used, UNITS)
        u = {"name": name}
        if self.p(0.4):
            u["contents"] = self.pick([UNIT_INSTALL, UNIT_STATIC, "", UNIT_TEMPLATE])
        if self.p(0.6):
            u["enabled"] = self.p(0.5)
        if self.p(0.2):
            u["mask"] = self.p(0.6)
        if self.p(0.3):
            u["dropins"] = [{"name": n, **({"contents": self.pick(["[Service]\nEnvironment=A=1\n", ""])}
                                            if self.p(0.8) else {})}
                            for n in self.r.sample(["10-a.conf", "20-b.conf"], self.r.randint(1, 2))]
        return u

    def user(self, used):
        name = self.fresh(used, ["alice", "bob", "core", "daemon", "carol", "svc"])
        u = {"name": name}
        if self.p(0.3):
            u["passwordHash"] = self.pick(["", "$6$salt$hash", "!", "*"])
        if self.p(0.5):
            u["sshAuthorizedKeys"] = self.r.sample(["ssh-ed25519 AAAA one", "ssh-rsa BBBB two",
                                                    "ssh-ed25519 CCCC three\n"], self.r.randint(1, 2))
        if self.p(0.15):
            u["uid"] = self.pick([1500, 1001, 4243])
        if self.p(0.2):
            u["gecos"] = self.pick(["Gecos", "A B"])
        if self.p(0.15):
            u["homeDir"] = self.pick(["/home/" + name, "/var/home/" + name, "/srv/" + name, "/home/alice"])
        if self.p(0.2):
            u["noCreateHome"] = self.p(0.6)
        if self.p(0.15):
            u["primaryGroup"] = self.pick(["staff", "users", "newgrp", "wheel"])
        if self.p(0.25):
            u["groups"] = self.r.sample(["wheel", "staff", "users", "newgrp"], self.r.randint(1, 2))
        if self.p(0.15):
            u["shell"] = self.pick(["/bin/sh", "/usr/sbin/nologin"])
        if self.p(0.1):
            u["system"] = True
        if self.p(0.1):
            u["noUserGroup"] = True
        if self.p(0.1):
            u["noLogInit"] = True
        if self.p(0.08):
            u["shouldExist"] = False
        return u

    def group(self, used):
        name = self.fresh(used, ["staff", "newgrp", "wheel", "users", "ops"])
        g = {"name": name}
        if self.p(0.4):
            g["gid"] = self.pick([77, 50, 3000, 10])
        if self.p(0.2):
            g["passwordHash"] = self.pick(["", "$6$x$y", "!"])
        if self.p(0.15):
            g["system"] = True
        if self.p(0.08):
            g["shouldExist"] = False
        return g

    def config(self, depth=0):
        version = self.version = self.pick(["3.3.0", "3.3.0", "3.4.0", "3.2.0", "3.0.0", "3.1.0", "3.5.0"])
        c = {"ignition": {"version": version}}
        # Configs merged in (data URLs, children of the same version), as the fetch stage
        # merges them: lists keyed by path or name, the child's entries winning.
        if depth == 0 and self.p(0.12):
            kids = []
            for _ in range(self.r.randint(1, 2)):
                kid = self.config(depth=1)
                kid["ignition"]["version"] = version
                text = json.dumps(kid)
                src = ("data:;base64," + base64.b64encode(text.encode()).decode() if self.p(0.5)
                       else "data:," + urllib.parse.quote(text))
                kids.append({"source": src})
            self.version = version
            if self.p(0.15):
                c["ignition"]["config"] = {"replace": kids[0]}
            else:
                c["ignition"]["config"] = {"merge": kids}
        used = set()
        st = {}
        if self.p(0.6):
            st["files"] = [self.file(used) for _ in range(self.r.randint(1, 4))]
        if self.p(0.35):
            st["directories"] = [self.directory(used) for _ in range(self.r.randint(1, 3))]
        if self.p(0.35):
            st["links"] = [self.link(used) for _ in range(self.r.randint(1, 3))]
        if st:
            c["storage"] = st
        uused = set()
        if self.p(0.45):
            c["systemd"] = {"units": [self.unit(uused) for _ in range(self.r.randint(1, 4))]}
        pused = set()
        if self.p(0.45):
            pw = {}
            if self.p(0.8):
                pw["users"] = [self.user(pused) for _ in range(self.r.randint(1, 2))]
            if self.p(0.4):
                pw["groups"] = [self.group(pused) for _ in range(self.r.randint(1, 2))]
            c["passwd"] = pw
        return c

    def scenario(self):
        return self.setup(), json.dumps(self.config(), indent=2) + "\n"
