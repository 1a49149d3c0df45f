"""Random Ignition and Butane configs for the differential harness.

Every field of every supported version (Ignition 3.0.0-3.4.0, Butane Flatcar 1.0.0/1.1.0)
is drawn with some probability, from pools of ordinary and hostile values: wrong types,
nulls, unknown keys, relative and unclean paths, duplicates, odd URL schemes and letter
cases, out-of-range numbers, long and non-ASCII strings. Deterministic for a seed.
"""
import json
import random

IGN_VERSIONS = ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0"]
ODD_VERSIONS = ["3.5.0", "3.6.0-experimental", "2.3.0", "3.4", "3.3.0 ", "", "4.0.0", "3.0.0-experimental"]

PATHS = ["/etc/a", "/etc/a/b", "/etc/b", "/var/x", "/home/core/f", "/etc/systemd/system/a.service",
         "/etc/a/../b", "/etc//c", "etc/rel", "/", "/etc/a/", "/etc/./d", "/opt/é", "/etc/a b",
         "/usr/local/bin/x", "/etc/l", "/etc/l/x", ""]
LINK_TARGETS = ["/etc/a", "../a", "a", "/nonexistent", "/etc", "", "/etc/a/b", "."]
URLS = ["data:,hello", "data:;base64,aGVsbG8=", "data:text/plain;charset=utf-8,%E2%9C%93",
        "https://example.com/x", "http://example.com/x?y=1", "HTTP://example.com/x", "Data:,x",
        "tftp://example.com/x", "s3://bucket/key", "gs://bucket/obj", "oem:///x", "ftp://x/y",
        "arn:aws:s3:::bucket/key", "arn:aws:s3:us-east-1:123:accesspoint/ap/object/k",
        "://bad", "http://[::1", "data:;base64,!!!", "file:///etc/passwd", "", "HTTPS://EXAMPLE.com/",
        "s3://", "gs://bucket", "data:,", "http://exa mple.com/"]
HASHES = ["sha512-" + "a" * 128, "sha256-" + "b" * 64, "sha512-abc", "md5-" + "0" * 32, "sha512",
          "sha256-" + "B" * 64, "", "sha512-" + "g" * 128]
MODES = [0o644, 0o755, 0o600, 0o4755, 0o1777, 0o7777, 0o10000, -1, 0, 420, 511, 0o2755, 99999999999]
NAMES = ["core", "alice", "root", "bob", "", "a:b", "daemon", "user name", "ünï", "x" * 40]
UNITS = ["a.service", "b.socket", "c.timer", "d@.service", "d@x.service", "e.mount", "noext",
         "f.target", "g.path", ".service", "h@i@j.service", "var-lib.mount", "x.slice", "k.scope"]
UNIT_BODIES = ["[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
               "[Service]\nExecStart=/bin/true\n", "", "[Unit\nbroken", "[Install]\nWantedBy=a.target\n",
               "[Mount]\nWhat=/dev/x\nWhere=/var/lib\n", "key-without-section=1\n", "[X]\n" + "a=" + "b" * 500 + "\n",
               "[Service]\nExecStart=/bin/sh -c 'echo \\\n continued'\n", "\ufeff[Unit]\n"]
DEVICES = ["/dev/vda", "/dev/vdb", "/dev/disk/by-label/x", "vda", "/dev/md/r", "/dev/mapper/c", "",
           "/dev/disk/by-partlabel/root", "/dev/vda1", "/dev/../vda"]
