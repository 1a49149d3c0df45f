#!/bin/bash
# render-reference.sh CONFIG
# Runs Flatcar's Ignition (the reference: $IGNITION, default /work/shared/oracles/flatcar/ignition)
# fetch stage on CONFIG, platform `file`, with empty system config directories, and prints the
# config it renders (its -config-cache) on stdout, exit 0. When the fetch stage fails, prints
# its CRITICAL/ERROR lines on stdout and exits 1. Used to (re)make this corpus; the tests do
# not need it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
IGN=${IGNITION:-/work/shared/oracles/flatcar/ignition}
[ $# -eq 1 ] || { echo "usage: $0 CONFIG" >&2; exit 2; }
CONFIG=$(readlink -f "$1")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/sys" "$W/run" "$W/local" "$W/root"
cd "$W" || exit 2
env -u container PATH="/usr/sbin:/usr/bin:/sbin:/bin" \
  IGNITION_CONFIG_FILE="$CONFIG" \
  IGNITION_SYSTEM_CONFIG_DIR="$W/sys" IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="$W/run" \
  IGNITION_SYSTEM_LOCAL_CONFIG_DIR="$W/local" \
  "$IGN" -platform file -stage fetch -root "$W/root" -log-to-stdout \
    -config-cache "$W/ignition.json" -neednet "$W/neednet" -state-file "$W/state" \
    >"$W/log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -f "$W/ignition.json" ]; then
  grep -a -E '^(CRITICAL|ERROR)|^panic|^\S.*(invalid memory|nil pointer)' "$W/log" | sed "s#$W#{work}#g"
  exit 1
fi
cat "$W/ignition.json"; echo
