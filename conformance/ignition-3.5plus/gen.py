#!/usr/bin/env python3
"""Builds the ignition-3.5plus corpus: Ignition 3.5.0, 3.6.0 and 3.7.0-experimental configs
(plus the validator edge cases every version shares) run through the reference
ignition-validate; each case folder gets in.ign and expected (exit code, then the output).

    conformance/ignition-3.5plus/gen.py ../shared/oracles/ignition-validate

Cases come from three places: upstream's documentation of each version (the examples of
docs/migrating-configs.md, rewritten), the shapes of upstream's own validation tests
(cex with clevis or a key file, custom pins, special mode bits), and hostile values found by
scripts/validate-diff.py (JSON edge cases, nulls, letter case, data URLs, type errors).
Rerunning regenerates every folder from this table; edit the table, not the folders.
"""

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
V = ["3.5.0", "3.6.0", "3.7.0-experimental"]
SHORT = {"3.5.0": "3.5", "3.6.0": "3.6", "3.7.0-experimental": "3.7exp"}

CASES = []


def case(name, desc, cfg):
    """cfg: a dict (written compact) or raw bytes/str."""
    if isinstance(cfg, (dict, list)):
        data = json.dumps(cfg, separators=(",", ":")).encode()
    elif isinstance(cfg, str):
        data = cfg.encode()
    else:
        data = cfg
    CASES.append((name, desc, data))


def ign(version, **rest):
    c = {"ignition": {"version": version}}
    c.update(rest)
    return c


def luks(**fields):
    base = {"name": "data", "device": "/dev/sdb"}
    base.update(fields)
    return {"luks": [base]}


# --- versions themselves
for v in V:
    case(f"version-{SHORT[v]}-minimal", f"minimal {v} config", ign(v))
for bad in ["3.5.0-experimental", "3.6.0-experimental", "3.7.0", "3.8.0", "3.6.1", "3.7.0-Experimental"]:
    case(f"version-{bad}-refused", f"{bad} is not a version upstream reads", ign(bad))

