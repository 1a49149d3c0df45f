"""Upstream Ignition's own provisioning scenarios that need no disk, on a directory root.

    FILES_SUITE=upstream python3 tests/differential/difftest.py files --corpora-only --jobs 1 --out DIR
    (FILES_ONLY=REGEX runs the scenarios whose name matches)

The scenarios are those of coreos/ignition's blackbox tests (tests/positive and
tests/negative: files, general, passwd, systemd, security/tls, proxy/http, timeouts,
cmdline), described here as facts: the nodes the ROOT filesystem holds before the run, the
config (`$version` and the server placeholders below substituted), the system config
directory files, the environment and kernel command line, whether upstream expects the run
to fail, and some of the files upstream expects afterwards (`want`, checked against the
reference only: a miss is printed as a note, not counted).

Each scenario runs at every config version from its minimum to the newest the reference
takes (3.7.0-experimental; a declared maximum is honoured), or once when it has no version.
The reference runs as upstream's framework runs it (platform `file`: the fetch then the
files stage, the config in IGNITION_CONFIG_FILE, the system config directories in
IGNITION_SYSTEM_*_CONFIG_DIR); flint runs as `flint apply --platform file` with the same
environment. Compared as the files campaign compares: success or failure, and for two
successes the tree left in the root (conformance/files/manifest.py).

Servers, on 127.0.0.1 for the duration of the suite (as upstream's tests/servers and the
test files' own httptest servers serve):
  $HTTP        :8080, upstream's fixed routes (/contents, /config, /certificates, their
               _compressed, _headers, _headers_redirect(ed), _headers_overwrite variants,
               /caBundle); header checks answer 400 as upstream's do
  $TFTP        :69/udp, any name with "contents" or "config" in it, else a TFTP error
  $TLS1 $TLS2  HTTPS with upstream's two self-signed certificates (SAN 127.0.0.1), serving
               a small config each
  $PROXY_OK    answers every request (a proxied one too) with a config writing /bar/foo
  $PROXY_DOWN  answers 503 "Proxy is unavailable"
  $SLOW11 $SLOW2   an empty 200 after 11 s / 2 s
  $THROTTLED   500 until a path is asked again more than 4 s after its last 500, then 200
               (reset before each implementation's run)
  $CFG_SLOW    after 2 s, a config merging itself with 1 s timeouts (its version field is
               the literal text "$version", as upstream's server sends it)
  $CFG_NODELAY at once, malformed JSON naming $CFG_EMPTY_SLOW (as upstream's)
"""
import base64
import ctypes
import hashlib
import gzip
import json
import multiprocessing
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0-experimental"]
# upstream's two TLS certificates and keys, beside the references (../shared)
FIXTURES = os.environ.get("BLACKBOX_FIXTURES", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "shared", "blackbox-fixtures"))
if not os.path.isdir(FIXTURES):
    FIXTURES = "/work/shared/blackbox-fixtures"

# ---------------------------------------------------------------- served bodies
SERVED_CONFIG = (b'{\n\t"ignition": { "version": "3.0.0" },\n\t"storage": {\n\t\t"files": [{\n'
                 b'\t\t\t"path": "/foo/bar",\n\t\t\t"contents": { "source": "data:,example%20file%0A" }\n'
                 b'\t\t}]\n\t}\n}')
SERVED_CONTENTS = b"asdf\nfdsa"


def _small_config(path, text, version="3.0.0"):
    return json.dumps({"ignition": {"version": version},
                       "storage": {"files": [{"path": path, "contents": {
                           "source": "data:," + urllib.parse.quote(text)}}]}}).encode()


TLS1_BODY = _small_config("/foo/bar", "example file\n")
TLS2_BODY = _small_config("/foo/bar2", "example file2\n")
PROXY_BODY = _small_config("/bar/foo", "example file proxy\n", "3.1.0")


def _read(p):
    with open(p, "rb") as f:
        return f.read()


def pubkey():
    return _read(os.path.join(FIXTURES, "tls1.crt"))


def cabundle():
    return pubkey() + b"\n" + _read(os.path.join(FIXTURES, "tls2.crt"))


def dataurl(b):
    """What upstream's dataurl.EncodeBytes gives."""
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(b).decode()


def gz(b):
    return gzip.compress(b)


# ---------------------------------------------------------------- servers
class Quiet(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _first(h, name):
    v = h.get_all(name)
    return v[0] if v else None


def _mismatch(h, want):
    """The first header of `want` missing from `h` or with another value, said as upstream's
    server says it."""
    for k, v in want.items():
        got = _first(h, k)
        if got is None:
            return k + " header is missing"
        if got != v:
            return k + " header value is incorrect"
    return None


def _header_problem(h):
    """upstream's headerCheck: the config's headers and Ignition's own, as sent."""
    problem = _mismatch(h, {"X-Auth": "r8ewap98gfh4d8", "Keep-Alive": "300",
                            "Accept": "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1",
                            "Accept-Encoding": "identity"})
    if problem:
        return problem
    ua = _first(h, "User-Agent")
    if ua is None:
        return "User-Agent header is missing"
    if not ua.startswith("Ignition/"):
        return "User-Agent header value is incorrect"
    return None


def _overwritten_problem(h):
    return _mismatch(h, {"Keep-Alive": "1000", "Accept": "application/json",
                         "Accept-Encoding": "identity, compress", "User-Agent": "MyUA"})


def _redirected_problem(h):
    for k in ("X-Auth", "Keep-Alive"):
        if _first(h, k) is not None:
            return "Found redundant header " + k
    return None


class Main(Quiet):
    """upstream's server on :8080."""

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        kinds = {"contents": SERVED_CONTENTS, "config": SERVED_CONFIG, "certificates": pubkey()}
        if path == "/caBundle":
            return self.reply(200, cabundle())
        m = re.fullmatch(r"/(contents|config|certificates)(_compressed|_headers|_headers_redirect|"
                         r"_headers_redirected|_headers_overwrite)?", path)
        if not m:
            return self.reply(404, b"404 page not found\n")
        body, how = kinds[m.group(1)], m.group(2) or ""
        problem = None
        if how == "_compressed":
            body = gz(body)
        elif how == "_headers":
            problem = _header_problem(self.headers)
        elif how == "_headers_redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:8080/%s_headers_redirected" % m.group(1))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        elif how == "_headers_redirected":
            problem = _redirected_problem(self.headers)
        elif how == "_headers_overwrite":
            problem = _overwritten_problem(self.headers)
        if problem:
            # upstream writes the error, then the body after it, with status 400
            return self.reply(400, problem.encode() + body)
        return self.reply(200, body)


class Fixed(Quiet):
    body = b""
    code = 200
    delay = 0

    def do_GET(self):
        if self.delay:
            time.sleep(self.delay)
        self.reply(self.code, self.body)


def fixed(body=b"", code=200, delay=0):
    return type("F", (Fixed,), {"body": body, "code": code, "delay": delay})


class Throttled(Quiet):
    last = {}
    lock = threading.Lock()

    def do_GET(self):
        if self.path.startswith("/__reset/"):
            # /__reset/PATH forgets PATH (before each implementation's run)
            with self.lock:
                self.last.pop(self.path[len("/__reset"):], None)
            return self.reply(200)
        with self.lock:
            t = self.last.get(self.path)
            if t is not None and time.time() - t > 4:
                code = 200
            else:
                code = 500
                self.last[self.path] = time.time()
        self.reply(code)