FORMATS = ["ext4", "xfs", "btrfs", "vfat", "swap", "none", "zfs", "", "EXT4"]
GUIDS = ["0FC63DAF-8483-4772-8E79-3D69D8477DE4", "0fc63daf-8483-4772-8e79-3d69d8477de4", "not-a-guid",
         "", "00000000-0000-0000-0000-000000000000", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"]
LABELS = ["root", "ROOT", "a" * 36, "a" * 37, "a:b", "", "é", "data", "x" * 16, "x" * 17]
HEADERS = [("Accept", "x"), ("", "v"), ("N", ""), ("Accept", "y"), ("X-A", "b\nc"), ("Host", "h")]
KARGS = ["quiet", "console=ttyS0", "a=b c", "", "x", "quiet"]
TANG = ["http://tang", "tang", "", "https://t.example:80"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    # --- primitives ---
    def p(self, x):
        return self.r.random() < x

    def pick(self, xs):
        return self.r.choice(xs)

    def hostile(self):
        """A value of an unexpected type or shape."""
        return self.pick([None, 1, -1, 1.5, True, "x", [], {}, "\u0000", "\ud7ff" * 3, 2 ** 63, "0644",
                          [1, 2], {"a": 1}, "a" * 300, 1e20])

    def maybe(self, d, key, value_fn, p=0.5, wrong=0.03):
        if self.p(p):
            d[key] = self.hostile() if self.p(wrong) else value_fn()

    def string(self, pool, odd=0.05):
        if self.p(odd):
            return self.pick(["", " ", "\t", "é" * 3, "a\nb", "\\x", "${x}", "%00", "a" * 1000])
        return self.pick(pool)

    def listof(self, fn, maxn=3):
        return [fn() for _ in range(self.r.randint(0, maxn))]

    # --- Ignition ---
    def resource(self, verification=True, compression=True, headers=True):
        res = {}
        self.maybe(res, "source", lambda: self.string(URLS), 0.8)
        if compression:
            self.maybe(res, "compression", lambda: self.pick(["gzip", "", "bzip2", "GZIP"]), 0.2)
        if headers:
            self.maybe(res, "httpHeaders", lambda: [{"name": n, "value": v} for n, v in
                                                    self.r.sample(HEADERS, self.r.randint(0, 3))], 0.15)
        if verification:
            self.maybe(res, "verification", lambda: {"hash": self.pick(HASHES)} if self.p(0.9) else {}, 0.3)
        return res

    def node(self, d, path_pool=PATHS):
        d["path"] = self.string(path_pool) if self.p(0.97) else self.hostile()
        self.maybe(d, "overwrite", lambda: self.p(0.5), 0.3)
        self.maybe(d, "user", self.owner, 0.2)
        self.maybe(d, "group", self.owner, 0.2)

    def owner(self):
        o = {}
        self.maybe(o, "id", lambda: self.pick([0, 1000, -1, 4294967296, 500]), 0.5)
        self.maybe(o, "name", lambda: self.string(NAMES), 0.5)
        return o

    def file(self):
        f = {}
        self.node(f)
        self.maybe(f, "contents", self.resource, 0.6)
        self.maybe(f, "append", lambda: self.listof(self.resource, 2), 0.2)
        self.maybe(f, "mode", lambda: self.pick(MODES), 0.4)
        return f

    def directory(self):
        d = {}
        self.node(d)
        self.maybe(d, "mode", lambda: self.pick(MODES), 0.4)
        return d

    def link(self):
        d = {}
        self.node(d)
        self.maybe(d, "target", lambda: self.string(LINK_TARGETS), 0.9)
        self.maybe(d, "hard", lambda: self.p(0.4), 0.4)
        return d

    def partition(self):
        p = {}
        self.maybe(p, "label", lambda: self.string(LABELS), 0.6)
        self.maybe(p, "number", lambda: self.pick([0, 1, 2, 3, 128, 129, -1]), 0.7)
        self.maybe(p, "sizeMiB", lambda: self.pick([0, 1, 100, 1024, -5]), 0.5)
        self.maybe(p, "startMiB", lambda: self.pick([0, 1, 2, 100, -1]), 0.4)
        self.maybe(p, "typeGuid", lambda: self.string(GUIDS), 0.3)
        self.maybe(p, "guid", lambda: self.string(GUIDS), 0.2)
        self.maybe(p, "wipePartitionEntry", lambda: self.p(0.5), 0.2)
        self.maybe(p, "shouldExist", lambda: self.p(0.6), 0.3)
        self.maybe(p, "resize", lambda: self.p(0.5), 0.15)
        return p

    def disk(self):
        d = {"device": self.string(DEVICES)}
        self.maybe(d, "wipeTable", lambda: self.p(0.5), 0.4)
        self.maybe(d, "partitions", lambda: self.listof(self.partition, 4), 0.8)
        return d

    def filesystem(self):
        f = {}
        self.maybe(f, "device", lambda: self.string(DEVICES), 0.95)
        self.maybe(f, "format", lambda: self.string(FORMATS), 0.85)
        self.maybe(f, "path", lambda: self.string(["/var", "/srv", "var", "/", "/var/lib/x", ""]), 0.5)
        self.maybe(f, "label", lambda: self.string(LABELS), 0.4)
        self.maybe(f, "uuid", lambda: self.string(GUIDS), 0.2)
        self.maybe(f, "wipeFilesystem", lambda: self.p(0.5), 0.4)
        self.maybe(f, "options", lambda: self.listof(lambda: self.pick(["-E", "lazy_itable_init=0", ""]), 2), 0.2)
        self.maybe(f, "mountOptions", lambda: self.listof(lambda: self.pick(["ro", "noatime", ""]), 2), 0.2)
        return f

    def raid(self):
        r = {}
        self.maybe(r, "name", lambda: self.string(["r", "data", "", "a/b"]), 0.9)
        self.maybe(r, "level", lambda: self.string(["raid0", "raid1", "raid5", "raid10", "linear", "stripe", "x", ""]), 0.9)
        self.maybe(r, "devices", lambda: self.listof(lambda: self.string(DEVICES), 3), 0.9)
        self.maybe(r, "spares", lambda: self.pick([0, 1, -1]), 0.3)
        self.maybe(r, "options", lambda: ["--x"], 0.1)
        return r

    def luks(self):
        l = {}
        self.maybe(l, "name", lambda: self.string(["c", "root", "", "a/b"]), 0.9)
        self.maybe(l, "device", lambda: self.string(DEVICES), 0.9)
        self.maybe(l, "label", lambda: self.string(LABELS), 0.3)
        self.maybe(l, "uuid", lambda: self.string(GUIDS), 0.2)
        self.maybe(l, "keyFile", lambda: self.resource(), 0.4)
        self.maybe(l, "wipeVolume", lambda: self.p(0.5), 0.2)
        self.maybe(l, "options", lambda: ["--cipher", "aes"], 0.1)
        self.maybe(l, "openOptions", lambda: ["--allow-discards"], 0.1)
        self.maybe(l, "discard", lambda: self.p(0.5), 0.2)
        if self.p(0.3):
            c = {}
            self.maybe(c, "tpm2", lambda: self.p(0.5), 0.4)
            self.maybe(c, "threshold", lambda: self.pick([0, 1, 2, -1]), 0.3)
            self.maybe(c, "tang", lambda: self.listof(lambda: {k: v for k, v in
                       [("url", self.string(TANG)), ("thumbprint", self.pick(["t", ""])),
                        ("advertisement", self.pick(["{}", "x", ""]))] if self.p(0.7)}, 2), 0.4)
            self.maybe(c, "custom", lambda: {k: v for k, v in [("pin", self.pick(["tpm2", "tang", "sss", "x", ""])),
                       ("config", self.pick(["{}", ""])), ("needsNetwork", self.p(0.5))] if self.p(0.7)}, 0.3)
            l["clevis"] = c
        return l

    def unit(self):
        u = {"name": self.string(UNITS)}
        self.maybe(u, "contents", lambda: self.pick(UNIT_BODIES), 0.5)
        self.maybe(u, "enabled", lambda: self.p(0.6), 0.4)
        self.maybe(u, "mask", lambda: self.p(0.4), 0.2)
        self.maybe(u, "dropins", lambda: self.listof(lambda: {k: v for k, v in [
            ("name", self.pick(["a.conf", "b.conf", "noext", "", "a.conf"])),
            ("contents", self.pick(UNIT_BODIES))] if k == "name" or self.p(0.7)}, 2), 0.3)
        return u

    def user(self):
        u = {"name": self.string(NAMES)}
        self.maybe(u, "passwordHash", lambda: self.pick(["", "$6$x$y", "*", "!"]), 0.3)
        self.maybe(u, "sshAuthorizedKeys", lambda: self.listof(lambda: self.pick(["ssh-ed25519 AAAA", "", "ssh-rsa B c"]), 2), 0.4)
        self.maybe(u, "uid", lambda: self.pick([1000, 0, -1, 4294967296]), 0.2)
        self.maybe(u, "gecos", lambda: self.pick(["G", "a:b", ""]), 0.2)
        self.maybe(u, "homeDir", lambda: self.pick(["/home/x", "rel", "", "/home/../x"]), 0.2)
        for k in ["noCreateHome", "noUserGroup", "noLogInit", "system", "shouldExist"]:
            self.maybe(u, k, lambda: self.p(0.5), 0.1)
        self.maybe(u, "primaryGroup", lambda: self.string(NAMES), 0.15)
        self.maybe(u, "groups", lambda: self.listof(lambda: self.string(NAMES), 2), 0.2)
        self.maybe(u, "shell", lambda: self.pick(["/bin/bash", "", "sh"]), 0.2)
        return u

    def group(self):
        g = {"name": self.string(NAMES)}
        self.maybe(g, "gid", lambda: self.pick([1000, 0, -1]), 0.3)
        self.maybe(g, "passwordHash", lambda: self.pick(["", "$6$x", "!"]), 0.2)
        self.maybe(g, "system", lambda: self.p(0.5), 0.2)
        self.maybe(g, "shouldExist", lambda: self.p(0.5), 0.2)
        return g

    def ignition_section(self, version):
        ig = {"version": version}
        if self.p(0.2):
            cfg = {}
            self.maybe(cfg, "merge", lambda: self.listof(self.resource, 2), 0.6)
            self.maybe(cfg, "replace", self.resource, 0.3)
            ig["config"] = cfg
        if self.p(0.1):
            ig["timeouts"] = {k: self.pick([0, 10, -1, 1.5]) for k in ["httpResponseHeaders", "httpTotal"] if self.p(0.6)}
        if self.p(0.1):
            ig["security"] = {"tls": {"certificateAuthorities": self.listof(self.resource, 2)}}
        if self.p(0.1):
            ig["proxy"] = {k: v for k, v in [("httpProxy", self.string(URLS)), ("httpsProxy", self.string(URLS)),
                                              ("noProxy", self.listof(lambda: self.pick(["a", "", "*.x"]), 2))] if self.p(0.6)}
        return ig

    def ignition(self):
        version = self.pick(IGN_VERSIONS) if self.p(0.95) else self.pick(ODD_VERSIONS)
        c = {"ignition": self.ignition_section(version)}
        st = {}
        self.maybe(st, "files", lambda: self.listof(self.file, 4), 0.5)
        self.maybe(st, "directories", lambda: self.listof(self.directory, 3), 0.3)
        self.maybe(st, "links", lambda: self.listof(self.link, 3), 0.3)
        self.maybe(st, "disks", lambda: self.listof(self.disk, 2), 0.2)
        self.maybe(st, "raid", lambda: self.listof(self.raid, 2), 0.1)
        self.maybe(st, "filesystems", lambda: self.listof(self.filesystem, 3), 0.2)
        self.maybe(st, "luks", lambda: self.listof(self.luks, 2), 0.1)
        if st or self.p(0.1):
            c["storage"] = st
        if self.p(0.35):
            c["systemd"] = {"units": self.listof(self.unit, 4)}
        if self.p(0.3):
            pw = {}
            self.maybe(pw, "users", lambda: self.listof(self.user, 3), 0.7)
            self.maybe(pw, "groups", lambda: self.listof(self.group, 2), 0.4)
            c["passwd"] = pw
        if self.p(0.1):
            c["kernelArguments"] = {k: self.listof(lambda: self.string(KARGS), 3) for k in
                                    ["shouldExist", "shouldNotExist"] if self.p(0.7)}
        # unknown keys and nulls at random places
        if self.p(0.05):
            c[self.pick(["bogus", "Storage", "ignition ", "passwd"])] = self.hostile()
        if self.p(0.03):
            c[self.pick(["storage", "systemd", "passwd"])] = None
        return c

    def ignition_text(self):
        """Returns bytes: the JSON of a random config, sometimes malformed or oddly encoded."""
        c = self.ignition()
        roll = self.r.random()
        if roll < 0.5:
            text = json.dumps(c, indent=self.pick([None, 2, 4, "\t"]), ensure_ascii=self.p(0.5))
        else:
            text = json.dumps(c, separators=(",", ":"), ensure_ascii=False)
        b = text.encode("utf-8", "surrogatepass")
        mut = self.r.random()
        if mut < 0.02:
            b = b"\xef\xbb\xbf" + b
        elif mut < 0.03:
            b = b[: self.r.randint(0, len(b))]
        elif mut < 0.04:
            b = b + self.pick([b" x", b"\n\n", b"}", b"[]", b"\x00"])
        elif mut < 0.05:
            b = self.pick([b"", b"null", b"[]", b"{}", b" ", b"\"x\"", b"{\"ignition\":null}",
                           b"{\"ignition\":{\"version\":null}}", b"{\"ignition\":{}}"])
        elif mut < 0.06:
            i = self.r.randint(0, len(b))
            b = b[:i] + bytes([self.r.randint(0, 255)]) + b[i:]
        return b

    # --- Butane ---
    def bu_resource(self, local_ok):
        res = {}
        kind = self.r.random()
        if kind < 0.45:
            res["inline"] = self.pick(["hello", "", "a\nb\n", "x" * 300, "é✓", "  lead", "#!/bin/sh\necho hi\n"])
        elif kind < 0.7:
            res["source"] = self.string(URLS)
        elif kind < 0.85 and local_ok:
            res["local"] = self.pick(["a.txt", "bin.dat", "missing", "../escape", "/abs", "dir", "big.txt"])
        elif kind < 0.9:
            res["inline"] = "a"
            res["source"] = "data:,b"
        self.maybe(res, "compression", lambda: self.pick(["gzip", "", "x"]), 0.1)
        self.maybe(res, "verification", lambda: {"hash": self.pick(HASHES)}, 0.1)
        self.maybe(res, "http_headers", lambda: [{"name": n, "value": v} for n, v in
                                                 self.r.sample(HEADERS, self.r.randint(0, 2))], 0.05)
        return res

    def bu_node(self, d):
        d["path"] = self.string(PATHS)
        self.maybe(d, "overwrite", lambda: self.p(0.5), 0.2)
        self.maybe(d, "user", self.owner, 0.15)
        self.maybe(d, "group", self.owner, 0.15)

    def butane(self):
        version = self.pick(["1.0.0", "1.1.0", "1.1.0", "1.0.0"]) if self.p(0.97) else self.pick(
            ["1.2.0-experimental", "0.9.0", "2.0.0", "1.1", ""])
        c = {"variant": self.pick(["flatcar"] * 30 + ["fcos", "", "Flatcar"]), "version": version}
        if self.p(0.15):
            ig = {}
            self.maybe(ig, "config", lambda: {k: v for k, v in [
                ("merge", self.listof(lambda: self.bu_resource(True), 2)),
                ("replace", self.bu_resource(True))] if self.p(0.5)}, 0.5)
            self.maybe(ig, "timeouts", lambda: {"http_total": self.pick([1, 0, -1])}, 0.2)
            self.maybe(ig, "security", lambda: {"tls": {"certificate_authorities": self.listof(
                lambda: self.bu_resource(True), 2)}}, 0.2)
            self.maybe(ig, "proxy", lambda: {"http_proxy": self.string(URLS), "no_proxy": ["a"]}, 0.2)
            c["ignition"] = ig
        st = {}
        self.maybe(st, "files", lambda: self.listof(self.bu_file, 4), 0.6)
        self.maybe(st, "directories", lambda: self.listof(self.bu_dir, 2), 0.2)
        self.maybe(st, "links", lambda: self.listof(self.bu_link, 2), 0.2)
        self.maybe(st, "trees", lambda: self.listof(lambda: {k: v for k, v in [
            ("local", self.pick(["tree", "tree/sub", "a.txt", "../x", "missing"])),
            ("path", self.pick(["/etc/t", "/", "rel", "/etc/a"]))] if k == "local" or self.p(0.6)}, 2), 0.1)
        self.maybe(st, "disks", lambda: [self.disk() for _ in range(self.r.randint(0, 2))], 0.1)
        self.maybe(st, "filesystems", lambda: self.listof(self.bu_fs, 2), 0.15)
        self.maybe(st, "luks", lambda: self.listof(self.bu_luks, 1), 0.05)
        self.maybe(st, "raid", lambda: self.listof(self.raid, 1), 0.05)
        if st:
            # Butane spells nested keys in snake case
            c["storage"] = snake(st)
        if self.p(0.35):
            c["systemd"] = {"units": self.listof(self.bu_unit, 3)}
        if self.p(0.3):
            c["passwd"] = {"users": self.listof(self.bu_user, 2)}
            if self.p(0.3):
                c["passwd"]["groups"] = snake(self.listof(self.group, 2))
        if self.p(0.05):
            c["kernel_arguments"] = {"should_exist": self.listof(lambda: self.string(KARGS), 2)}
        if self.p(0.04):
            c[self.pick(["bogus", "Storage", "storage"])] = self.hostile()
        return c

    def bu_file(self):
        f = {}
        self.bu_node(f)
        self.maybe(f, "contents", lambda: self.bu_resource(True), 0.7)
        self.maybe(f, "append", lambda: self.listof(lambda: self.bu_resource(True), 2), 0.15)
        self.maybe(f, "mode", lambda: self.pick(MODES + ["0644", "0o644"]), 0.5, wrong=0)
        return f

    def bu_dir(self):
        d = {}
        self.bu_node(d)
        self.maybe(d, "mode", lambda: self.pick(MODES), 0.4)
        return d

    def bu_link(self):
        d = {}
        self.bu_node(d)
        self.maybe(d, "target", lambda: self.string(LINK_TARGETS), 0.9)
        self.maybe(d, "hard", lambda: self.p(0.3), 0.3)
        return d

    def bu_fs(self):
        f = snake(self.filesystem())
        self.maybe(f, "with_mount_unit", lambda: self.p(0.6), 0.4)
        return f

    def bu_luks(self):
        l = snake(self.luks())
        if "key_file" in l and isinstance(l["key_file"], dict):
            l["key_file"] = self.bu_resource(True)
        return l

    def bu_unit(self):
        u = {"name": self.string(UNITS)}
        r = self.r.random()
        if r < 0.5:
            u["contents"] = self.pick(UNIT_BODIES)
        elif r < 0.6:
            u["contents_local"] = self.pick(["unit.service", "missing", "../x"])
        self.maybe(u, "enabled", lambda: self.p(0.6), 0.4)
        self.maybe(u, "mask", lambda: self.p(0.3), 0.15)
        self.maybe(u, "dropins", lambda: self.listof(lambda: {k: v for k, v in [
            ("name", self.pick(["a.conf", "b.conf", "x"])), ("contents", self.pick(UNIT_BODIES)),
            ("contents_local", self.pick(["unit.service", "missing"]))] if k == "name" or self.p(0.5)}, 2), 0.2)
        return u

    def bu_user(self):
        u = snake(self.user())
        self.maybe(u, "ssh_authorized_keys_local", lambda: self.listof(
            lambda: self.pick(["keys.pub", "missing.pub", "../k"]), 2), 0.1)
        return u


def snake(v):
    """camelCase keys to snake_case, recursively (Butane's spelling)."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            s = "".join("_" + ch.lower() if ch.isupper() else ch for ch in k)
            s = s.replace("_mi_b", "_mib").replace("type_guid", "type_guid")
            out[s] = snake(x)
        return out
    if isinstance(v, list):
        return [snake(x) for x in v]
    return v


# --- YAML writer with random styles ---
PLAIN_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-@+")


class Yaml:
    def __init__(self, r):
        self.r = r

    def scalar(self, v, indent, key=None):
        r = self.r
        if v is None:
            return r.choice(["null", "~", ""])
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, int):
            if key == "mode" and 0 <= v < 0o100000 and r.random() < 0.6:
                return "0" + oct(v)[2:] if r.random() < 0.8 else "0o" + oct(v)[2:]
            return str(v)
        if isinstance(v, float):
            return repr(v)
        s = v
        if "\n" in s and r.random() < 0.7:
            style = r.choice(["|", "|-", "|+", ">", ">-"]) if not s.endswith("\n\n") else "|+"
            if style.startswith(">"):
                style = "|" if s.endswith("\n") else "|-"
            if not s.endswith("\n") and style in ("|", "|+"):
                style = "|-"
            if s.endswith("\n") and not s.endswith("\n\n") and style != "|":
                style = "|"
            if s.startswith(" ") or s.startswith("\n") or "\t" in s or any(
                    ord(c) < 32 and c not in "\n" for c in s) or s.strip("\n") == "":
                return json.dumps(s, ensure_ascii=False)
            pad = " " * (indent + 2)
            body = s[:-1] if s.endswith("\n") else s
            lines = body.split("\n")
            return style + "\n" + "\n".join(pad + l if l else "" for l in lines)
        if s and all(c in PLAIN_SAFE for c in s) and s not in ("true", "false", "null", "yes", "no", "on", "off",
                                                             "y", "n", "~") and not s[0].isdigit() \
                and not s.startswith("-") and r.random() < 0.7:
            return s
        if "'" not in s and "\n" not in s and all(ord(c) >= 32 for c in s) and r.random() < 0.3:
            return "'" + s + "'"
        return json.dumps(s, ensure_ascii=r.random() < 0.3)

    def dump(self, v, indent=0, key=None):
        pad = " " * indent
        if isinstance(v, dict):
            if not v:
                return "{}"
            if self.r.random() < 0.03:
                return json.dumps(v)
            lines = []
            for k, x in v.items():
                kk = self.scalar(k, indent) if not (k and all(c in PLAIN_SAFE for c in k)) else k
                if isinstance(x, (dict, list)) and x:
                    lines.append(f"{pad}{kk}:\n" + self.dump(x, indent + 2, k))
                else:
                    lines.append(f"{pad}{kk}: " + (self.dump(x, indent + 2, k) if isinstance(x, (dict, list))
                                                   else self.scalar(x, indent, k)))
            return "\n".join(lines)
        if isinstance(v, list):
            if not v:
                return "[]"
            lines = []
            for x in v:
                if isinstance(x, dict) and x:
                    inner = self.dump(x, indent + 2, key)
                    lines.append(pad + "- " + inner[indent + 2:])
                elif isinstance(x, list) and x:
                    lines.append(pad + "-\n" + self.dump(x, indent + 2, key))
                else:
                    lines.append(pad + "- " + (self.dump(x, indent + 2, key) if isinstance(x, (dict, list))
                                               else self.scalar(x, indent + 2, key)))
            return "\n".join(lines)
        return pad + self.scalar(v, indent, key)


# Other variants than Flatcar, each version upstream ships, and the sugar only they have.
VARIANT_VERSIONS = {
    "fcos": ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0", "1.7.0", "1.8.0-experimental"],
    "openshift": ["4.%d.0" % m for m in range(8, 23)] + ["4.23.0-experimental"],
    "r4e": ["1.0.0", "1.1.0", "1.2.0-experimental"],
    "fiot": ["1.0.0", "1.1.0-experimental"],
    "flatcar": ["1.2.0-experimental"],
}
LAYOUTS = ["x86_64", "aarch64", "ppc64le", "s390x-eckd", "s390x-zfcp", "s390x-virt", "X86_64", "arm", ""]
GRUB_HASH = "grub.pbkdf2.sha512.10000." + "A" * 128 + "." + "B" * 128


def variant_sugar(v, c):
    """Moves the config `c` to another variant and version (drawn from the generator `v`, its
    own random stream so that a seed's Flatcar inputs stay as they were) and adds that
    variant's sugar: boot_device (layouts, LUKS with TPM2/Tang/CEX, mirrors), grub users,
    OpenShift's metadata and openshift section."""
    variant = v.pick(sorted(VARIANT_VERSIONS))
    if v.p(0.6):
        # The base generator is hostile enough that most of its documents fail before any
        # sugar is translated: often keep only a plain file and unit beside the sugar.
        c = {}
        if v.p(0.5):
            c["storage"] = {"files": [{"path": "/etc/hostname", "contents": {"inline": "h"}}]}
        if v.p(0.3):
            c["systemd"] = {"units": [{"name": "a.service", "enabled": True,
                                       "contents": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]}
    c["variant"] = variant
    c["version"] = v.pick(VARIANT_VERSIONS[variant])
    if v.p(0.5):
        bd = {}
        v.maybe(bd, "layout", lambda: v.pick(LAYOUTS), 0.5)
        if v.p(0.6):
            luks = {}
            v.maybe(luks, "tpm2", lambda: v.p(0.7), 0.5)
            v.maybe(luks, "tang", lambda: [{k: x for k, x in [
                ("url", v.pick(TANG)), ("thumbprint", v.pick(["abc", ""])),
                ("advertisement", v.pick(['{"payload": "x"}', "nope"]))] if k == "url" or v.p(0.4)}
                for _ in range(v.r.randint(0, 2))], 0.4)
            v.maybe(luks, "threshold", lambda: v.pick([1, 2, 3, 0, -1]), 0.3)
            v.maybe(luks, "discard", lambda: v.p(0.5), 0.3)
            v.maybe(luks, "device", lambda: v.pick(["/dev/dasda", "/dev/sda", "", "rel"]), 0.2)
            v.maybe(luks, "cex", lambda: {"enabled": v.p(0.7)}, 0.2)
            bd["luks"] = luks
        if v.p(0.4):
            bd["mirror"] = {"devices": [v.pick(["/dev/sda", "/dev/sdb", "/dev/vda", "", "/dev/sda"])
                                        for _ in range(v.r.randint(0, 3))]}
        c["boot_device"] = bd
    if v.p(0.2):
        c["grub"] = {"users": [{k: x for k, x in [
            ("name", v.pick(["root", "admin", "", "root"])),
            ("password_hash", v.pick([GRUB_HASH, "", "plain"]))] if k == "name" or v.p(0.8)}
            for _ in range(v.r.randint(0, 2))]}
    if variant == "openshift" or v.p(0.05):
        if v.p(0.9):
            md = {}
            v.maybe(md, "name", lambda: v.pick(["99-worker-x", "", "a b"]), 0.9)
            v.maybe(md, "labels", lambda: {v.pick(["machineconfiguration.openshift.io/role", "x"]):
                                          v.pick(["worker", "master", ""])}, 0.8)
            c["metadata"] = md
        if v.p(0.6):
            os_ = {}
            v.maybe(os_, "kernel_type", lambda: v.pick(["default", "realtime", "64k-pages", "rt", ""]), 0.3)
            v.maybe(os_, "kernel_arguments", lambda: [v.pick(KARGS) for _ in range(v.r.randint(0, 2))], 0.3)
            v.maybe(os_, "extensions", lambda: [v.pick(["usbguard", "kernel-devel", "", "x"])
                                                for _ in range(v.r.randint(0, 2))], 0.3)
            v.maybe(os_, "fips", lambda: v.p(0.5), 0.3)
            c["openshift"] = os_
    if v.p(0.1):
        c["kernel_arguments"] = {k: [v.pick(KARGS) for _ in range(v.r.randint(0, 2))]
                                 for k in ["should_exist", "should_not_exist"] if v.p(0.6)}
    return c


def butane_text(g, variants=None):
    """A Butane document from `g`; with `variants` (a second generator), a quarter of them
    are moved to another variant with its sugar."""
    c = g.butane()
    if variants is not None and variants.p(0.25):
        c = variant_sugar(variants, c)
    y = Yaml(g.r)
    text = y.dump(c) + g.pick(["\n", "\n", "", "\n\n", "\n---\nvariant: x\n", "\n# end\n"])
    if g.p(0.01):
        text = text.replace("  ", "\t", 1)
    if g.p(0.01):
        text = "\ufeff" + text
    return text.encode("utf-8", "surrogatepass")


BUTANE_FILES = {
    "a.txt": b"hello\n",
    "bin.dat": bytes(range(256)),
    "big.txt": b"compress me " * 500,
    "unit.service": b"[Service]\nExecStart=/bin/true\n",
    "keys.pub": b"ssh-ed25519 AAAA one\n\nssh-rsa BBBB two\n",
    "tree/x": b"x\n",
    "tree/sub/y": b"y\n",
    "dir/z": b"z\n",
}