# --- upstream docs: 3.5 LUKS CEX, 3.6 special mode bits
for v in V:
    s = SHORT[v]
    case(f"cex-doc-example-{s}", f"{v}: the CEX example of the docs (cex enabled, discard, kargs)",
         ign(v, kernelArguments={"shouldExist": ["'rd.luks.key=/etc/luks/cex.key'"]},
             storage={"luks": [{"name": "luks-cex", "device": "/dev/sdb", "discard": True,
                                "cex": {"enabled": True}}]}))
    case(f"special-modes-doc-example-{s}", f"{v}: setuid file and sticky directory of the docs",
         ign(v, storage={"files": [{"path": "/usr/local/bin/setuid",
                                    "contents": {"source": "https://rootkit.example.com/setuid"},
                                    "mode": 2541}],
                         "directories": [{"path": "/var/local/tmp", "mode": 1023}]}))
    case(f"cex-with-clevis-{s}", f"{v}: cex and clevis tpm2 together", ign(v, storage=luks(cex={"enabled": True}, clevis={"tpm2": True})))
    case(f"cex-with-keyfile-{s}", f"{v}: cex and a key file together", ign(v, storage=luks(cex={"enabled": True}, keyFile={"source": "data:,key"})))
    case(f"cex-with-both-{s}", f"{v}: cex with clevis tang and a key file", ign(v, storage=luks(cex={"enabled": True}, keyFile={"source": "data:,k"}, clevis={"tang": [{"url": "http://t", "thumbprint": "x"}]})))
    case(f"cex-disabled-with-clevis-{s}", f"{v}: cex enabled false beside clevis is fine", ign(v, storage=luks(cex={"enabled": False}, clevis={"tpm2": True})))
    case(f"cex-empty-object-{s}", f"{v}: cex {{}} beside a key file", ign(v, storage=luks(cex={}, keyFile={"source": "data:,k"})))
    case(f"cex-null-{s}", f"{v}: cex null (context tree warning)", ign(v, storage=luks(cex=None)))
    case(f"cex-enabled-null-{s}", f"{v}: cex enabled null beside clevis", ign(v, storage=luks(cex={"enabled": None}, clevis={"tpm2": True})))
    case(f"cex-enabled-string-{s}", f"{v}: cex enabled as a string (type error)", ign(v, storage=luks(cex={"enabled": "true"})))
    case(f"cex-unknown-key-{s}", f"{v}: unknown key inside cex", ign(v, storage=luks(cex={"enabled": True, "card": 1})))
    case(f"cex-clevis-custom-pin-{s}", f"{v}: cex with a custom clevis pin", ign(v, storage=luks(cex={"enabled": True}, clevis={"custom": {"pin": "sss", "config": "{}"}})))
    case(f"cex-clevis-threshold-only-{s}", f"{v}: cex with clevis threshold only", ign(v, storage=luks(cex={"enabled": True}, clevis={"threshold": 2})))
    case(f"cex-keyfile-empty-source-{s}", f"{v}: cex with an empty key file source is fine", ign(v, storage=luks(cex={"enabled": True}, keyFile={"source": ""})))
    case(f"cex-device-missing-{s}", f"{v}: cex without a device", ign(v, storage={"luks": [{"name": "x", "cex": {"enabled": True}}]}))
    case(f"custom-pin-unknown-{s}", f"{v}: custom clevis pin outside tpm2/tang/sss", ign(v, storage=luks(clevis={"custom": {"pin": "yubikey", "config": "{}"}})))
    case(f"custom-pin-empty-{s}", f"{v}: custom with config and no pin", ign(v, storage=luks(clevis={"custom": {"config": "{}"}})))
    case(f"custom-needs-network-only-{s}", f"{v}: custom needsNetwork only", ign(v, storage=luks(clevis={"custom": {"needsNetwork": True}})))
    case(f"custom-with-tpm2-{s}", f"{v}: custom pin beside tpm2", ign(v, storage=luks(clevis={"tpm2": True, "custom": {"pin": "tpm2", "config": "{}"}})))
    case(f"custom-config-only-with-tang-{s}", f"{v}: custom config (no pin) beside tang", ign(v, storage=luks(clevis={"tang": [{"url": "https://t", "thumbprint": "x"}], "custom": {"config": "{}"}})))
    for mode, label in [(2541, "setuid"), (3072, "setgid"), (1023, "sticky"), (4095, "all-bits"), (4096, "too-big"), (-1, "negative")]:
        case(f"mode-{label}-{s}", f"{v}: file mode {mode}", ign(v, storage={"files": [{"path": "/f", "mode": mode}]}))
    case(f"dir-mode-setgid-{s}", f"{v}: directory mode setgid", ign(v, storage={"directories": [{"path": "/d", "mode": 1512}]}))
    case(f"tang-advertisement-bad-{s}", f"{v}: tang advertisement not JSON", ign(v, storage=luks(clevis={"tang": [{"url": "http://t", "thumbprint": "x", "advertisement": "{"}]})))
    case(f"openoptions-dup-{s}", f"{v}: duplicate openOptions", ign(v, storage=luks(openOptions=["--a", "--a"])))

# --- the validator's edge cases, in the new versions
v5, v6, v7 = V
case("bom-prefix-3.6", "byte-order mark before the JSON", b"\xef\xbb\xbf" + json.dumps(ign(v6)).encode())
case("bom-only", "only a byte-order mark", b"\xef\xbb\xbf")
case("trailing-char-at-end-3.6", "one stray character at the very end (position 0:0)", json.dumps(ign(v6)) + "x")
case("trailing-two-chars-3.6", "two stray characters after the value", json.dumps(ign(v6)) + " xy")
case("trailing-object-newline-3.6", "a second object on the next line", json.dumps(ign(v6)) + "\n{}")
case("non-ascii-invalid-char-3.5", "a non-ASCII character where a value should be", '{"ignition":{"version":"3.5.0"},"storage":é}')
case("zero-width-space-3.7", "a zero-width space before a value", '{"ignition":{"version":"3.7.0-experimental"},"storage":\u200b{}}')
case("invalid-utf8-byte-3.6", "a byte that is not UTF-8 where a value should be", b'{"ignition":{"version":"3.6.0"},"x":\xff}')
case("control-char-in-string-3.6", "a raw control character inside a string", b'{"ignition":{"version":"3.6.0"},"x":"a\x01"}')
case("trailing-comma-3.6", "a trailing comma before the closing brace", '{"ignition":{"version":"3.6.0"},}')
case("null-storage-3.6", "storage null", ign(v6, storage=None))
case("null-objects-everywhere-3.7", "nulls for every kind of struct",
     ign(v7, storage={"files": [None, {"path": "/a", "contents": None, "user": None, "group": None}],
                      "luks": [{"name": "a", "device": "/dev/sda", "clevis": None, "keyFile": None, "cex": None}],
                      "disks": [{"device": "/dev/sdb", "partitions": [None]}]},
         systemd={"units": [{"name": "a.service", "dropins": [None]}]}, passwd=None, kernelArguments=None))