class Tftp(threading.Thread):
    """A read-only TFTP server (RFC 1350, octet, 512-byte blocks) as upstream's: names with
    "contents" give the contents, with "config" the config, others an error."""
    daemon = True

    def __init__(self, port=69):
        super().__init__()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))

    def run(self):
        while True:
            try:
                pkt, peer = self.sock.recvfrom(2048)
            except OSError:
                return
            if pkt[:2] == b"\x00\x01":
                threading.Thread(target=self.send, args=(pkt[2:], peer), daemon=True).start()

    def send(self, req, peer):
        name = req.split(b"\x00")[0].decode("utf-8", "replace")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(1)
        try:
            if "contents" in name:
                data = SERVED_CONTENTS
            elif "config" in name:
                data = SERVED_CONFIG
            else:
                s.sendto(b"\x00\x05\x00\x01" + ("no such file %r" % name).encode() + b"\x00", peer)
                return
            block = 1
            while True:
                chunk = data[(block - 1) * 512:block * 512]
                pkt = b"\x00\x03" + block.to_bytes(2, "big") + chunk
                for _ in range(5):
                    s.sendto(pkt, peer)
                    try:
                        ack, _ = s.recvfrom(516)
                    except socket.timeout:
                        continue
                    if ack[:2] == b"\x00\x04" and int.from_bytes(ack[2:4], "big") == block:
                        break
                else:
                    return
                if len(chunk) < 512:
                    return
                block += 1
        finally:
            s.close()

    def close(self):
        self.sock.close()


class Servers:
    def __init__(self):
        self.http = []
        self.urls = {}
        self.tftp = None

    def serve(self, handler, port=0, tls=None):
        srv = ThreadingHTTPServer(("127.0.0.1", port), handler)
        srv.daemon_threads = True
        scheme = "http"
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(os.path.join(FIXTURES, tls + ".crt"), os.path.join(FIXTURES, tls + ".key"))
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
            scheme = "https"
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.http.append(srv)
        return "%s://127.0.0.1:%d" % (scheme, srv.server_address[1])

    def start(self):
        u = self.urls
        u["HTTP"] = self.serve(Main, 8080)
        self.tftp = Tftp()
        self.tftp.start()
        u["TFTP"] = "tftp://127.0.0.1:69"
        u["TLS1"] = self.serve(fixed(TLS1_BODY), tls="tls1")
        u["TLS2"] = self.serve(fixed(TLS2_BODY), tls="tls2")
        u["PROXY_OK"] = self.serve(fixed(PROXY_BODY))
        u["PROXY_DOWN"] = self.serve(fixed(b"Proxy is unavailable\n", 503))
        u["SLOW11"] = self.serve(fixed(b"", 200, 11))
        u["SLOW2"] = self.serve(fixed(b"", 200, 2))
        u["THROTTLED"] = self.serve(Throttled)
        # the slow config names itself: bind first, then give the handler its body
        slow = ThreadingHTTPServer(("127.0.0.1", 0), Fixed)
        url = "http://127.0.0.1:%d" % slow.server_address[1]
        slow.RequestHandlerClass = fixed((
            '{"ignition": {"version": "$version", "config": {"merge": [{"source": %s}]}, '
            '"timeouts": {"httpResponseHeaders": 1, "httpTotal": 1}}}' % json.dumps(url)).encode(), 200, 2)
        slow.daemon_threads = True
        threading.Thread(target=slow.serve_forever, daemon=True).start()
        self.http.append(slow)
        u["CFG_SLOW"] = url
        u["CFG_EMPTY_SLOW"] = self.serve(fixed(b'{"ignition": {"version": "$version"}}', 200, 2))
        # malformed as upstream's: `"ignition":` is not followed by an object
        u["CFG_NODELAY"] = self.serve(fixed((
            '{\n"ignition": \n"version": "$version",\n"config": {"merge": [{"source": %s}]}\n}\n}'
            % json.dumps(u["CFG_EMPTY_SLOW"])).encode()))
        pk, bundle = pubkey(), cabundle()
        u["CA1"] = dataurl(pk)
        u["CA_BUNDLE"] = dataurl(bundle)
        u["H_CONTENTS512"] = hashlib.sha512(SERVED_CONTENTS).hexdigest()
        u["H_CONTENTS256"] = hashlib.sha256(SERVED_CONTENTS).hexdigest()
        u["H_CONFIG512"] = hashlib.sha512(SERVED_CONFIG).hexdigest()
        u["H_PUBKEY512"] = hashlib.sha512(pk).hexdigest()

    def stop(self):
        for s in self.http:
            s.shutdown()
            s.server_close()
        if self.tftp:
            self.tftp.close()


# ---------------------------------------------------------------- scenario vocabulary
def F(path, contents=b"", mode=0, uid=0, gid=0):
    """A regular file of the starting root (upstream makes them mode 0 unless told)."""
    return ("file", path, contents.encode() if isinstance(contents, str) else contents, mode, uid, gid)


def L(path, target):
    return ("symlink", path, target)


def H(path, target):
    return ("hardlink", path, target)


def S(name, min_version, config, *, max_version=None, root=(), fail=False, system=None, env=None,
      cmdline=None, want=None, skip_critical=False, reset=False):
    return dict(name=name, min=min_version, max=max_version, config=config, root=list(root), fail=fail,
                system=system or {}, env=env or {}, cmdline=cmdline, want=want or {},
                skip_critical=skip_critical, reset=reset)


def ign(version="$version", **top):
    d = {"ignition": {"version": version}}
    for k, v in top.items():
        if k == "ignition_extra":
            d["ignition"].update(v)
        else:
            d[k] = v
    return d


def files(*entries, **other):
    st = {"files": list(entries)}
    st.update(other)
    return st


def src(source, **kw):
    return dict(kw, source=source)


EXAMPLE = "data:,example%20file%0A"
HELLO = "data:,hello%20world%0A"
ANOTHER = "data:,another%20example%20file%0A"
# sha512 of the served contents ("asdf\nfdsa"): right for them, wrong for anything else
CONTENTS512 = ("sha512-1a04c76c17079cd99e688ba4f1ba095b927d3fecf2b1e027af361dfeafb548f7f5f6fdd675aaa2563950"
          "db441d893ca77b0c3e965cdcb891784af96e330267d7")
GOOD_EXAMPLE512 = ("sha512-807e8ff949e61d23f5ee42a629ec96e9fc526b62f030cd70ba2cd5b9d97935461eacc29bf58bcd04"
                   "26e9e1fdb0eda939603ed52c9c06d0712208a15cd582c60e")
HEADERS = [{"name": "X-Auth", "value": "r8ewap98gfh4d8"}, {"name": "Keep-Alive", "value": "300"}]
BAD_HEADERS = [{"name": "X-Auth", "value": "INVALID"}, {"name": "Keep-Alive", "value": "300"}]
OVERWRITTEN = [{"name": "Keep-Alive", "value": "1000"}, {"name": "Accept", "value": "application/json"},
               {"name": "Accept-Encoding", "value": "identity, compress"}, {"name": "User-Agent", "value": "MyUA"}]
UNIT = ("[Unit]\nDescription=f\n[Service]\nType=oneshot\nExecStart=/usr/bin/true\n[Install]\n"
        "WantedBy=multi-user.target\n")
SSH_KEY = ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDBRZPFJNOvQRfokigTtl0IBi71LHZrFOk4EJ3Zowtk/bX5uIVai0Cd4+hq"
           "locYL10idgtFBH28skeKfsmHwgS9XwOvP+g+kqAl7yCz8JEzIUzl1fxNZDToi0jA3B5MwXkpt+IWfnabwi2cRZhlzrz9rO+"
           "eExu5s3NfaRmmmCYrjCJIRPKSCrW8U0n9fVSbX4PDdMXVmH7r+t8MtR8523vCbakFR/Y0YIqkPVdfuUXHh9rDCdH4B7mt7nY"
           "X2LWQXGUvmI13mgQoy04ifkaR3ImuOMp3Y1J1gm6clO74IMCq/sK9+XJhbxMPPHUoUJ2EwbaG7Dbh3iqz47e9oVki4gIH "
           "stephenlowrie@localhost.localdomain")

