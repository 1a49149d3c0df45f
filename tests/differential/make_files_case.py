#!/usr/bin/env python3
"""make_files_case.py CASE_DIR... -- records what the reference leaves for a files-stage case.

Each CASE_DIR holds setup.sh (builds the starting root, run inside it), config.ign, and
optionally `env` (VAR=value words for both implementations). The reference (run-reference.sh:
flatcar/ignition, fetch + files stages) runs on a fresh root; its tree goes to
expected.manifest (conformance/files/manifest.py), or its failure to expected.fail
(`exit N` and its CRITICAL lines). Run as root.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from difftest import start_http  # conformance/files/_http on 127.0.0.1:18931

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MANIFEST = os.path.join(REPO, "conformance", "files", "manifest.py")
ORACLES = os.environ.get("ORACLES", "/work/shared/oracles")


def record(case):
    case = os.path.abspath(case)
    tmp = tempfile.mkdtemp()
    try:
        os.chmod(tmp, 0o755)
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        os.chmod(root, 0o755)
        subprocess.run(["sh", os.path.join(case, "setup.sh")], cwd=root, check=True)
        env = dict(os.environ, IGNITION=os.path.join(ORACLES, "flatcar", "ignition"))
        if os.path.exists(os.path.join(case, "env")):
            for w in open(os.path.join(case, "env")).read().split():
                k, v = w.split("=", 1)
                env[k] = v
        p = subprocess.run([os.path.join(HERE, "run-reference.sh"), root, os.path.join(case, "config.ign")],
                           env=env, capture_output=True, text=True)
        for f in ("expected.manifest", "expected.fail"):
            if os.path.exists(os.path.join(case, f)):
                os.remove(os.path.join(case, f))
        if p.returncode == 0:
            m = subprocess.run(["python3", MANIFEST, root], capture_output=True, text=True, check=True)
            open(os.path.join(case, "expected.manifest"), "w").write(m.stdout)
            print("%s: tree" % os.path.basename(case))
        else:
            crit = [l for l in p.stderr.splitlines() if "CRITICAL" in l][-2:]
            open(os.path.join(case, "expected.fail"), "w").write(
                "exit %d\n%s\n" % (p.returncode, "\n".join(crit)))
            print("%s: fail (exit %d)" % (os.path.basename(case), p.returncode))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    http = start_http()
    try:
        for c in sys.argv[1:]:
            record(c)
    finally:
        http.kill()
        http.wait()