case("null-ignition-config-3.5", "ignition.config, security and proxy null",
     {"ignition": {"version": v5, "config": None, "security": None, "proxy": None, "timeouts": None}})
case("null-later-duplicate-key-3.6", "a key repeated with null keeps the first value",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"path":"rel","path":null}]}}')
case("duplicate-key-last-wins-3.6", "a key repeated: the last value counts",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"path":"/ok","path":"rel"}]}}')
case("key-other-case-3.6", "a key in another letter case fills the field and is reported unused",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"Path":"rel"}]}}')
case("key-other-case-type-error-3.5", "a key in another letter case with a wrong type",
     '{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/a","Mode":"x"}]}}')
case("section-other-case-3.7", "a section in another letter case: unused, nothing below reported",
     '{"ignition":{"version":"3.7.0-experimental"},"Storage":{"files":[{"path":"rel","bogus":1}]}}')
case("both-cases-3.6", "a key and its other-case twin",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"Path":"/b","path":"/a"}]}}')
for (label, src) in [("HTTPS", "HTTPS://example.com/x"), ("Http", "Http://example.com/x"), ("S3", "S3://b/k"),
                     ("GS", "GS://b/o"), ("TFTP", "TFTP://h/x"), ("DATA", "DATA:,x"), ("Data-base64", "Data:;base64,aGk="),
                     ("ARN", "ARN:aws:s3:::bucket/key"), ("OEM", "OEM:///x"), ("oem", "oem:///x"), ("FTP", "FTP://h/x")]:
    case(f"scheme-{label}-3.6", f"file source scheme written {label}", ign(v6, storage={"files": [{"path": "/a", "contents": {"source": src}}]}))
case("scheme-upper-with-headers-3.6", "HTTPS in capitals with HTTP headers is fine",
     ign(v6, storage={"files": [{"path": "/a", "contents": {"source": "HTTPS://h/x", "httpHeaders": [{"name": "A", "value": "b"}]}}]}))
case("proxy-scheme-upper-3.6", "proxies in capitals", ign(v6, proxy=None) if False else
     {"ignition": {"version": v6, "proxy": {"httpProxy": "HTTP://p", "httpsProxy": "HTTPS://p"}}})
case("tang-url-upper-3.6", "tang URL in capitals", ign(v6, storage=luks(clevis={"tang": [{"url": "HTTP://t", "thumbprint": "x"}]})))
for (label, src) in [("bad-percent", "data:,%zz"), ("short-percent", "data:,%4"), ("space", "data:,a b"),
                     ("no-comma", "data:text/plain"), ("no-slash", "data:x,y"), ("unknown-type", "data:foo/bar,x"),
                     ("base64-bad-char", "data:;base64,!!"), ("base64-no-padding", "data:;base64,aGk"),
                     ("base64-bad-padding", "data:;base64,a==="), ("base64-trailing", "data:;base64,aGk=x"),
                     ("param-no-value", "data:;charset,x"), ("param-bad-escape", "data:text/plain;a=%zz,x"),
                     ("quoted-param", 'data:text/plain;a="q",x'), ("unclosed-quote", 'data:text/plain;a="x,a'),
                     ("non-ascii", "data:,é"), ("x-token-type", "data:x-custom/y,a"), ("empty", "data:,")]:
    case(f"dataurl-{label}-3.7", f"data URL: {src}", ign(v7, storage={"files": [{"path": "/a", "contents": {"source": src}}]}))
case("dataurl-bad-in-merge-3.6", "a bad data URL in a merge reference (reported twice)",
     {"ignition": {"version": v6, "config": {"merge": [{"source": "data:,%zz"}]}}})
case("dataurl-bad-in-ca-3.5", "a bad data URL in a CA",
     {"ignition": {"version": v5, "security": {"tls": {"certificateAuthorities": [{"source": "data:;base64,aGk"}]}}}})
case("link-at-root-3.6", "a link at / does not cover the tree",
     ign(v6, storage={"links": [{"path": "/", "target": "/x"}], "files": [{"path": "/etc/a"}], "directories": [{"path": "/d"}]}))
case("link-double-slash-3.6", "a link at / covers //paths",
     ign(v6, storage={"links": [{"path": "/", "target": "/x"}], "files": [{"path": "//etc/a"}]}))
case("link-unclean-parent-3.7", "a link and a file below its uncleaned path",
     ign(v7, storage={"links": [{"path": "/a/", "target": "/x"}], "files": [{"path": "/a//b"}]}))
