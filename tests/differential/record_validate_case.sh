#!/bin/sh
# record_validate_case.sh NAME < CONFIG: adds conformance/ignition-regressions/NAME with the
# config and the reference validator's verdict (exit code, then stdout+stderr), in the format
# of conformance/ignition (run from the folder as `ignition-validate in.ign`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
oracles=${ORACLES:-$repo/../../shared/oracles}
[ -d "$oracles" ] || oracles=/work/shared/oracles
d=$repo/conformance/ignition-regressions/$1
mkdir -p "$d"
cat > "$d/in.ign"
cd "$d"
set +e
out=$("$oracles/ignition-validate" in.ign 2>&1)
rc=$?
set -e
{ printf "%s\n" "$rc"; [ -z "$out" ] || printf "%s\n" "$out"; } > expected
