#!/usr/bin/env python3
"""difftest.py -- flint against the reference tools, on the same inputs.

    difftest.py butane   [--generated N] [--seed S] [--jobs J] [--out DIR] [--generated-only] [--variants]
    difftest.py validate [--generated N] ...
    difftest.py files    [--generated N] ...     (root; runs the reference files stage)
    difftest.py storage  [--generated N] ...     (root; loop devices; see storage.py)
    FILES_SUITE=upstream difftest.py files --corpora-only   (upstream's disk-less blackbox
                                             scenarios and their servers; see files_upstream.py)

The files campaign serves conformance/files/_http on 127.0.0.1:18931 for the corpus's remote
cases and the generated ones (gen_files.HTTP: sources over HTTP in several spellings).

Inputs: every corpus and fixture of the repository for that tool (conformance/, fixtures/,
translate-tests/, tests/hostile/, tests/fuzz-regressions/, examples/), then N generated ones
(gen_config.py, gen_files.py). What is compared is what a user sees:
  butane    exit code, stderr, stdout (gzip payloads compared decompressed)
  validate  exit code, and the report lines of stdout and stderr (as multisets: the
            reference orders some reports randomly)
  files     exit status, and the tree left (conformance/files/manifest.py: types, modes,
            owners, contents, link targets, passwd/group/shadow/gshadow entries)
  storage   exit status, and the disks left (see storage.py)
Divergences go to OUT/<tool>/<name>/ (input, both outputs); the last line is
`N inputs, M divergences (K deliberate)`. Deliberate differences are listed, with the
reason, in deliberate.py (and docs/guide/differences.md).

References: $ORACLES (default ../shared/oracles beside the repository). flint: $FLINT_BIN
(default target/debug). Run the big campaigns niced: `nice -n 19 difftest.py ...`.

Files: the reference follows links that lead out of the root onto the machine it runs on
(preset lines appended through a link at the preset file, SSH keys written through links;
seen: /nonexistent, /etc/a, /home/alice, /srv/authorized_keys.d). flint writes nothing there
(docs/guide/differences.md). So each files worker runs in a mount namespace where the host's
`/` is read-only but for the campaign's scratch directory: the reference fails there with
"read-only file system", counted as deliberate, instead of writing on this machine.
"""
import argparse
import base64
import ctypes
import gzip
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import deliberate  # noqa: E402
import gen_config  # noqa: E402
import gen_files  # noqa: E402

ORACLES = os.environ.get("ORACLES", os.path.join(os.path.dirname(REPO), "..", "shared", "oracles"))
if not os.path.isdir(ORACLES):
    ORACLES = "/work/shared/oracles"
# --variants: generated Butane documents in every variant (set by main).
VARIANTS = False
FLINT_BIN = os.environ.get("FLINT_BIN", os.path.join(REPO, "target", "debug"))
sys.path.insert(0, os.path.join(REPO, "conformance", "files"))
import manifest as MANIFEST_MOD  # noqa: E402