case("hardlink-without-target-3.6", "a hard link without a target",
     ign(v6, storage={"links": [{"path": "/l", "hard": True, "user": {"id": 0}}]}))
case("disk-without-device-partitions-3.6", "partitions are checked on a disk without a device",
     ign(v6, storage={"disks": [{"partitions": [{}, {}]}]}))
case("disk-null-device-3.5", "device null on a disk with a bad partition",
     ign(v5, storage={"disks": [{"device": None, "partitions": [{"number": 1, "typeGuid": "nope"}]}]}))
for (label, doc) in [("files-number", '"storage":{"files":1}'), ("file-number", '"storage":{"files":[1]}'),
                     ("mode-float", '"storage":{"files":[{"path":"/a","mode":1.5}]}'),
                     ("mode-exp", '"storage":{"files":[{"path":"/a","mode":1e3}]}'),
                     ("mode-string", '"storage":{"files":[{"path":"/a","mode":"0644"}]}'),
                     ("uid-huge", '"passwd":{"users":[{"name":"a","uid":99999999999999999999}]}'),
                     ("headers-object", '"storage":{"files":[{"path":"/a","contents":{"httpHeaders":{}}}]}'),
                     ("header-number", '"storage":{"files":[{"path":"/a","contents":{"httpHeaders":[1]}}]}'),
                     ("ssh-key-number", '"passwd":{"users":[{"name":"a","sshAuthorizedKeys":[1]}]}'),
                     ("kargs-number", '"kernelArguments":{"shouldExist":[1]}'),
                     ("luks-name-object", '"storage":{"luks":[{"name":{}}]}'),
                     ("clevis-custom-number", '"storage":{"luks":[{"name":"a","clevis":{"custom":1}}]}'),
                     ("cex-array", '"storage":{"luks":[{"name":"a","cex":[]}]}'),
                     ("merge-string", '"ignition":{"version":"VERSION","config":{"merge":"x"}}'),
                     ("units-bool", '"systemd":{"units":true}'),
                     ("raid-devices-number", '"storage":{"raid":[{"name":"md","level":"raid1","devices":[1]}]}')]:
    for v in ([v5, v6, v7] if label in ("files-number", "mode-float", "cex-array") else [v6]):
        body = doc.replace("VERSION", v)
        text = ('{' + body + '}') if body.startswith('"ignition"') else ('{"ignition":{"version":"%s"},%s}' % (v, body))
        case(f"type-{label}-{SHORT[v]}", f"{v}: type error, {label}", text)
case("stub-ignition-array", "ignition is an array (version stub error)", '{"ignition":[]}')
case("stub-version-number", "version is a number", '{"ignition":{"version":3.6}}')
case("stub-top-array", "the document is an array", "[]")
case("stub-top-string", "the document is a string (position 0:0)", '"3.6.0"')

# --- a whole config per version using every section, valid
full = lambda v: ign(v, kernelArguments={"shouldExist": ["a"], "shouldNotExist": ["b"]},
                     passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"], "groups": ["wheel"]}],
                             "groups": [{"name": "g", "gid": 1000}]},
                     storage={"disks": [{"device": "/dev/sdb", "wipeTable": True, "partitions": [{"number": 1, "label": "data", "sizeMiB": 0}]}],
                              "luks": [{"name": "data", "device": "/dev/disk/by-partlabel/data", "keyFile": {"source": "data:,secret"}, "discard": True, "openOptions": ["--perf-no_read_workqueue"]}],
                              "filesystems": [{"device": "/dev/mapper/data", "format": "xfs", "path": "/var/data", "label": "data", "wipeFilesystem": True, "mountOptions": ["noatime"]}],
                              "files": [{"path": "/usr/local/bin/tool", "mode": 3565, "contents": {"source": "data:,x"}}],
                              "directories": [{"path": "/srv/shared", "mode": 1023}],
                              "links": [{"path": "/usr/local/bin/t", "target": "/usr/local/bin/tool"}]},
                     systemd={"units": [{"name": "a.service", "enabled": True, "contents": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]})
for v in V:
    case(f"full-config-{SHORT[v]}", f"{v}: every section, setuid/setgid/sticky modes", full(v))


# --- version gating: what 3.5/3.6 added, written in an older version
v4 = "3.4.0"
case("gate-cex-in-3.4", "cex in a 3.4.0 config is an unused key (and not checked against clevis)",
     ign(v4, storage=luks(cex={"enabled": True}, clevis={"tpm2": True})))
