# shellcheck shell=bash
# files-smoke: the files stage against a real ext4 root in a VM, with the config from QEMU
# fw_cfg as on Flatcar: /etc/hostname, user core (useradd --root) with an SSH key; then
# a second apply must find nothing to change.

SMOKE_KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f vmtest@flint"

scenario_disks() {
  truncate -s 256M "$1/vda.img"
}

scenario_config() {
  cat >"$1" <<EOF
{
  "ignition": { "version": "3.3.0" },
  "storage": {
    "files": [
      { "path": "/etc/hostname", "mode": 420, "overwrite": true,
        "contents": { "source": "data:,vmtest" } }
    ]
  },
  "passwd": {
    "users": [ { "name": "core", "sshAuthorizedKeys": [ "$SMOKE_KEY" ] } ]
  }
}
EOF
}

scenario_guest() {
  cat >"$1" <<'EOF'
step "mkfs.ext4 /dev/vda"
mkfs.ext4 -q -F -L root /dev/vda
mount -t ext4 /dev/vda /sysroot
seed-root /sysroot

step "flint apply (first)"
flint apply --config-source auto --root /sysroot --stage files

step "flint apply (second: must be a no-op)"
out=$(flint apply --config-source auto --root /sysroot --stage files)
echo "$out"
echo "$out" | grep -qx 'apply: nothing to change'

step "umount"
umount /sysroot
EOF
}

scenario_verify() {
  local dir=$1 m=$1/mnt
  check "mount the ext4 image" ro_mount "$dir/vda.img" 0 "$m" || return 1
  check "/etc/hostname is vmtest" [ "$(cat "$m/etc/hostname" 2>/dev/null)" = vmtest ]
  check "core in /etc/passwd" grep -q '^core:' "$m/etc/passwd"
  check "core's key in authorized_keys.d/ignition" \
    grep -qxF "$SMOKE_KEY" "$m/home/core/.ssh/authorized_keys.d/ignition"
  checks_ok
}