def run(cmd, cwd=None, timeout=60, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


# ---------------------------------------------------------------- inputs
def listdir(d):
    d = os.path.join(REPO, d)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def read(p):
    with open(p, "rb") as f:
        return f.read()


def tree_files(d):
    out = {}
    for dp, _, fns in os.walk(d):
        for fn in fns:
            full = os.path.join(dp, fn)
            rel = os.path.relpath(full, d)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            else:
                out[rel] = read(full)
    return out


def butane_inputs(n, seed):
    for c in listdir("conformance/butane"):
        d = os.path.join(REPO, "conformance/butane", c)
        if not os.path.isfile(os.path.join(d, "in.bu")):
            continue
        args = read(os.path.join(d, "args")).decode().split() if os.path.exists(os.path.join(d, "args")) else []
        files = {"files/" + k: v for k, v in tree_files(os.path.join(d, "files")).items()}
        if "-d" not in args and "--files-dir" not in args and files:
            pass
        yield {"name": "conformance-" + c, "input": read(os.path.join(d, "in.bu")), "args": ["--pretty"] + args,
               "files": files}
    for c in listdir("translate-tests"):
        d = os.path.join(REPO, "translate-tests", c)
        if not os.path.isfile(os.path.join(d, "in.bu")):
            continue
        args = read(os.path.join(d, "args")).decode().split() if os.path.exists(os.path.join(d, "args")) else []
        files = {"files/" + k: v for k, v in tree_files(os.path.join(d, "files")).items()}
        yield {"name": "translate-" + c, "input": read(os.path.join(d, "in.bu")), "args": args, "files": files}
    for sub in ["tests/hostile", "examples", "tests/fuzz-regressions/butane_translate"]:
        for f in listdir(sub):
            p = os.path.join(REPO, sub, f)
            if os.path.isfile(p) and (f.endswith(".bu") or "fuzz" in sub):
                files = {}
                if sub == "examples":
                    files = {"files/" + k: v for k, v in tree_files(os.path.join(REPO, "examples/files")).items()}
                for strict in ([], ["--strict"]):
                    yield {"name": sub.replace("/", "-") + "-" + f + ("-strict" if strict else ""),
                           "input": read(p), "args": strict + ["-d", "files"], "files": files}
    g = gen_config.Gen(seed)
    variants = gen_config.Gen(seed * 7919 + 13) if VARIANTS else None
    files = {"files/" + k: v for k, v in gen_config.BUTANE_FILES.items()}
    for i in range(n):
        text = gen_config.butane_text(g, variants)
        args = []
        if g.p(0.5):
            args.append("--strict")
        if g.p(0.5):
            args.append("--pretty")
        if g.p(0.8):
            args += ["-d", "files"]
        yield {"name": "gen-%d-%d" % (seed, i), "input": text, "args": args, "files": files}


def validate_inputs(n, seed):
    for c in listdir("conformance/ignition"):
        p = os.path.join(REPO, "conformance/ignition", c, "in.ign")
        if os.path.isfile(p):
            yield {"name": "conformance-" + c, "input": read(p)}
    for c in listdir("fixtures/validate"):
        d = os.path.join(REPO, "fixtures/validate", c)
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f.endswith(".ign") or f.endswith(".json"):
                yield {"name": "fixture-" + c + "-" + f, "input": read(os.path.join(d, f))}
    for c in listdir("conformance/files"):
        p = os.path.join(REPO, "conformance/files", c, "config.ign")
        if os.path.isfile(p):
            yield {"name": "files-" + c, "input": read(p)}
    for c in listdir("conformance/butane"):
        p = os.path.join(REPO, "conformance/butane", c, "expected.ign")
        if os.path.isfile(p):
            yield {"name": "butane-out-" + c, "input": read(p)}
    for sub in ["tests/hostile", "tests/fuzz-regressions/ignition_config", "examples"]:
        for f in listdir(sub):
            p = os.path.join(REPO, sub, f)
            if os.path.isfile(p) and (f.endswith(".ign") or "fuzz" in sub):
                yield {"name": sub.replace("/", "-") + "-" + f, "input": read(p)}
    g = gen_config.Gen(seed)
    for i in range(n):
        yield {"name": "gen-%d-%d" % (seed, i), "input": g.ignition_text()}


def files_inputs(n, seed):
    for c in listdir("conformance/files") + ["regressions/" + x for x in listdir("conformance/files-regressions")]:
        d = os.path.join(REPO, "conformance/files", c) if not c.startswith("regressions/") else \
            os.path.join(REPO, "conformance/files-regressions", c.split("/", 1)[1])
        p = os.path.join(d, "config.ign")
        if os.path.isfile(p):
            yield {"name": "conformance-" + c.replace("/", "-"), "setup": read(os.path.join(d, "setup.sh")).decode(),
                   # a config may hold bytes that are not UTF-8: kept as they are
                   "config": read(p).decode("utf-8", "surrogateescape")}
    g = gen_files.FilesGen(seed)
    for i in range(n):
        setup, config = g.scenario()
        yield {"name": "gen-%d-%d" % (seed, i), "setup": setup, "config": config}


# ---------------------------------------------------------------- comparison
def norm_butane_stdout(out):
    """gzip payloads differ between deflate implementations: compare what they decompress to."""
    def gunzipped(v):
        try:
            raw = base64.b64decode(v.split(";base64,", 1)[1])
            if raw[:2] == b"\x1f\x8b":
                return "gunzipped:" + hashlib.sha256(gzip.decompress(raw)).hexdigest()
        except Exception:
            pass
        return None

    try:
        doc = json.loads(out)
    except Exception:
        # A MachineConfig (YAML): the same, line by line.
        def line(m):
            return (m.group(1) + (gunzipped(m.group(2)) or m.group(2))).encode()
        text = out.decode("utf-8", "replace")
        return "\n".join(line(m).decode() if (m := re.match(r"^(\s*source: )(data:\S*;base64,\S+)$", l))
                         else l for l in text.split("\n")).encode()

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str) and v.startswith("data:") and ";base64," in v:
            return gunzipped(v) or v
        return v
    return json.dumps(walk(doc), sort_keys=False).encode()