case("gate-cex-in-3.3", "cex in a 3.3.0 config is an unused key",
     ign("3.3.0", storage=luks(cex={"enabled": True})))
case("gate-cex-in-3.0", "cex in a 3.0.0 config (luks itself unknown there)",
     ign("3.0.0", storage=luks(cex={"enabled": True})))
case("gate-custom-pin-in-3.4", "a custom pin outside tpm2/tang/sss in 3.4.0 (refused before 3.6)",
     ign(v4, storage=luks(clevis={"custom": {"pin": "yubikey", "config": "{}"}})))
case("gate-special-modes-in-3.4", "setuid/setgid/sticky in 3.4.0 warn",
     ign(v4, storage={"files": [{"path": "/f", "mode": 2541}], "directories": [{"path": "/d", "mode": 1023}]}))
case("gate-special-modes-in-3.0", "setuid in 3.0.0 warns",
     ign("3.0.0", storage={"files": [{"path": "/f", "mode": 3565}]}))
for v in V:
    s = SHORT[v]
    case(f"gate-dir-and-file-special-{s}", f"{v}: special bits on a file, a directory and an append-only file",
         ign(v, storage={"files": [{"path": "/f", "mode": 2048, "append": [{"source": "data:,x"}]}],
                         "directories": [{"path": "/d", "mode": 512}, {"path": "/e", "mode": 1024}]}))
    case(f"gate-link-mode-{s}", f"{v}: a link has no mode (unused key)",
         ign(v, storage={"links": [{"path": "/l", "target": "/t", "mode": 2541}]}))

# --- unused keys in the new versions, at every depth, pretty-printed (positions on many lines)
case("unused-keys-pretty-3.6", "unknown keys at several depths, pretty-printed",
     json.dumps(ign(v6, bogus=1, storage={"files": [{"path": "/a", "extra": True, "contents": {"source": "data:,x", "srcs": []}}],
                                          "luks": [{"name": "l", "device": "/dev/sdb", "cex": {"enabled": False, "domain": 3}}]},
                    systemd={"units": [{"name": "a.service", "enable": True}]},
                    passwd={"users": [{"name": "u", "ssh_keys": []}]}), indent=2))
case("unused-keys-tabs-3.5", "unknown keys, tab-indented",
     json.dumps(ign(v5, kernelArguments={"shouldExist": ["a"], "mustExist": ["b"]},
                    ignition2={"x": 1}), indent="\t"))
case("unused-keys-crlf-3.7", "unknown keys with CRLF line ends",
     json.dumps(ign(v7, storage={"directories": [{"path": "/d", "owner": "root"}]}), indent=1).replace("\n", "\r\n"))
case("unused-key-with-error-3.6", "an unknown key beside a path error, pretty-printed",
     json.dumps(ign(v6, storage={"files": [{"path": "rel", "verbose": True}]}), indent=4))
case("unused-in-unused-3.6", "an unknown key holding an object: only the outer key is reported",
     ign(v6, extra={"storage": {"files": [{"path": "rel"}]}}))
case("unused-version-case-3.6", "ignition.Version in another case beside version",
     '{"ignition":{"version":"3.6.0","Version":"3.6.0"}}')

# --- errors on many lines, the new versions
case("multi-errors-pretty-3.6", "errors across every section, pretty-printed",
     json.dumps(ign(v6, ignition={"version": v6, "config": {"merge": [{"source": "ftp://x"}]}, "proxy": {"httpsProxy": "socks://p"}},
                    kernelArguments={"shouldExist": ["a", "a"], "shouldNotExist": ["a"]},
                    passwd={"users": [{"name": "u"}, {"name": "u"}]},
                    storage={"files": [{"path": "rel", "mode": 99999}, {"path": "/x", "contents": {"source": "data:,%zz"}}],
                             "links": [{"path": "/l"}], "disks": [{"device": "sdb"}],
                             "luks": [{"name": "a/b", "cex": {"enabled": True}, "keyFile": {"source": "data:,k"}}],
                             "filesystems": [{"device": "/dev/sdc", "format": "ntfs"}]},
                    systemd={"units": [{"name": "x.bad", "contents": "[Unit"}]}), indent=2))
case("multi-errors-3.7exp-compact", "errors across sections on one line, 3.7.0-experimental",
     ign(v7, storage={"files": [{"path": "/a/../b", "mode": -5}], "directories": [{"path": "/a/"}],
                      "raid": [{"name": "md", "level": "raid9", "devices": []}]}))
