#!/usr/bin/env python3
"""Writes crates/go/src/goquote/print.rs: the characters above U+007F that Go's strconv.IsPrint
accepts in the reference tools' build. It asks the reference validator (argument 1, default
../shared/oracles/ignition-validate) to quote every code point: units whose section line
carries garbage, which its message quotes with %q, leaving printable characters as they are.

Run from the repository: python3 scripts/probe-go-isprint.py [VALIDATOR]"""
import json
import os
import re
import subprocess
import sys
import tempfile

validator = sys.argv[1] if len(sys.argv) > 1 else "../shared/oracles/ignition-validate"
cps = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
# 400 characters of at most 4 bytes (and a separator each) keep the line under 2,048 bytes
CH = 400
chunks = [cps[i:i + CH] for i in range(0, len(cps), CH)]
units = [{"name": "u%d.service" % k,
          "contents": "[Unit]x" + "".join(chr(c) + "|" for c in chunk) + "x\n"}
         for k, chunk in enumerate(chunks)]
with tempfile.NamedTemporaryFile("w", suffix=".ign", delete=False) as f:
    json.dump({"ignition": {"version": "3.4.0"}, "systemd": {"units": units}}, f)
out = subprocess.run([validator, f.name], capture_output=True).stdout.decode()
os.unlink(f.name)
printable = {}
for line in out.splitlines():
    m = re.match(r'error at \$\.systemd\.units\.(\d+)\.contents.*section name : "x(.*)x"$', line)
    if m:
        k = int(m.group(1))
        parts = m.group(2).split("|")[:-1]
        assert len(parts) == len(chunks[k]), k
        for c, p in zip(chunks[k], parts):
            printable[c] = p == chr(c)
assert len(printable) == len(cps), "not every code point was quoted"
ranges = []
for c in cps:
    if printable[c]:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
rows = ["(0x%x, 0x%x)," % (a, b) for a, b in ranges]
with open("crates/go/src/goquote/print.rs", "w") as f:
    f.write("//! The characters above U+007F that Go's `strconv.IsPrint` accepts (letters, marks,\n"
            "//! numbers, punctuation and symbols of the Unicode version the reference tools were built\n"
            "//! with), as ranges. Made by `scripts/probe-go-isprint.py`, which asks the reference\n"
            "//! validator to quote every code point and sees which it leaves as they are.\n\n"
            "pub const PRINT: &[(u32, u32)] = &[\n")
    for i in range(0, len(rows), 4):
        f.write("    " + " ".join(rows[i:i + 4]) + "\n")
    f.write("];\n")
print("%d printable code points above U+007F in %d ranges" % (sum(printable.values()), len(ranges)))
