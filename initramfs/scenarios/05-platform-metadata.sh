# shellcheck shell=bash
# VM_NET and VM_APPEND are read by run-vm-tests:
# shellcheck disable=SC2034
# platform-metadata: a Flatcar AWS boot (flatcar.oem.id=ec2 on the kernel command line, no
# config in fw_cfg): flint picks the aws platform and reads the user data from an IMDSv2
# server on the host (token PUT, then the user data with the token), reached through
# QEMU's user network via the FLINT_METADATA_ENDPOINT hook.

VM_NET=1
VM_APPEND="flatcar.oem.id=ec2"

scenario_setup() {
  local dir=$1
  cat >"$dir/user-data" <<'JSON'
{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/from-imds","mode":420,"contents":{"source":"data:,configured%20by%20IMDSv2%0A"}}]}}
JSON
  vm_spawn python3 -u "$HERE/host/imds.py" "$dir/user-data" >"$dir/imds.log" 2>&1
  for _ in $(seq 50); do
    IMDS_PORT=$(sed -n 's/^port \([0-9][0-9]*\)$/\1/p' "$dir/imds.log")
    [ -n "$IMDS_PORT" ] && return 0
    sleep 0.1
  done
  echo "metadata server did not start: $(cat "$dir/imds.log")" >&2
  return 1
}

scenario_disks() {
  truncate -s 256M "$1/vda.img"
}

scenario_config() { :; }

scenario_guest() {
  cat >"$1" <<GUEST
step "mkfs.ext4 /dev/vda"
mkfs.ext4 -q -F -L root /dev/vda
mount -t ext4 /dev/vda /sysroot
seed-root /sysroot
step "flint apply (platform from the kernel command line, user data from IMDS)"
export FLINT_METADATA_ENDPOINT=http://10.0.2.2:$IMDS_PORT
flint apply --config-source auto --root /sysroot --stage files 2>/run/err || { cat /run/err; exit 1; }
cat /run/err
grep -q 'platform aws' /run/err
umount /sysroot
GUEST
}

scenario_verify() {
  local dir=$1 m=$1/mnt
  check "the guest asked for an IMDSv2 token" grep -q '^PUT /latest/api/token ttl=21600$' "$dir/imds.log"
  check "the guest read the user data with the token" grep -q '^GET /2019-10-01/user-data token=ok$' "$dir/imds.log"
  check "mount the ext4 image" ro_mount "$dir/vda.img" 0 "$m" || return 1
  check "/etc/from-imds holds the config's text" [ "$(cat "$m/etc/from-imds" 2>/dev/null)" = "configured by IMDSv2" ]
  check "the result record says a user config was provided" grep -q '"userConfigProvided": true' "$m/etc/.ignition-result.json"
  checks_ok
}