# upstream's starting account databases for the passwd scenarios
PASSWD = ("root:x:0:0:root:/root:/bin/bash\ncore:x:500:500:CoreOS Admin:/home/core:/bin/bash\n"
          "systemd-coredump:x:998:998:systemd Core Dumper:/:/sbin/nologin\nfleet:x:253:253::/:/sbin/nologin\n")
SHADOW = "root:*:15887:0:::::\ncore:*:15887:0:::::\nsystemd-coredump:!!:17301::::::\nfleet:!!:17301::::::\n"
GROUP = ("root:x:0:root\nwheel:x:10:root,core\nsudo:x:150:\ndocker:x:233:core\nsystemd-coredump:x:998:\n"
         "fleet:x:253:core\ncore:x:500:\nrkt-admin:x:999:\nrkt:x:251:core\n")
GSHADOW = ("root:*::root\nusers:*::\nsudo:*::\nwheel:*::root,core\nsudo:*::\ndocker:*::core\n"
           "systemd-coredump:!!::\nfleet:!!::core\nrkt-admin:!!::\nrkt:!!::core\ncore:*::\n")
NSSWITCH = ("# /etc/nsswitch.conf:\n\npasswd:      files\nshadow:      files\ngroup:       files\n\n"
            "hosts:       files dns myhostname\nnetworks:    files dns\n\nservices:    files\nprotocols:   files\n"
            "rpc:         files\n\nethers:      files\nnetmasks:    files\nnetgroup:    files\nbootparams:  files\n"
            "automount:   files\naliases:     files\n")
LOGIN_DEFS = ("MAIL_DIR\t/var/spool/mail\nPASS_MAX_DAYS\t99999\nPASS_MIN_DAYS\t0\nPASS_MIN_LEN\t5\nPASS_WARN_AGE\t7\n"
              "UID_MIN                  1000\nUID_MAX                 60000\nSYS_UID_MIN               201\n"
              "SYS_UID_MAX               999\nGID_MIN                  1000\nGID_MAX                 60000\n"
              "SYS_GID_MIN               201\nSYS_GID_MAX               999\nCREATE_HOME\tyes\nUMASK           077\n"
              "USERGROUPS_ENAB yes\nENCRYPT_METHOD SHA512\n")
JENKINS_PW = "jenkins:x:1020:1001::/:/bin/bash\n"
JENKINS_SH = "jenkins:*:17331:0:99999:7:::\n"


def accounts(passwd=PASSWD, shadow=SHADOW, group=GROUP, gshadow=GSHADOW, extra=()):
    out = []
    if passwd is not None:
        out += [F("/etc/passwd", passwd), F("/etc/shadow", shadow)]
    out += [F("/etc/group", group), F("/etc/gshadow", gshadow)]
    return out + list(extra)


def _ucfg(path, text):
    """A 3.0.0 config writing TEXT at PATH with overwrite (the multidir and preemption ones)."""
    return json.dumps({"ignition": {"version": "3.0.0"}, "storage": {"files": [
        {"path": path, "contents": {"source": "data:," + text}, "overwrite": True}]}})


def _frag(path, text):
    return json.dumps({"ignition": {"version": "3.0.0"}, "storage": {"files": [
        {"path": path, "contents": {"source": "data:," + urllib.parse.quote(text)}}]}})


# The config a data URL of upstream's config.replace/merge.dataurl holds (with its stray
# "filesystem" key, as upstream's).
DATAURL_CONFIG = ("data:," + urllib.parse.quote(
    '{"ignition":{"version": "3.0.0"},"storage": {"files": [{"filesystem": "root","path": "/foo/bar",'
    '"contents":{"source":"data:,another%20example%20file%0A"}}]}}\n', safe=""))

ASDF = {"/foo/bar": "asdf\nfdsa"}
EX = {"/foo/bar": "example file\n"}
EX_MERGED = {"/foo/bar": "example file\n", "/foo/bar2": "another example file\n"}
PERMS = [("setuidsetgid", 0o3565, 0o6755), ("setuid", 0o2541, 0o4755), ("setgid", 0o1517, 0o2755)]


def _perm_files():
    out = []
    for name, mode, _ in PERMS:
        out += [{"path": "/foo/" + name, "contents": {"source": HELLO}, "mode": mode},
                {"path": "/foo/auser/" + name, "contents": {"source": HELLO}, "mode": mode,
                 "user": {"id": 1001}, "group": {"id": 1001}},
                {"path": "/foo/root/" + name, "contents": {"source": HELLO}, "mode": mode,
                 "user": {"id": 0}, "group": {"id": 0}}]
    return out


PERM_PASSWD = {"users": [{"name": "auser", "uid": 1001, "shouldExist": False}],
               "groups": [{"name": "auser", "gid": 1001, "shouldExist": False}]}