case("multi-warnings-only-3.5", "only warnings, 3.5.0 (special bits, unit without Install, fs on partitioned disk)",
     json.dumps(ign(v5, storage={"files": [{"path": "/f", "mode": 4095}],
                                 "disks": [{"device": "/dev/sdb", "partitions": [{"number": 1}]}],
                                 "filesystems": [{"device": "/dev/sdb", "format": "ext4"}]},
                    systemd={"units": [{"name": "a.service", "enabled": True, "contents": "[Unit]\nDescription=a\n"}]}), indent=2))

# --- kernel arguments, units, passwd in the new versions
for v in V:
    s = SHORT[v]
    case(f"kargs-both-lists-{s}", f"{v}: one argument in shouldExist and shouldNotExist",
         ign(v, kernelArguments={"shouldExist": ["quiet", "x=1"], "shouldNotExist": ["x=1"]}))
    case(f"kargs-duplicates-{s}", f"{v}: duplicates within each list",
         ign(v, kernelArguments={"shouldExist": ["a", "a"], "shouldNotExist": ["b", "b"]}))
    case(f"unit-rules-{s}", f"{v}: unit name, contents, dropins and enabled without Install",
         ign(v, systemd={"units": [{"name": "a", "contents": "[Unit]\n"},
                                   {"name": "b.service", "contents": "[Unit"},
                                   {"name": "c.service", "enabled": True, "contents": "[Service]\nExecStart=/bin/true\n"},
                                   {"name": "d.service", "dropins": [{"name": "x"}, {"name": "y.conf", "contents": "[Unit"}, {"name": "y.conf"}]},
                                   {"name": "c.service"}]}))
case("kargs-empty-strings-3.6", "empty kernel arguments",
     ign(v6, kernelArguments={"shouldExist": [""], "shouldNotExist": [""]}))
case("unit-path-conflict-3.6", "a file at a unit's path",
     ign(v6, systemd={"units": [{"name": "a.service", "contents": "[Unit]\n", "dropins": [{"name": "b.conf", "contents": "[Unit]\n"}]}]},
         storage={"files": [{"path": "/etc/systemd/system/a.service"}], "directories": [{"path": "/etc/systemd/system/a.service.d/b.conf"}]}))
case("unit-template-enabled-3.7exp", "an enabled template instance without Install",
     ign(v7, systemd={"units": [{"name": "a@b.service", "enabled": True, "contents": "[Service]\nExecStart=/x\n"}]}))
case("passwd-duplicates-3.5", "duplicate users, groups and keys",
     ign(v5, passwd={"users": [{"name": "a", "sshAuthorizedKeys": ["k", "k"], "groups": ["g", "g"]}, {"name": "a"}],
                     "groups": [{"name": "g"}, {"name": "g"}]}))

# --- storage in the new versions
case("luks-rules-3.6", "luks name with a slash, long label, relative device, duplicate names",
     ign(v6, storage={"luks": [{"name": "a/b", "label": "x" * 48, "device": "sdb"}, {"name": "c", "device": "/dev/sdc"}, {"name": "c", "device": "/dev/sdd"}]}))
case("tang-rules-3.7exp", "tang url scheme, thumbprint missing, duplicate urls",
     ign(v7, storage=luks(clevis={"tang": [{"url": "ftp://t"}, {"url": "http://t", "thumbprint": "x"}, {"url": "http://t", "thumbprint": "y"}]})))
case("partitions-3.6", "partition rules in 3.6.0",
     ign(v6, storage={"disks": [{"device": "/dev/sdb", "partitions": [{"number": 1, "label": "a:b"}, {"number": 1}, {"label": "x" * 37},
                                                                      {"number": 2, "shouldExist": False, "sizeMiB": 5}, {}]}]}))
case("filesystems-3.5", "filesystem rules in 3.5.0",
     ign(v5, storage={"filesystems": [{"device": "/dev/sdb", "format": "ext4", "label": "x" * 17}, {"device": "/dev/sdb", "format": "xfs"},
                                      {"device": "/dev/sdc", "path": "rel", "format": "none"}, {"device": "/dev/sdd", "path": "/p"}]}))
case("raid-3.6", "raid rules in 3.6.0",
     ign(v6, storage={"raid": [{"name": "md", "level": "raid0", "devices": ["/dev/a"], "spares": 1}, {"name": "md", "devices": ["a", "/dev/b", "/dev/b"]}]}))
