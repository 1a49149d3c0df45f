#!/bin/bash
# run-reference.sh [--stages "fetch disks mount files umount"] ROOT CONFIG
# Runs the reference Ignition ($IGNITION, default ../shared/oracles/flatcar/ignition) stage by
# stage against ROOT, like the oracle's run-ignition.sh, but so that the storage stages work
# on loop devices without systemd and udev: inside a private mount namespace, with a tmpfs on
# /run holding fake-systemd.py's /run/systemd/private (device units "start" once their node
# exists) and a `udevadm` on PATH that only waits for the device nodes (no udev here; devtmpfs
# makes the nodes). Mounts made by the mount stage stay in that namespace and are gone with
# it, so run every stage (mount ... umount) in one call when they matter.
# FAKE_SYSTEMD_DIR: a directory whose `private` socket a running fake-systemd.py serves; it
# is bound at /run/systemd instead of starting one per call.
# Exit status: that of the first failing stage; its log (without DEBUG lines) on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
stages="fetch files"
if [ "${1:-}" = --stages ]; then stages=$2; shift 2; fi
[ $# -eq 2 ] || { echo "usage: $0 [--stages \"fetch disks mount files umount\"] ROOT CONFIG" >&2; exit 2; }
ROOT=$(readlink -f "$1"); CONFIG=$(readlink -f "$2")
IGN=${IGNITION:-$here/../../../shared/oracles/flatcar/ignition}
IGN=$(readlink -f "$IGN")
[ -x "$IGN" ] || { echo "no reference ignition at $IGN (set IGNITION)" >&2; exit 2; }
if [ -z "${FLINT_REF_INNER:-}" ]; then
  exec env FLINT_REF_INNER=1 unshare -m --propagation private "$0" --stages "$stages" "$ROOT" "$CONFIG"
fi
W=$(mktemp -d); FAKE=; trap '[ -n "$FAKE" ] && kill $FAKE 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/sys" "$W/run" "$W/local" "$W/bin"
mount -t tmpfs tmpfs /run && mkdir -p /run/systemd
if [ -n "${FAKE_SYSTEMD_DIR:-}" ] && [ -S "$FAKE_SYSTEMD_DIR/private" ]; then
  # a fake-systemd.py already serving (the harness starts one per campaign: a python start
  # per run cost more than the stages themselves)
  mount --bind "$FAKE_SYSTEMD_DIR" /run/systemd
else
  python3 "$here/fake-systemd.py" /run/systemd/private & FAKE=$!
fi
cat > "$W/bin/udevadm" <<'EOT'
#!/bin/sh
# stand-in for udevadm: wait (5 s at most) for the node named last, then succeed
for a; do last=$a; done
i=0; while [ -n "${last:-}" ] && [ ! -e "$last" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
exit 0
EOT
chmod +x "$W/bin/udevadm"
for _ in $(seq 50); do [ -S /run/systemd/private ] && break; sleep 0.05; done
umask 022
cd "$W" || exit 1
for st in $stages; do
  env -u container PATH="$W/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    IGNITION_CONFIG_FILE="$CONFIG" \
    IGNITION_SYSTEM_CONFIG_DIR="$W/sys" IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="$W/run" \
    IGNITION_SYSTEM_LOCAL_CONFIG_DIR="$W/local" \
    "$IGN" -platform "${IGNITION_PLATFORM:-file}" -stage "$st" -root "$ROOT" -log-to-stdout \
      -config-cache "$W/ignition.json" -neednet "$W/neednet" -state-file "$W/state" \
      >"$W/log.$st" 2>&1
  rc=$?
  [ -n "${KEEP_LOG:-}" ] && cp "$W/log.$st" "$KEEP_LOG/"
  if [ $rc -ne 0 ] || grep -aq -e CRITICAL -e panic "$W/log.$st"; then
    grep -av '^DEBUG' "$W/log.$st" | grep -a -e CRITICAL -e ERROR -e panic | sed "s#$ROOT#{root}#g" >&2
    echo "stage $st failed (exit $rc)" >&2
    exit $(( rc == 0 ? 1 : rc ))
  fi
done
exit 0