def lines_multiset(b):
    return sorted(b.decode("utf-8", "replace").splitlines())


# One scratch folder for the run (made before the workers fork, removed at the end); each
# worker uses its own subfolder.
SCRATCH = [None]


def workdir():
    d = os.path.join(SCRATCH[0], str(os.getpid()))
    os.makedirs(d, exist_ok=True)
    # the reference writes SSH keys as the user, who must be able to reach the root
    os.chmod(d, 0o755)
    return d


def write_files(d, files):
    for rel, data in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(data, tuple):
            os.symlink(data[1], p)
        else:
            with open(p, "wb") as f:
                f.write(data)


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def check_butane(case):
    d = os.path.join(workdir(), "case")
    fresh(d)
    write_files(d, case["files"])
    with open(os.path.join(d, "in.bu"), "wb") as f:
        f.write(case["input"])
    ref = run([os.path.join(ORACLES, "butane")] + case["args"] + ["in.bu"], cwd=d)
    got = run([os.path.join(FLINT_BIN, "butane")] + case["args"] + ["in.bu"], cwd=d)
    same = (ref[0] == got[0] and ref[2] == got[2] and norm_butane_stdout(ref[1]) == norm_butane_stdout(got[1]))
    return same, ref, got


def check_validate(case):
    d = os.path.join(workdir(), "case")
    fresh(d)
    with open(os.path.join(d, "in.ign"), "wb") as f:
        f.write(case["input"])
    ref = run([os.path.join(ORACLES, "ignition-validate"), "in.ign"], cwd=d)
    # flint under upstream's name: upstream's command line and rules (`flint validate`
    # follows Flatcar's validator: oem:// and legacy configs accepted).
    got = run(["bash", "-c", 'exec -a ignition-validate "$0" in.ign',
               os.path.join(FLINT_BIN, "flint")], cwd=d)
    same = ref[0] == got[0] and lines_multiset(ref[1]) == lines_multiset(got[1]) and \
        lines_multiset(ref[2]) == lines_multiset(got[2])
    return same, ref, got


def make_root(base, setup):
    fresh(base)
    os.chmod(base, 0o755)
    root = os.path.join(base, "root")
    os.makedirs(root)
    os.chmod(root, 0o755)
    with open(os.path.join(base, "setup.sh"), "w") as f:
        f.write(setup)
    rc = subprocess.run(["sh", os.path.join(base, "setup.sh")], cwd=root, capture_output=True).returncode
    return root, rc


def copy_root(root, base):
    """A second root like ROOT (owners, modes, links, hard links, special files): one cp
    instead of the setup's dozens of commands."""
    fresh(base)
    os.chmod(base, 0o755)
    shutil.copy(os.path.join(os.path.dirname(root), "setup.sh"), base)
    copy = os.path.join(base, "root")
    return copy, subprocess.run(["cp", "-a", "--", root, copy], capture_output=True).returncode


def manifest(root):
    # in-process: a python start per listing cost more than the two tools together
    try:
        return MANIFEST_MOD.manifest(root).encode("utf-8", "surrogateescape")
    except Exception as e:
        return b"manifest failed: " + str(e).encode()