case("links-3.6", "link rules in 3.6.0: below a link, hard link to a directory, owner on a hard link",
     ign(v6, storage={"links": [{"path": "/l", "target": "/t"}, {"path": "/l/m", "target": "/t"},
                                {"path": "/h", "target": "/d", "hard": True, "user": {"name": "u"}}],
                      "directories": [{"path": "/d"}], "files": [{"path": "/l/f"}]}))
case("file-rules-3.5", "file rules in 3.5.0: overwrite without source, hash without source, bad compression",
     ign(v5, storage={"files": [{"path": "/a", "overwrite": True}, {"path": "/b", "contents": {"verification": {"hash": "sha512-00"}}},
                                {"path": "/c", "contents": {"source": "data:,x", "compression": "xz"}}, {"path": "/a"}]}))
case("unicode-path-positions-3.6", "errors after multi-byte characters (byte columns)",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"path":"/é/ü","mode":"x"}]}}')
case("unicode-unused-key-3.6", "an unused key after multi-byte characters",
     '{"ignition":{"version":"3.6.0"},"storage":{"files":[{"path":"/été","bogüs":1}]}}')
case("arn-3.6", "arn sources in 3.6.0",
     ign(v6, storage={"files": [{"path": "/a", "contents": {"source": "arn:aws:s3:::b/k"}},
                                {"path": "/b", "contents": {"source": "arn:aws:s3:us-east-1:1:accesspoint/ap"}},
                                {"path": "/c", "contents": {"source": "arn:aws:ec2:::b/k"}}]}))
case("headers-3.7exp", "http headers rules in 3.7.0-experimental",
     ign(v7, storage={"files": [{"path": "/a", "contents": {"source": "https://h/x", "httpHeaders": [{"name": "A", "value": "1"}, {"name": "A"}, {"name": ""}]}},
                                {"path": "/b", "contents": {"source": "s3://b/k", "httpHeaders": [{"name": "B", "value": "1"}]}}]}))
case("proxy-3.5", "proxy rules in 3.5.0",
     {"ignition": {"version": v5, "proxy": {"httpProxy": "ftp://p", "httpsProxy": "http://p", "noProxy": ["a", "a"]}}})
case("timeouts-3.6", "timeouts as strings in 3.6.0",
     '{"ignition":{"version":"3.6.0","timeouts":{"httpTotal":"10"}}}')


# --- hostile shapes compared against the reference: links at / and hard links, unit names and
# contents, reports upstream makes twice
case("hardlink-to-duplicated-dir-3.6", "a hard link to a directory listed twice: reported once per entry",
     ign(v6, storage={"directories": [{"path": "/d"}, {"path": "/d"}, {"path": "/d/"}], "links": [{"path": "/l", "target": "/d/", "hard": True}]}))
case("link-without-path-3.6", "a hard link without a path: every directory is below it",
     ign(v6, storage={"directories": [{"path": "/d"}, {"path": "/d"}], "links": [{"target": "/d", "hard": True}]}))
case("link-root-hard-3.7exp", "a hard link at /", ign(v7, storage={"links": [{"path": "/", "target": "/x", "hard": True}]}))
case("file-and-dir-at-root-3.6", "a file and a directory at /", ign(v6, storage={"files": [{"path": "/"}], "directories": [{"path": "/"}]}))
case("hardlink-relative-target-3.5", "relative hard-link targets are joined to the link path",
     ign(v5, storage={"links": [{"path": "/a/l", "target": "../d", "hard": True}, {"path": "/b/l", "target": "d", "hard": True}],
                      "directories": [{"path": "/d"}, {"path": "/b/l/d"}]}))
case("link-dotdot-path-3.6", "a link path with ..", ign(v6, storage={"links": [{"path": "/a/..", "target": "/x"}]}))
case("link-over-unit-dir-3.6", "a link at /etc/systemd/system and a unit",
     ign(v6, storage={"links": [{"path": "/etc/systemd/system", "target": "/x"}]}, systemd={"units": [{"name": "a.service", "contents": "[Unit]\n"}]}))
case("link-at-unit-path-3.6", "a link at a unit's path, the unit without contents",
     ign(v6, storage={"links": [{"path": "/etc/systemd/system/a.service", "target": "/x"}]}, systemd={"units": [{"name": "a.service", "enabled": True}]}))