def scenarios():
    T = []
    # ---------------------------------------------------------------- files (positive)
    T += [
        S("files.create", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src(EXAMPLE)})), want=EX),
        S("files.create.base64", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("data:;base64,ZXhhbXBsZSBmaWxlCg==")})), want=EX),
        S("files.owner.byid", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src(EXAMPLE), "user": {"id": 500}, "group": {"id": 500}})), want=EX),
        S("files.create.force", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("$HTTP/contents"), "overwrite": True})),
          root=[F("/foo/bar", "hello, world")], want=ASDF),
        S("files.append.withcreate", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src(EXAMPLE), "user": {"id": 500}, "group": {"id": 500},
             "append": [src(HELLO)]})), want={"/foo/bar": "example file\nhello world\n"}),
        S("files.append.existing", "3.0.0", ign(storage=files({"path": "/foo/bar", "append": [src(HELLO)]})),
          root=[F("/foo/bar", "example file\n", 0, 500, 500)], want={"/foo/bar": "example file\nhello world\n"}),
        S("files.append.nonexistent", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "append": [src(HELLO)], "group": {"id": 500}})), want={"/foo/bar": "hello world\n"}),
        S("files.defaultperms", "3.0.0", ign(storage=files(
            {"filesystem": "root", "path": "/foo/bar", "contents": src(HELLO)})), want={"/foo/bar": "hello world\n"}),
        S("files.customperms", "3.6.0", ign(passwd=PERM_PASSWD, storage=files(*_perm_files()))),
        S("files.customperms.pre-#2042-fix", "3.2.0", ign(passwd=PERM_PASSWD, storage=files(*_perm_files())),
          max_version="3.5.0"),
        S("files.create.compressed", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "data:,%1F%8B%08%08%90e%AB%5E%02%03z%00K%ADH%CC-%C8IUH%CB%CCI%E5%02%00tp%A6%CB%0D%00%00%00",
            compression="gzip")})), want=EX),
        # directories
        S("directories.create", "3.0.0", ign(storage={"directories": [{"path": "/foo/bar"}]})),
        S("directories.create.force", "3.0.0", ign(storage={"directories": [{"path": "/foo/bar", "overwrite": True}]}),
          root=[F("/foo/bar", "hello, world")]),
        S("directories.match.overwrite", "3.0.0",
          ign(storage={"directories": [{"path": "/foo/bar", "overwrite": True}]}),
          root=[F("/foo/bar/baz", "hello, world")]),
        S("directories.match", "3.0.0", ign(storage={"directories": [{"path": "/foo/bar", "mode": 0o777}]}),
          root=[F("/foo/bar/baz", "hello, world")]),
        S("directories.ordering", "3.0.0", ign(storage={"directories": [
            {"path": "/foo/bar/baz", "mode": 0o777, "overwrite": False},
            {"path": "/baz/quux", "mode": 0o755, "overwrite": False}]}),
          root=[L("/foo/bar", "/")]),
        S("directories.defaultperms", "3.0.0", ign(storage={"directories": [{"filesystem": "root", "path": "/foo/bar"}]})),
        # hashes
        S("files.create.withhash.dataurl", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            EXAMPLE, verification={"hash": GOOD_EXAMPLE512})})), want=EX),
        S("files.create.withhash.dataurl.sha256", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            EXAMPLE, verification={
                "hash": "sha256-352cb4e231c03f9941d54aeee7da755504a7f2096338c609ba5d1b82143419c6"})})), want=EX),
        S("files.create.withhash.http", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents", verification={"hash": "sha512-$H_CONTENTS512"})})), want=ASDF),
        S("files.create.withhash.http.sha256", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents", verification={"hash": "sha256-$H_CONTENTS256"})})), want=ASDF),
        S("files.create.withhash.http.headers", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_headers", httpHeaders=HEADERS, verification={"hash": CONTENTS512})})), want=ASDF),
        # links
        S("links.hard.create", "3.0.0", ign(storage=files({"path": "/foo/target", "contents": src("$HTTP/contents")},
                                                          links=[{"path": "/foo/bar", "target": "/foo/target",
                                                                  "hard": True}]))),
        S("links.hard.match", "3.0.0", ign(storage={"links": [{"path": "/existing", "target": "/target", "hard": True}]}),
          root=[F("/target"), H("/existing", "/target")]),
        S("links.sym.create", "3.0.0", ign(storage={"links": [{"path": "/foo/bar", "target": "/foo/target",
                                                                "hard": False}]}),
          root=[F("/foo/target")], want={"/foo/bar": ("link", "/foo/target")}),
        S("links.sym.match", "3.0.0", ign(storage={"links": [{"path": "/existing", "target": "/target"}]}),
          root=[F("/target"), L("/existing", "/target")]),
        S("links.sym.create.force", "3.0.0", ign(storage=files(
            {"path": "/foo/target", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/bar", "target": "/foo/target", "overwrite": True}])),
          root=[F("/foo/bar", "asdf\nfdsa")], want={"/foo/bar": ("link", "/foo/target")}),
        S("links.hard.create.force", "3.0.0", ign(storage=files(
            {"path": "/foo/target", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/bar", "target": "/foo/target", "hard": True, "overwrite": True}])),
          root=[F("/foo/bar", "asdf\nfdsa")]),
        S("links.hard.deep.create.file", "3.0.0", ign(storage=files(
            {"path": "/foo/bar/baz", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/quux", "target": "/foo/bar/baz", "hard": True}]))),
        S("links.sym.writeover", "3.0.0", ign(storage=files(
            {"path": "/etc/file", "mode": 0o644, "overwrite": True, "contents": src("")})),
          root=[L("/etc/file", "/usr/rofile"), F("/usr/rofile", "", 0o644)], want={"/etc/file": ""}),
        S("links.sym.writeover.broken", "3.0.0", ign(storage=files(
            {"path": "/etc/file", "mode": 0o644, "overwrite": True, "contents": src("")})),
          root=[L("/etc/file", "/usr/rofile")], want={"/etc/file": ""}),
        S("links.hard.create.tosym", "3.0.0", ign(storage={"links": [{"path": "/foo", "target": "/bar", "hard": True}]}),
          root=[L("/bar", "nonexistent")]),
        # remote contents
        S("files.create.http", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src("$HTTP/contents")})),
          want=ASDF),
        S("files.create.http.compressed", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_compressed", compression="gzip", verification={"hash": "sha512-$H_CONTENTS512"})})),
          want=ASDF),
        S("files.create.http.headers", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_headers", httpHeaders=HEADERS)})), want=ASDF),
        S("files.create.http.headers.redirect", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_headers_redirect", httpHeaders=HEADERS)})), want=ASDF),
        S("files.create.http.headers.overwrite", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_headers_overwrite", httpHeaders=OVERWRITTEN)})), want=ASDF),
        S("files.create.tftp", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src("$TFTP/contents")})),
          want=ASDF),
        # units
        S("instantiated.unit.create", "3.0.0", ign(systemd={"units": [
            {"name": "echo@.service", "contents": "[Unit]\nDescription=f\n[Service]\nType=oneshot\n"
             "ExecStart=/bin/echo %i\nRemainAfterExit=yes\n[Install]\nWantedBy=multi-user.target\n"},
            {"enabled": True, "name": "echo@bar.service"}, {"enabled": True, "name": "echo@foo.service"}]}),
          want={"/etc/systemd/system-preset/20-ignition.preset": "enable echo@.service bar foo\n"}),
        S("unit.create.emptydropin", "3.0.0", ign(systemd={"units": [
            {"name": "zincati.service", "dropins": [{"name": "empty.conf", "contents": ""}]}]}),
          want={"/etc/systemd/system/zincati.service.d/empty.conf": ""}),
        S("unit.unmask", "3.0.0", ign(systemd={"units": [{"name": "foo.service", "mask": False},
                                                         {"name": "bar.service", "enabled": True, "mask": False}]}),
          root=[L("/etc/systemd/system/foo.service", "/dev/null"), F("/usr/lib/systemd/system/foo.service", UNIT),
                F("/usr/lib/systemd/system/bar.service", UNIT)],
          want={"/etc/systemd/system-preset/20-ignition.preset": "enable bar.service\n",
                "/etc/systemd/system/foo.service": None}),
        S("unit.mask", "3.0.0", ign(systemd={"units": [{"name": "foo.service", "mask": True},
                                                       {"name": "bar.service", "mask": True}]}),
          root=[F("/usr/lib/systemd/system/foo.service", UNIT)],
          want={"/etc/systemd/system/foo.service": ("link", "/dev/null"),
                "/etc/systemd/system/bar.service": ("link", "/dev/null")}),
        S("unit.remove.symlinks", "3.0.0", ign(systemd={"units": [{"enabled": False, "name": "foo.service"},
                                                                  {"enabled": False, "name": "enoent.service"}]}),
          root=[L("/etc/systemd/system/multi-user.target.wants/foo.service", "/usr/lib/systemd/system/foo.service"),
                F("/usr/lib/systemd/system/foo.service", UNIT)],
          want={"/etc/systemd/system/multi-user.target.wants/foo.service": None}),
        S("unit.presets.sorted", "3.0.0", ign(systemd={"units": [
            {"enabled": True, "name": n + ".service"} for n in ("foo", "bar", "qux", "baz", "garply")]}),
          want={"/etc/systemd/system-preset/20-ignition.preset":
                "enable bar.service\nenable baz.service\nenable foo.service\nenable garply.service\n"
                "enable qux.service\n"}),
    ]
    # ---------------------------------------------------------------- files (negative)
    T += [
        # upstream writes it on a filesystem it makes on EFI-SYSTEM at /tmp0; here under the root
        S("files.verification.badhash.dataurl", "3.0.0", ign(storage=files(
            {"path": "/tmp0/test", "contents": src("data:,asdf", verification={"hash": CONTENTS512})})), fail=True),
        S("files.verification.badhash.dataurl.sha256", "3.1.0", ign(storage=files(
            {"path": "/tmp0/test", "contents": src("data:,asdf", verification={
                "hash": "sha256-e57cc41647638ccb9fb6844f2810807bcaa2aa800438cfb065f17adf6afb48d0"})})), fail=True),
        S("files.verification.badhash.http", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("$HTTP/contents", verification={"hash": GOOD_EXAMPLE512})})),
          fail=True),
        S("files.verification.badhash.http.sha256", "3.1.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("$HTTP/contents", verification={
                "hash": "sha256-352cb4e231c03f9941d54aeee7da755504a7f2096338c609ba5d1b82143419c6"})})), fail=True),
        S("links.sym.overwritelink", "3.0.0", ign(storage=files({"path": "/etc/file", "overwrite": False,
                                                                 "mode": 0o644})),
          root=[L("/etc/file", "/usr/rofile")], fail=True),
        S("links.sym.resovledconflicts", "3.0.0", ign(storage=files({"path": "/foo/bar/baz"}, {"path": "/bar/baz"})),
          root=[L("/foo", "/")], fail=True),
        S("links.hard.badmatch", "3.0.0", ign(storage={"links": [{"path": "/existing", "target": "/target",
                                                                  "hard": True}]}),
          root=[F("/WrongTarget"), F("/target"), H("/existing", "/WrongTarget")], fail=True),
        S("links.sym.badmatch", "3.0.0", ign(storage={"links": [{"path": "/existing", "target": "/target"}]}),
          root=[L("/existing", "/WrongTarget")], fail=True),
        S("files.create.http.notfound", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src("$HTTP/asdf")})),
          fail=True),
        S("files.create.http.invalidheader", "3.1.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$HTTP/contents_headers", httpHeaders=BAD_HEADERS)})), fail=True),
        S("files.create.tftp.notfound", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src("$TFTP/asdf")})),
          fail=True),
        S("files.create.overwrite.false", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("$HTTP/contents"), "overwrite": False})),
          root=[F("/foo/bar")], fail=True),
        S("directories.create.overwrite.false", "3.0.0", ign(storage={"directories": [{"path": "/foo/bar"}]}),
          root=[F("/foo/bar", "hello, world")], fail=True),
        S("links.sym.create.overwrite.false", "3.0.0", ign(storage=files(
            {"path": "/foo/target", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/bar", "target": "/foo/target"}])),
          root=[F("/foo/bar", "asdf\nfdsa")], fail=True),
        S("links.hard.create.overwrite.false", "3.0.0", ign(storage=files(
            {"path": "/foo/target", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/bar", "target": "/foo/target", "hard": True}])),
          root=[F("/foo/bar", "asdf\nfdsa")], fail=True),
        S("files.creates.overwrite.false.overdir", "3.0.0", ign(storage=files(
            {"path": "/foo/bar", "contents": src("$HTTP/contents"), "overwrite": False})),
          root=[F("/foo/bar/baz", "asdf\nfdsa")], fail=True),
        S("links.sym.create.overwrite.false.overdir", "3.0.0", ign(storage=files(
            {"path": "/foo/target", "contents": src("$HTTP/contents")},
            links=[{"path": "/foo/bar", "target": "/foo/target"}])),
          root=[F("/foo/bar/baz", "asdf\nfdsa")], fail=True),
    ]
    # ---------------------------------------------------------------- general (positive)
    def cfgref(url, **kw):
        return src(url, **kw)

    bar2 = files({"path": "/foo/bar2", "contents": src(ANOTHER)})
    ch = {"hash": "sha512-$H_CONFIG512"}
    for kind, url, minv, extra in [
            ("http", "$HTTP/config", "3.0.0", {}),
            ("http.compressed", "$HTTP/config_compressed", "3.1.0", {"compression": "gzip"}),
            ("http.headers", "$HTTP/config_headers", "3.1.0", {"httpHeaders": HEADERS}),
            ("http.headers.redirect", "$HTTP/config_headers_redirect", "3.1.0", {"httpHeaders": HEADERS}),
            ("http.headers.overwrite", "$HTTP/config_headers_overwrite", "3.1.0", {"httpHeaders": OVERWRITTEN}),
            ("tftp", "$TFTP/config", "3.0.0", {})]:
        T.append(S("config.replace." + kind, minv, ign(ignition_extra={"config": {"replace": cfgref(
            url, verification=ch, **extra)}}), want=EX))
        T.append(S("config.merge." + kind, minv, ign(ignition_extra={"config": {"merge": [cfgref(
            url, verification=ch, **extra)]}}, storage=bar2), want=EX_MERGED))
    T += [
        S("config.replace.dataurl", "3.0.0", ign(ignition_extra={"config": {"replace": src(DATAURL_CONFIG)}}),
          want={"/foo/bar": "another example file\n"}),
        S("config.merge.dataurl", "3.0.0", ign(ignition_extra={"config": {"merge": [src(DATAURL_CONFIG)]}}),
          want={"/foo/bar": "another example file\n"}),
        S("general.versiononly", "3.0.0", ign()),
        S("general.empty", None, ""),
        S("merge.multiple.base.configs", "3.0.0", ign(), system={"vendor": {
            "base.d/40-base.ign": _frag("/foo/bar", "base config\n"),
            "base.d/50-base2.ign": _frag("/foo/bar2", "base config2\n"),
            "base.d/60-base3.ign": _frag("/foo/bar", "base config3\n"),
            "base.platform.d/file/10-plaform.ign": _frag("/foo/bar3", "platform config\n"),
            "base.platform.d/file/20-plaform2.ign": _frag("/foo/bar4", "platform config2\n"),
            "base.platform.d/file/30-plaform3.ign": _frag("/foo/bar2", "platform config3\n")}},
          want={"/foo/bar": "base config3\n", "/foo/bar2": "platform config3\n", "/foo/bar3": "platform config\n",
                "/foo/bar4": "platform config2\n"}),
        S("multidir.user.ign.from.local", "3.0.0", ign(), root=[F("/ignition/source", "unset")],
          system={"local": {"user.ign": _ucfg("/ignition/source", "local")}},
          want={"/ignition/source": "local"}),
        S("multidir.user.ign.runtime.overrides", "3.0.0", ign(), root=[F("/ignition/source", "unset")],
          system={"vendor": {"user.ign": _ucfg("/ignition/source", "vendor")},
                  "local": {"user.ign": _ucfg("/ignition/source", "local")},
                  "runtime": {"user.ign": _ucfg("/ignition/source", "runtime")}},
          want={"/ignition/source": "runtime"}),
        S("multidir.base.d.merged.across.dirs", "3.0.0", ign(),
          system={"vendor": {"base.d/40-base.ign": _frag("/foo/from-vendor", "vendor")},
                  "local": {"base.d/50-local.ign": _frag("/foo/from-local", "local")},
                  "runtime": {"base.d/40-base.ign": _frag("/foo/from-vendor", "runtime-override")}},
          want={"/foo/from-vendor": "runtime-override", "/foo/from-local": "local"}),
    ]
    # preemption: the provider config (the one given), user.ign and base.d/base.ign each write
    # their own file under /ignition; user.ign preempts the provider's
    longnames = {"b": "base", "u": "user", "p": "provider"}
    for comps in ("BP", "BUp", ""):
        low = comps.lower()
        name = "preemption." + (".".join(longnames[c] for c in low) or "no") + ".config"
        system = {}
        if "b" in low:
            system.setdefault("vendor", {})["base.d/base.ign"] = _ucfg("/ignition/base", "b")
        if "u" in low:
            system.setdefault("vendor", {})["user.ign"] = _ucfg("/ignition/user", "u")
        T.append(S(name, None, _ucfg("/ignition/provider", "p") if "p" in low else "",
                   root=[F("/ignition/" + n, "unset") for n in ("base", "user", "provider")], system=system,
                   want={"/ignition/" + longnames[c]: (c if c.upper() in comps else "unset") for c in "bup"}))
    # ---------------------------------------------------------------- general (negative)
    T += [
        S("config.replace.badhash", "3.0.0", ign(ignition_extra={"config": {"replace": src(
            "$HTTP/config", verification={"hash": CONTENTS512})}}), fail=True),
        S("config.merge.badhash", "3.0.0", ign(ignition_extra={"config": {"merge": [src(
            "$HTTP/config", verification={"hash": CONTENTS512})]}}, storage=bar2), fail=True),
        S("config.replace.http.notfound", "3.0.0", ign(ignition_extra={"config": {"replace": src("$HTTP/asdf")}}),
          fail=True),
        S("config.replace.http.invalidheader", "3.1.0", ign(ignition_extra={"config": {"replace": src(
            "$HTTP/config_headers", httpHeaders=BAD_HEADERS)}}), fail=True),
        S("config.replace.tftp.notfound", "3.0.0", ign(ignition_extra={"config": {"replace": src("$TFTP/asdf")}}),
          fail=True),
        S("config.merge.http.notfound", "3.0.0", ign(ignition_extra={"config": {"merge": [src("$HTTP/asdf")]}}),
          fail=True),
        S("config.merge.http.invalidheader", "3.1.0", ign(ignition_extra={"config": {"merge": [src(
            "$HTTP/config_headers", httpHeaders=BAD_HEADERS)]}}), fail=True),
        S("config.merge.tftp.notfound", "3.0.0", ign(ignition_extra={"config": {"merge": [src("$TFTP/asdf")]}}),
          fail=True),
        S("config.version.2.5.0-exp", None, ign("2.5.0-experimental"), fail=True),
        S("config.versions.3.8.0-exp", None, ign("3.8.0-experimental"), fail=True),
    ]
    # ---------------------------------------------------------------- passwd
    key_file = "/home/test/.ssh/authorized_keys.d/ignition"
    T += [
        S("users.add", "3.0.0", ign(passwd={"users": [
            {"name": "test", "passwordHash": "zJW/EKqqIk44o", "sshAuthorizedKeys": [SSH_KEY]},
            {"name": "jenkins", "uid": 1020, "shouldExist": True}]}),
          root=accounts(extra=[F("/etc/nsswitch.conf", NSSWITCH), F("/etc/login.defs", LOGIN_DEFS)]),
          env={"IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT": "true"}, want={key_file: SSH_KEY + "\n"}),
        S("users.delete", "3.2.0", ign(passwd={"users": [{"name": "jenkins", "shouldExist": False},
                                                         {"name": "test", "shouldExist": False}]}),
          root=accounts(PASSWD + JENKINS_PW, SHADOW + JENKINS_SH, GROUP + "jenkins:x:1001:\n", GSHADOW + "jenkins:!::\n"),
          want={"/etc/passwd": PASSWD, "/etc/group": GROUP, "/etc/shadow": SHADOW, "/etc/gshadow": GSHADOW}),
        S("groups.add", "3.0.0", ign(passwd={"groups": [{"name": "testgroup", "gid": 1500},
                                                        {"name": "systemgroup", "system": True}]}),
          root=accounts(passwd=None),
          want={"/etc/group": GROUP + "testgroup:x:1500:\nsystemgroup:x:201:\n",
                "/etc/gshadow": GSHADOW + "testgroup:!::\nsystemgroup:!::\n"}),
        S("groups.delete", "3.2.0", ign(passwd={"groups": [{"name": "jenkins", "shouldExist": False},
                                                           {"name": "test", "shouldExist": False}]}),
          root=accounts(PASSWD + JENKINS_PW, SHADOW + JENKINS_SH, GROUP + "jenkins:x:1001:\n", GSHADOW + "jenkins:!::\n"),
          want={"/etc/group": GROUP, "/etc/gshadow": GSHADOW}),
        S("groups.ensure.idempotent", "3.0.0", ign(passwd={"groups": [{"name": "existinggroup", "gid": 1500}]}),
          root=accounts(passwd=None, group=GROUP + "existinggroup:x:1500:\n", gshadow=GSHADOW + "existinggroup:!::\n"),
          want={"/etc/group": GROUP + "existinggroup:x:1500:\n"}),
        S("users.authorized_keys", "3.0.0", ign(passwd={"users": [
            {"name": "test", "passwordHash": "zJW/EKqqIk44o", "sshAuthorizedKeys": [SSH_KEY]}]}),
          root=accounts(), env={"IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT": "false"},
          want={"/home/test/.ssh/authorized_keys": SSH_KEY + "\n"}),
    ]
    # ---------------------------------------------------------------- systemd
    T += [
        S("systemd.unit.create", "3.0.0", ign(systemd={"units": [{"name": "example.service", "enabled": True,
                                                                  "contents": "[Service]\nType=oneshot\nExecStart=/usr/bin/echo Hello World\n\n[Install]\nWantedBy=multi-user.target"}]}),
          want={"/etc/systemd/system-preset/20-ignition.preset": "enable example.service\n"}),
        S("systemd.unit.modify", "3.0.0", ign(systemd={"units": [{"name": "systemd-journald.service", "dropins": [
            {"name": "debug.conf", "contents": "[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug"}]}]}),
          want={"/etc/systemd/system/systemd-journald.service.d/debug.conf":
                "[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug"}),
        S("systemd.unit.mask", "3.0.0", ign(systemd={"units": [{"name": "systemd-journald.service", "mask": True}]}),
          want={"/etc/systemd/system/systemd-journald.service": ("link", "/dev/null")}),
    ]
    # ---------------------------------------------------------------- security/tls
    def tls(cas, storage=None, merge=None, timeouts=None):
        extra = {}
        if cas is not None:
            extra["security"] = {"tls": {"certificateAuthorities": cas}}
        if merge:
            extra["config"] = {"merge": [src(merge)]}
        if timeouts:
            extra["timeouts"] = timeouts
        return ign(ignition_extra=extra, **({"storage": storage} if storage else {}))

    one = files({"path": "/foo/bar", "contents": src("$TLS1")})
    two = files({"path": "/foo/bar", "contents": src("$TLS1")}, {"path": "/foo/bar2", "contents": src("$TLS2")})
    tls1 = {"/foo/bar": TLS1_BODY.decode()}
    T += [
        S("tls.appendconfig", "3.0.0", tls([src("$CA1")], merge="$TLS1"), want=EX),
        S("tls.fetchfile", "3.0.0", tls([src("$CA1")], one), want=tls1),
        S("tls.fetchfile.cabundle", "3.0.0", tls([src("$CA_BUNDLE")], two),
          want=dict(tls1, **{"/foo/bar2": TLS2_BODY.decode()})),
        S("tls.fetchfile.http", "3.0.0", tls([src("$HTTP/certificates")], one), want=tls1),
        S("tls.fetchfile.http.cabundle", "3.0.0", tls([src("$HTTP/caBundle")], two),
          want=dict(tls1, **{"/foo/bar2": TLS2_BODY.decode()})),
        S("tls.fetchfile.http.compressed", "3.1.0", tls([src("$HTTP/certificates_compressed", compression="gzip",
                                                            verification={"hash": "sha512-$H_PUBKEY512"})], one),
          want=tls1),
        S("tls.fetchfile.http.headers", "3.1.0", tls([src("$HTTP/certificates_headers", httpHeaders=HEADERS)], one),
          want=tls1),
        S("tls.fetchfile.http.headers.redirect", "3.1.0",
          tls([src("$HTTP/certificates_headers_redirect", httpHeaders=HEADERS)], one), want=tls1),
        S("tls.fetchfile.http.headers.overwrite", "3.1.0",
          tls([src("$HTTP/certificates_headers_overwrite", httpHeaders=OVERWRITTEN)], one), want=tls1),
        # negative
        S("tls.config.merge.needsca", "3.0.0", tls(None, merge="$TLS1", timeouts={"httpTotal": 5}), fail=True),
        S("tls.file.create.needsca", "3.0.0", tls(None, one, timeouts={"httpTotal": 5}), fail=True),
        S("tls.fetchfile.http.negative", "3.0.0", tls([src("$HTTP/asdf")], one), fail=True),
        S("tls.fetchfile.http.cabundle.negative", "3.0.0", tls([src("$HTTP/certificates")], two), fail=True),
        S("tls.fetchfile.http.invalidheader", "3.1.0",
          tls([src("$HTTP/certificates_headers", httpHeaders=BAD_HEADERS)], one), fail=True),
    ]
    # ---------------------------------------------------------------- proxy
    T += [
        S("proxy.getconfig", "3.1.0", ign(ignition_extra={
            "config": {"replace": src("http://www.fake.tld/")},
            "proxy": {"httpProxy": "$PROXY_OK", "httpsProxy": "$PROXY_OK", "noProxy": ["localhost", "127.0.0.1"]}}),
          want={"/bar/foo": "example file proxy\n"}),
        S("proxy.getconfig.noproxy", "3.1.0", ign(ignition_extra={
            "config": {"replace": src("$HTTP/config")},
            "proxy": {"httpProxy": "$PROXY_OK", "httpsProxy": "$PROXY_OK", "noProxy": ["localhost", "127.0.0.1"]}}),
          want=EX),
        S("proxy.unreachable", "3.1.0", ign(ignition_extra={
            "config": {"replace": src("http://www.fake.tld/")},
            "proxy": {"httpProxy": "$PROXY_DOWN", "httpsProxy": "$PROXY_DOWN", "noProxy": [""]},
            "timeouts": {"httpResponseHeaders": 1, "httpTotal": 1}}), fail=True),
    ]
    # ---------------------------------------------------------------- timeouts
    T += [
        S("timeouts.http", "3.0.0", ign(ignition_extra={"timeouts": {"httpResponseHeaders": 12}},
                                        storage=files({"path": "/foo/bar", "contents": src("$SLOW11")})),
          want={"/foo/bar": ""}),
        S("timeouts.http.backoff", "3.0.0", ign(storage=files({"path": "/foo/bar", "contents": src(
            "$THROTTLED/$version")})), want={"/foo/bar": ""}, reset=True),
        S("timeouts.file.create.http.timesout", "3.0.0", ign(
            ignition_extra={"timeouts": {"httpResponseHeaders": 1, "httpTotal": 10}},
            storage=files({"path": "/foo/bar", "contents": src("$SLOW2")})), fail=True),
        S("timeouts.config.merge.timesout", "3.0.0", ign(ignition_extra={
            "config": {"merge": [src("$CFG_SLOW")]}, "timeouts": {"httpResponseHeaders": 1, "httpTotal": 1}}),
          fail=True),
        S("timeouts.config.mergeslowertimeout", "3.0.0", ign(ignition_extra={"config": {"merge": [src("$CFG_SLOW")]}}),
          fail=True),
        S("timeouts.config.merge.nonethenlower", "3.0.0", ign(ignition_extra={
            "config": {"merge": [src("$CFG_NODELAY")]}, "timeouts": {"httpResponseHeaders": 1, "httpTotal": 1}}),
          fail=True),
    ]
    # ---------------------------------------------------------------- cmdline (negative, no disk)
    for name, line in [("cmdline.device.notfound", "ignition.config.device=DOESNOTEXIST ignition.config.path=/config.ign"),
                       ("cmdline.device.without.path", "ignition.config.device=IGNCONFIG"),
                       ("cmdline.path.without.device", "ignition.config.path=/config.ign")]:
        T.append(S(name, "3.0.0", ign(), cmdline=line, fail=True, skip_critical=True))
    return T


# Scenarios of those areas not run here, and why (reported by --list-skipped / the summary).
SKIPPED = [
    ("files.owner.byname", "defined upstream but not registered (no `core` user in its root)"),
    ("genernal.reformat.withfile", "its point is the filesystem it makes on EFI-SYSTEM (disks stage)"),
    ("users.add.mountpoint", "mounts a filesystem made on OEM inside /home/test/.ssh (disks/mount stages)"),
    ("config.merge.failed", "its point is a filesystems entry on the OEM device (disks stage); "
                            "version 3.0.0-experimental"),
    ("cmdline.device.fetch", "reads its config from a filesystem labelled IGNCONFIG on a second disk"),
    ("cmdline.device.config.notfound", "needs the IGNCONFIG disk to exist (the path is what is missing)"),
]


def versions_of(sc):
    if sc["min"] is None:
        return [None]
    lo = VERSIONS.index(sc["min"])
    hi = VERSIONS.index(sc["max"]) if sc["max"] else len(VERSIONS) - 1
    return VERSIONS[lo:hi + 1]


# ---------------------------------------------------------------- cases
def setup_script(sc):
    """setup.sh (the campaign's format): builds the starting root in the current directory."""
    lines = ["#!/bin/sh", "set -e", "umask 022"]
    q = lambda p: "'" + p.lstrip("/").replace("'", "'\\''") + "'"
    dirname = lambda p: os.path.dirname(p.lstrip("/")) or "."
    for n in sc["root"]:
        lines.append("mkdir -p %s" % q(dirname(n[1])))
        if n[0] == "file":
            _, p, data, mode, uid, gid = n
            lines.append("printf '%%s' '%s' | base64 -d > %s" % (base64.b64encode(data).decode(), q(p)))
            lines.append("chmod %o %s" % (mode, q(p)))
            lines.append("chown %d:%d %s" % (uid, gid, q(p)))
        elif n[0] == "symlink":
            lines.append("ln -s '%s' %s" % (n[2].replace("'", "'\\''"), q(n[1])))
        elif n[0] == "hardlink":
            lines.append("ln %s %s" % (q(n[2]), q(n[1])))
    if "passwd" in json.dumps(sc["config"]):
        # as upstream's framework prepares the root of a config that mentions passwd
        lines.append("mkdir -p home usr/bin usr/sbin usr/lib64 etc")
        lines.append("for d in lib64 bin sbin; do ln -s usr/$d $d; done")
    return "\n".join(lines) + "\n"


def render(sc, version, urls):
    cfg = sc["config"] if isinstance(sc["config"], str) else json.dumps(sc["config"], indent=1)
    if version:
        cfg = cfg.replace("$version", version)
    return re.sub(r"\$([A-Z][A-Z0-9_]*)", lambda m: urls.get(m.group(1), m.group(0)), cfg)


def cases(urls):
    only = os.environ.get("FILES_ONLY")
    for sc in scenarios():
        for v in versions_of(sc):
            name = sc["name"] + ("-" + v if v else "")
            if only and not re.search(only, name):
                continue
            want = {k: (v2 if not isinstance(v2, str) else render({"config": v2}, v, urls))
                    for k, v2 in sc["want"].items()}
            extra = {"system": sc["system"], "env": sc["env"], "cmdline": sc["cmdline"],
                     "upstream_expects": "failure" if sc["fail"] else "success",
                     "skip_critical": sc["skip_critical"]}
            yield {"name": name, "setup": setup_script(sc), "config": render(sc, v, urls),
                   "extra": extra, "want": want,
                   "reset": sc["reset"] and "%s/__reset/%s" % (urls.get("THROTTLED"), v)}


# ---------------------------------------------------------------- running
def _env(w, cfg, extra):
    env = {k: v for k, v in os.environ.items()
           if k != "container" and not k.lower().endswith("_proxy")}
    env.update(PATH="/usr/sbin:/usr/bin:/sbin:/bin", IGNITION_CONFIG_FILE=cfg,
               IGNITION_SYSTEM_CONFIG_DIR=os.path.join(w, "sys"),
               IGNITION_SYSTEM_RUNTIME_CONFIG_DIR=os.path.join(w, "run"),
               IGNITION_SYSTEM_LOCAL_CONFIG_DIR=os.path.join(w, "local"),
               FLINT_CMDLINE=os.path.join(w, "cmdline"))
    env.update(extra["env"])
    return env


def _system_dirs(w, extra):
    for d, key in (("sys", "vendor"), ("run", "runtime"), ("local", "local")):
        base = os.path.join(w, d)
        os.makedirs(base, exist_ok=True)
        for rel, text in extra["system"].get(key, {}).items():
            p = os.path.join(base, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
    with open(os.path.join(w, "cmdline"), "w") as f:
        f.write((extra["cmdline"] or "") + "\n")


def run_reference(w, root, cfg, extra, difftest):
    difftest.fresh(w)
    _system_dirs(w, extra)
    return difftest.reference_stages(w, root, _env(w, cfg, extra),
                                     skip_critical=extra["skip_critical"], budget=RUN_TIMEOUT)


def run_flint(w, root, cfg, extra, difftest):
    difftest.fresh(w)
    _system_dirs(w, extra)
    env = _env(w, cfg, extra)
    env["TMPDIR"] = w
    try:
        p = subprocess.run([os.path.join(difftest.FLINT_BIN, "flint"), "apply", "--platform", "file",
                            "--root", root, "--state-dir", os.path.join(w, "state"),
                            "--neednet", os.path.join(w, "neednet")],
                           cwd=w, env=env, umask=0o022, stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"still running after %d s (killed)\n" % RUN_TIMEOUT
    return p.returncode, b"", p.stderr.replace(root.encode(), b"{root}")


# How long one implementation's run may take: upstream's per-test limit (60 s); a run still
# going then (retrying a fetch for ever) is killed and counts as a failure, as upstream counts it.
RUN_TIMEOUT = int(os.environ.get("FILES_UPSTREAM_TIMEOUT", "60"))

_libc = None


def _bind_cmdline(path):
    """Inside the worker's mount namespace: PATH over /proc/cmdline (None: undo)."""
    global _libc
    _libc = _libc or ctypes.CDLL(None, use_errno=True)
    if path is None:
        _libc.umount2(b"/proc/cmdline", 2)  # MNT_DETACH
        return True
    return _libc.mount(path.encode(), b"/proc/cmdline", None, 0x1000, None) == 0


def expectation_notes(case, ref, rroot):
    notes = []
    wants_fail = case["extra"]["upstream_expects"] == "failure"
    if wants_fail and ref[0] == 0:
        notes.append("reference succeeded where upstream expects failure")
    if not wants_fail and ref[0] != 0:
        notes.append("reference failed where upstream expects success: "
                     + ref[2].decode("utf-8", "replace").strip().replace("\n", " | ")[:400])
    if ref[0] == 0:
        for path, want in case["want"].items():
            p = os.path.join(rroot, path.lstrip("/"))
            if want is None:
                if os.path.lexists(p):
                    notes.append("%s: upstream expects it removed" % path)
            elif isinstance(want, tuple):
                if not os.path.islink(p) or os.readlink(p) != want[1]:
                    notes.append("%s: upstream expects a link to %s" % (path, want[1]))
            else:
                try:
                    got = _read(p)
                except OSError as e:
                    notes.append("%s: %s" % (path, e.strerror))
                    continue
                if got != want.encode():
                    notes.append("%s: upstream expects %r, reference left %r" % (path, want[:60], got[:60]))
    return notes


def check(case):
    difftest = DT[0]
    w = difftest.workdir()
    cfg = os.path.join(w, "config.ign")
    with open(cfg, "w") as f:
        f.write(case["config"])
    extra = case["extra"]
    rroot, rc1 = difftest.make_root(os.path.join(w, "ref"), case["setup"])
    froot, rc2 = difftest.copy_root(rroot, os.path.join(w, "flint"))
    if rc1 or rc2:
        return False, ("setup-failed", b"", b""), ("setup-failed", b"", b""), []
    bound = False
    if extra["cmdline"] is not None:
        with open(os.path.join(w, "cmdline.bind"), "w") as f:
            f.write(extra["cmdline"] + "\n")
        bound = _bind_cmdline(os.path.join(w, "cmdline.bind"))
    try:
        if case["reset"]:
            urllib.request.urlopen(case["reset"], timeout=5).read()
        t = time.time()
        ref = run_reference(os.path.join(w, "ign"), rroot, cfg, extra, difftest)
        tref = time.time() - t
        if case["reset"]:
            urllib.request.urlopen(case["reset"], timeout=5).read()
        t = time.time()
        got = run_flint(os.path.join(w, "fl"), froot, cfg, extra, difftest)
        tgot = time.time() - t
    finally:
        if bound:
            _bind_cmdline(None)
    ok_ref, ok_got = ref[0] == 0, got[0] == 0
    mref = difftest.manifest(rroot) if ok_ref else b""
    mgot = difftest.manifest(froot) if ok_got else b""
    notes = expectation_notes(case, ref, rroot)
    if not bound and extra["cmdline"] is not None:
        notes.append("could not bind the command line over /proc/cmdline")
    same = ok_ref == ok_got and mref == mgot
    return same, (ref[0], mref, ref[2] + b"(%.1f s)\n" % tref), (got[0], mgot, got[2] + b"(%.1f s)\n" % tgot), notes


def _check(case):
    try:
        same, ref, got, notes = check(case)
    except Exception as e:
        same, ref, got, notes = False, ("harness", b"", str(e).encode()), ("harness", b"", b""), []
    import deliberate
    why = None if same else deliberate.classify("files", case, ref, got)
    return case, same, why, ref, got, notes


# difftest as it runs (its __main__: the scratch directory is set there), for the workers.
DT = [None]


def main(a, difftest):
    DT[0] = difftest
    if os.geteuid() != 0:
        sys.exit("the files stage is compared as root (ownership)")
    out = os.path.join(a.out, "files")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    srv = Servers()
    srv.start()
    fake = difftest.start_fake_systemd()
    total = div = delib = 0
    notes_all = []
    try:
        inputs = list(cases(srv.urls))
        with multiprocessing.Pool(a.jobs, initializer=difftest.enter_files_namespace) as pool:
            for case, same, why, ref, got, notes in pool.imap_unordered(_check, inputs):
                total += 1
                for n in notes:
                    notes_all.append("%s: %s" % (case["name"], n))
                if same:
                    continue
                div += 1
                if why:
                    delib += 1
                difftest.save(a.out, "files", case["name"], case, ref, got, why,
                              difftest.kind_of("files", ref, got))
                print("DIVERGES %s (exit %s / %s)%s" % (case["name"], ref[0], got[0],
                                                       " deliberate: " + why if why else ""), flush=True)
    finally:
        fake.kill()
        fake.wait()
        srv.stop()
    with open(os.path.join(out, "upstream-notes.txt"), "w") as f:
        f.write("".join(n + "\n" for n in sorted(notes_all)))
        f.write("".join("skipped %s: %s\n" % s for s in SKIPPED))
    for n in sorted(notes_all):
        print("note: " + n)
    for s in SKIPPED:
        print("skipped %s: %s" % s)
    print("divergences in %s" % out)
    print("files (upstream suite): %d inputs, %d divergences (%d deliberate)" % (total, div, delib))
    return 0 if div == delib else 1
