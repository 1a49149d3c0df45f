# shellcheck shell=bash
# disks-failure: a partition that does not fit the disk. flint must fail in the disks stage
# naming the entry, before anything is written: no partition table, no filesystem.

scenario_disks() {
  truncate -s 128M "$1/vda.img"
}

scenario_config() {
  cat >"$1" <<'JSON'
{
  "ignition": { "version": "3.4.0" },
  "storage": {
    "disks": [ { "device": "/dev/vda", "partitions": [
      { "number": 1, "label": "ROOT", "sizeMiB": 64 },
      { "number": 2, "label": "BIG", "sizeMiB": 512 } ] } ],
    "filesystems": [ { "device": "/dev/disk/by-partlabel/ROOT", "format": "ext4", "path": "/" } ]
  }
}
JSON
}

scenario_guest() {
  cat >"$1" <<'GUEST'
export FLINT_DEVICE_TIMEOUT=5
rc=0
flint apply --config-source auto --root /sysroot 2>/run/err || rc=$?
cat /run/err
[ "$rc" = 1 ]
grep -q 'error: disks stage failed at \$.storage.disks.0.partitions.1: /dev/vda: partition 2: 512 MiB at 65 MiB does not fit' /run/err
GUEST
}

scenario_verify() {
  local img=$1/vda.img
  check "no partition table written" [ -z "$(blkid -p -o value -s PTTYPE "$img")" ]
  check "no filesystem written" [ -z "$(blkid -p -o value -s TYPE "$img")" ]
  checks_ok
}