for nm, label in [("a.Service", "case"), (".service", "no-stem"), ("a/b.service", "slash"), ("a@b@c.service", "two-at"),
                  ("a b.service", "space"), ("a.netdev", "netdev"), ("a.link", "link"), ("a.nspawn", "nspawn"), ("x" * 300 + ".service", "long")]:
    case(f"unit-name-{label}-3.6", f"unit named {nm[:24]}", ign(v6, systemd={"units": [{"name": nm, "contents": "[Unit]\n"}]}))
    case(f"dropin-name-{label}-3.6", f"dropin named {nm[:24]}", ign(v6, systemd={"units": [{"name": "a.service", "dropins": [{"name": nm, "contents": "[Unit]\n"}]}]}))
for label, text in [("empty", ""), ("no-equals", "[Unit]\nDescription\n"), ("continued-at-end", "[Unit]\nA=b\\"), ("section-no-newline", "[Unit]"),
                    ("nested-brackets", "[[Unit]]\n"), ("text-after-section", "[Unit] x\n"), ("line-over-64k", "[Unit]\nA=" + "x" * 70000 + "\n"),
                    ("bom", "\ufeff[Unit]\n"), ("crlf", "[Unit]\r\nA=b\r\n"), ("install-lower-case", "[install]\nWantedBy=a\n"),
                    ("install-empty", "[Install]\n"), ("empty-section-name", "[]\n")]:
    case(f"unit-contents-{label}-3.6", f"enabled unit with contents: {label}",
         ign(v6, systemd={"units": [{"name": "a.service", "enabled": True, "contents": text}]}))
case("double-reports-3.6", "bad sources in merge, replace, CA and key file (some reported twice)",
     {"ignition": {"version": v6, "config": {"merge": [{"source": "ftp://x", "verification": {"hash": "md5-0"}}, {"source": "ftp://x"}],
                                               "replace": {"source": "gopher://x", "compression": "xz", "httpHeaders": [{"name": "a"}]}},
                   "security": {"tls": {"certificateAuthorities": [{"source": ""}, {"compression": "gzip"}]}}},
      "storage": {"luks": [{"name": "a", "device": "/dev/sda", "keyFile": {"source": "ftp://x", "compression": "bz2", "verification": {"hash": "sha512-1"}}}]}})
case("tang-advertisement-kinds-3.7exp", "tang advertisements: array, number, padded object, empty",
     ign(v7, storage=luks(clevis={"tang": [{"url": "http://t", "thumbprint": "x", "advertisement": "[]"}, {"url": "http://u", "thumbprint": "x", "advertisement": "1"},
                                           {"url": "http://v", "thumbprint": "x", "advertisement": " {} "}, {"url": "http://w", "thumbprint": "x", "advertisement": ""}]})))
case("deep-under-unknown-key-3.6", "5000 nested arrays under an unknown key (Go reads 10,000 levels)",
     '{"ignition":{"version":"3.6.0"},"x":' + "[" * 5000 + "]" * 5000 + "}")
case("too-deep-3.6", "10,001 nested arrays: exceeded max depth",
     '{"ignition":{"version":"3.6.0"},"x":' + "[" * 10001 + "]" * 10001 + "}")

case("type-uid-100-digits-3.6", "a 100-digit uid is quoted whole in Go's message",
     '{"ignition":{"version":"3.6.0"},"passwd":{"users":[{"name":"a","uid":' + "9" * 100 + '}]}}')
case("type-partition-number-huge-3.7exp", "a partition number past 64 bits, negative",
     '{"ignition":{"version":"3.7.0-experimental"},"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":-' + "9" * 80 + '}]}]}}')


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    oracle = os.path.abspath(sys.argv[1])
    for d in os.listdir(HERE):
        if d[:3].isdigit() and os.path.isdir(os.path.join(HERE, d)):
            shutil.rmtree(os.path.join(HERE, d))
    lines = []
    for i, (name, desc, data) in enumerate(CASES, 1):
        d = os.path.join(HERE, "%03d-%s" % (i, name))
        os.makedirs(d)
        with open(os.path.join(d, "in.ign"), "wb") as f:
            f.write(data)
        p = subprocess.run([oracle, "in.ign"], cwd=d, capture_output=True)
        with open(os.path.join(d, "expected"), "wb") as f:
            f.write(b"%d\n" % p.returncode + p.stdout + p.stderr)
        lines.append("- `%03d-%s` (%d) %s" % (i, name, p.returncode, desc))
    readme = os.path.join(HERE, "README.md")
    text = open(readme).read()
    head = text.split("## Cases")[0]
    with open(readme, "w") as f:
        f.write(head + "## Cases (exit code, description)\n\n" + "\n".join(lines) + "\n")
    print("%d cases" % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