def enter_files_namespace():
    """Pool initializer for the files campaign: the worker enters a private mount namespace
    with a tmpfs on /run where the campaign's fake systemd is bound (the files stage asks
    systemd's version when it writes units). Done once per worker, not per input: the
    namespace, mounts and a python start per input cost more than the two stages."""
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newns, ms_rec, ms_private, ms_bind = 0x20000, 0x4000, 1 << 18, 0x1000
    ms_remount, ms_rdonly = 0x20, 0x1

    def ok(rc, what):
        if rc != 0:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, os.strerror(e)))

    ok(libc.unshare(clone_newns), "unshare")
    ok(libc.mount(b"none", b"/", None, ms_rec | ms_private, None), "make / private")
    ok(libc.mount(b"tmpfs", b"/run", b"tmpfs", 0, None), "tmpfs on /run")
    os.makedirs("/run/systemd")
    ok(libc.mount(os.environ["FAKE_SYSTEMD_DIR"].encode(), b"/run/systemd", None, ms_bind, None),
       "bind the fake systemd")
    # The host read-only, all but the campaign's scratch directory: the reference follows
    # links out of the root and would write onto this machine (preset lines, SSH keys); here
    # it fails with "read-only file system" instead, which deliberate.py recognises.
    scratch = SCRATCH[0].encode()
    ok(libc.mount(scratch, scratch, None, ms_bind, None), "bind the scratch directory")
    ok(libc.mount(b"none", b"/", None, ms_remount | ms_bind | ms_rdonly, None), "/ read-only")


def reference_files(w, root, cfg):
    """The reference's fetch and files stages on ROOT, as run-reference.sh runs them (same
    environment, umask, failure rule and stderr), without a shell per input."""
    fresh(w)
    for d in ("sys", "run", "local"):
        os.makedirs(os.path.join(w, d))
    env = {k: v for k, v in os.environ.items() if k != "container"}
    env.update(PATH="/usr/sbin:/usr/bin:/sbin:/bin", IGNITION_CONFIG_FILE=cfg,
               IGNITION_SYSTEM_CONFIG_DIR=os.path.join(w, "sys"),
               IGNITION_SYSTEM_RUNTIME_CONFIG_DIR=os.path.join(w, "run"),
               IGNITION_SYSTEM_LOCAL_CONFIG_DIR=os.path.join(w, "local"))
    return reference_stages(w, root, env)


def reference_stages(w, root, env, skip_critical=False, budget=None):
    """The reference's fetch, then files stage, on ROOT with ENV (platform `file`, working
    directory W). A stage fails the run by its exit status, a panic or a CRITICAL line (not
    counted with SKIP_CRITICAL); the result carries its ERROR/CRITICAL lines. Each stage may
    take 120 s, or both together BUDGET seconds."""
    ign = os.path.join(ORACLES, "flatcar", "ignition")
    deadline = budget and time.time() + budget
    for st in ("fetch", "files"):
        try:
            p = subprocess.run([ign, "-platform", "file", "-stage", st, "-root", root, "-log-to-stdout",
                                "-config-cache", os.path.join(w, "ignition.json"),
                                "-neednet", os.path.join(w, "neednet"), "-state-file", os.path.join(w, "state")],
                               cwd=w, env=env, umask=0o022, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=120 if budget is None else max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            return "timeout", b"", b"stage %s still running (killed)\n" % st.encode()
        log = p.stdout
        if p.returncode != 0 or b"panic" in log or (not skip_critical and b"CRITICAL" in log):
            err = b"".join(line.replace(root.encode(), b"{root}") + b"\n" for line in log.split(b"\n")
                           if not line.startswith(b"DEBUG")
                           and (b"CRITICAL" in line or b"ERROR" in line or b"panic" in line))
            err += b"stage %s failed (exit %d)\n" % (st.encode(), p.returncode)
            return (p.returncode or 1), b"", err
    return 0, b"", b""


def check_files(case):
    w = workdir()
    cfg = os.path.join(w, "config.ign")
    with open(cfg, "w", errors="surrogateescape") as f:
        f.write(case["config"])
    rroot, rc1 = make_root(os.path.join(w, "ref"), case["setup"])
    froot, rc2 = copy_root(rroot, os.path.join(w, "flint"))
    if rc1 or rc2:
        return True, ("setup-failed", b"", b""), ("setup-failed", b"", b"")
    ref = reference_files(os.path.join(w, "ign"), rroot, cfg)
    # `flint plan` first: it must say whether apply fails, and change nothing.
    before = manifest(froot) if PLAN_TOO else b""
    # (its scratch files in the campaign's, the only place writable here)
    plan = run([os.path.join(FLINT_BIN, "flint"), "plan", "--root", froot, cfg], timeout=120,
               env=dict(os.environ, TMPDIR=w)) if PLAN_TOO else None
    if plan and manifest(froot) != before:
        return False, (ref[0], b"", ref[2]), ("plan changed the root", b"", plan[2])
    got = run([os.path.join(FLINT_BIN, "flint"), "apply", "--root", froot, cfg], timeout=120)
    ok_ref, ok_got = ref[0] == 0, got[0] == 0
    mref = manifest(rroot) if ok_ref else b""
    mgot = manifest(froot) if ok_got else b""
    same = ok_ref == ok_got and mref == mgot
    if same and plan and (plan[0] == 0) != ok_got:
        return False, (ref[0], mref, ref[2]), ("plan %s, apply %s" % (plan[0], got[0]), mgot,
                                               plan[2] + b"--- apply\n" + got[2])
    return same, (ref[0], mref, ref[2]), (got[0], mgot, got[2])


# Whether the files campaign also runs `flint plan` before apply (--plan-too).
PLAN_TOO = False


CHECKS = {"butane": check_butane, "validate": check_validate, "files": check_files}


def check(args):
    tool, case = args
    try:
        same, ref, got = CHECKS[tool](case)
    except Exception as e:  # a harness error is a divergence to look at, not a crash
        same, ref, got = False, ("harness", b"", str(e).encode()), ("harness", b"", b"")
    why = None if same else deliberate.classify(tool, case, ref, got)
    kind = None if same else kind_of(tool, ref, got)
    return case["name"], same, why, kind, (case if not same else None), ref, got


def facts(b):
    """The validator's report lines without their message text: severity, path, position."""
    import re
    out = []
    for l in b.decode("utf-8", "replace").splitlines():
        m = re.match(r"^(error|warning|info)(?: at (\$[^,:]*)?(?:, )?(line \d+ col \d+)?)?", l)
        if m:
            out.append((m.group(1), m.group(2) or "", m.group(3) or ""))
    return sorted(out)


def kind_of(tool, ref, got):
    """How deep a divergence goes, for triage."""
    if ref[0] != got[0]:
        return "exit status"
    if tool == "validate":
        fr, fg = facts(ref[1] + ref[2]), facts(got[1] + got[2])
        if fr == fg:
            return "message text only"
        # The corpus runner's rules (conformance/ignition/README.md): every path and every
        # marker the reference reports is reported, and as many errors and warnings.
        count = lambda f, sev: sum(1 for x in f if x[0] == sev)
        paths, marks = {x[1] for x in fg}, {x[2] for x in fg}
        if all((not x[1] or x[1] in paths) and (not x[2] or x[2] in marks) for x in fr) and \
                count(fr, "error") == count(fg, "error") and count(fr, "warning") == count(fg, "warning"):
            return "message text or an added path only"
        return "report locations or severities"
    if tool == "butane":
        if norm_butane_stdout(ref[1]) != norm_butane_stdout(got[1]):
            return "output"
        return "diagnostics text only"
    return "result"


def save(out, tool, name, case, ref, got, why, kind=None):
    d = os.path.join(out, tool, name.replace("/", "_"))
    os.makedirs(d, exist_ok=True)
    if tool == "files":
        with open(os.path.join(d, "setup.sh"), "w") as f:
            f.write(case["setup"])
        with open(os.path.join(d, "config.ign"), "w", errors="surrogateescape") as f:
            f.write(case["config"])
        if case.get("extra"):
            # what else the scenario gives (system config files, environment, command line)
            with open(os.path.join(d, "scenario.json"), "w") as f:
                json.dump(case["extra"], f, indent=1)
    else:
        with open(os.path.join(d, "in.bu" if tool == "butane" else "in.ign"), "wb") as f:
            f.write(case["input"])
        if case.get("args"):
            with open(os.path.join(d, "args"), "w") as f:
                f.write(" ".join(case["args"]) + "\n")
    for who, r in (("reference", ref), ("flint", got)):
        with open(os.path.join(d, who + ".out"), "wb") as f:
            f.write(b"exit %s\n--- stdout\n" % str(r[0]).encode() + r[1] + b"\n--- stderr\n" + r[2])
    if why:
        with open(os.path.join(d, "deliberate"), "w") as f:
            f.write(why + "\n")
    if kind:
        with open(os.path.join(d, "kind"), "w") as f:
            f.write(kind + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tool", choices=["butane", "validate", "files", "storage"])
    ap.add_argument("--generated", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "difftest-out"))
    ap.add_argument("--corpora-only", action="store_true")
    ap.add_argument("--generated-only", action="store_true", help="skip the corpora (long campaigns in chunks)")
    ap.add_argument("--plan-too", action="store_true",
                    help="files: run `flint plan` first; a plan that changes the root, or whose "
                         "verdict is not apply's, is a divergence")
    ap.add_argument("--variants", action="store_true",
                    help="butane: a quarter of the generated documents in other variants, with their sugar")
    a = ap.parse_args()
    global VARIANTS, PLAN_TOO
    VARIANTS = a.variants
    PLAN_TOO = a.plan_too
    if a.tool == "storage":
        import storage
        return storage.main(a)
    if a.tool == "files" and os.environ.get("FILES_SUITE") == "upstream":
        # upstream Ignition's own disk-less scenarios, with their servers (files_upstream.py)
        import files_upstream
        return files_upstream.main(a, sys.modules[__name__])
    if a.tool in ("files", "storage") and os.geteuid() != 0:
        sys.exit("the files stage is compared as root (ownership)")
    n = 0 if a.corpora_only else a.generated
    inputs = {"butane": butane_inputs, "validate": validate_inputs, "files": files_inputs}[a.tool](n, a.seed)
    if a.generated_only:
        inputs = (c for c in inputs if c["name"].startswith("gen-"))
    shutil.rmtree(os.path.join(a.out, a.tool), ignore_errors=True)
    fake = start_fake_systemd() if a.tool == "files" else None
    http = start_http() if a.tool == "files" else None
    try:
        return campaign(a, inputs)
    finally:
        for p in (fake, http):
            if p:
                p.kill()
                p.wait()


def start_http():
    """The files the corpus's remote cases and the generated ones fetch, on 127.0.0.1:18931
    (gen_files.HTTP), as the corpus's check.sh serves them."""
    d = os.path.join(REPO, "conformance", "files", "_http")
    p = subprocess.Popen([sys.executable, "-m", "http.server", str(gen_files.HTTP_PORT), "--bind",
                          "127.0.0.1", "--directory", d], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", gen_files.HTTP_PORT)) == 0:
                break
        time.sleep(0.05)
    return p


def start_fake_systemd():
    """One fake systemd for the whole campaign (run-reference.sh binds its directory)."""
    d = os.path.join(SCRATCH[0], "systemd")
    os.makedirs(d)
    p = subprocess.Popen(["python3", os.path.join(HERE, "fake-systemd.py"), os.path.join(d, "private")])
    for _ in range(100):
        if os.path.exists(os.path.join(d, "private")):
            break
        time.sleep(0.05)
    os.environ["FAKE_SYSTEMD_DIR"] = d
    return p


def campaign(a, inputs):
    total = div = delib = 0
    reasons = {}
    kinds = {}
    start = time.time()
    init = enter_files_namespace if a.tool == "files" else None
    with multiprocessing.Pool(a.jobs, initializer=init) as pool:
        for name, same, why, kind, case, ref, got in pool.imap_unordered(check, ((a.tool, c) for c in inputs),
                                                                   chunksize=8):
            total += 1
            if not same:
                div += 1
                if why:
                    delib += 1
                    reasons[why] = reasons.get(why, 0) + 1
                else:
                    kinds[kind] = kinds.get(kind, 0) + 1
                save(a.out, a.tool, name, case, ref, got, why, kind)
            if total % 5000 == 0:
                print("  %d inputs, %d divergences (%d deliberate), %.0f s" % (total, div, delib,
                      time.time() - start), file=sys.stderr, flush=True)
        pool.close()
        pool.join()
    for why, k in sorted(reasons.items()):
        print("deliberate: %s: %d" % (why, k))
    for kind, k in sorted(kinds.items()):
        print("divergent %s: %d" % (kind, k))
    print("divergences in %s" % os.path.join(a.out, a.tool))
    print("%s: %d inputs, %d divergences (%d deliberate)" % (a.tool, total, div, delib))
    return 0 if div == delib else 1


if __name__ == "__main__":
    # Stopped with SIGTERM: unwind, so that the scratch directory, loop devices and mounts
    # of the run in progress are cleaned up by their `finally` blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    SCRATCH[0] = tempfile.mkdtemp(prefix="difftest-")
    os.chmod(SCRATCH[0], 0o755)
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(SCRATCH[0], ignore_errors=True)
