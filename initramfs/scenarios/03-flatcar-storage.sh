# shellcheck shell=bash
# flatcar-storage: a Flatcar-like machine provisioned from nothing by flint's disks, mount,
# files and umount stages, run one by one as the initramfs units run them: GPT on vda (ESP
# vfat mounted at /boot, swap, LUKS2 with a key file holding xfs for /var, btrfs for /srv),
# root ext4 on RAID1 across vdb and vdc; a user with an SSH key, files, an enabled unit, a
# drop-in and a masked unit. The guest writes data after provisioning; a second boot runs
# the whole of `flint apply` again on the same disks: it must assemble the array, open the
# volume, reuse every filesystem, report no change, and the data must survive.

STORAGE_KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBESEhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v core@flint"
LUKS_KEY="flint-test-luks-key-0123456789abcdef"

scenario_disks() {
  truncate -s 1200M "$1/vda.img"
  truncate -s 256M "$1/vdb.img" "$1/vdc.img"
}

scenario_config() {
  cat >"$1" <<JSON
{
  "ignition": { "version": "3.4.0" },
  "storage": {
    "disks": [ { "device": "/dev/vda", "partitions": [
      { "number": 1, "label": "ESP", "sizeMiB": 64, "typeGuid": "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" },
      { "number": 2, "label": "SWAP", "sizeMiB": 32, "typeGuid": "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F" },
      { "number": 3, "label": "CRYPT", "sizeMiB": 400 },
      { "number": 4, "label": "DATA", "sizeMiB": 0 } ] } ],
    "raid": [ { "name": "root", "level": "raid1", "devices": [ "/dev/vdb", "/dev/vdc" ],
                "options": [ "--metadata=1.2", "--assume-clean" ] } ],
    "luks": [ { "name": "var", "device": "/dev/disk/by-partlabel/CRYPT", "label": "luks-var",
                "keyFile": { "source": "data:,$LUKS_KEY" }, "discard": true,
                "options": [ "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000" ] } ],
    "filesystems": [
      { "device": "/dev/md/root", "format": "ext4", "label": "ROOT", "path": "/" },
      { "device": "/dev/disk/by-partlabel/ESP", "format": "vfat", "label": "EFI", "path": "/boot",
        "uuid": "ABCD-1234" },
      { "device": "/dev/disk/by-partlabel/SWAP", "format": "swap", "label": "swap" },
      { "device": "/dev/mapper/var", "format": "xfs", "label": "VAR", "path": "/var" },
      { "device": "/dev/disk/by-partlabel/DATA", "format": "btrfs", "label": "DATA", "path": "/srv" } ],
    "files": [
      { "path": "/etc/hostname", "mode": 420, "overwrite": true, "contents": { "source": "data:,storage-vm" } },
      { "path": "/boot/flint/marker", "contents": { "source": "data:,on-the-esp" } },
      { "path": "/var/lib/flint/marker", "contents": { "source": "data:,on-luks-xfs" } },
      { "path": "/srv/marker", "contents": { "source": "data:,on-btrfs" } } ]
  },
  "passwd": { "users": [ { "name": "core", "sshAuthorizedKeys": [ "$STORAGE_KEY" ] } ] },
  "systemd": { "units": [
    { "name": "demo.service", "enabled": true,
      "contents": "[Unit]\\nDescription=demo\\n[Service]\\nExecStart=/bin/true\\n[Install]\\nWantedBy=multi-user.target\\n" },
    { "name": "sshd.service", "dropins": [ { "name": "10-flint.conf", "contents": "[Service]\\nEnvironment=FLINT=1\\n" } ] },
    { "name": "unwanted.service", "mask": true } ] }
}
JSON
}

scenario_guest() {
  cat >"$1" <<'GUEST'
export FLINT_DEVICE_TIMEOUT=20
run() { flint apply --config-source auto --config-cache /run/flint/config.json --root /sysroot "$@"; }
mkdir -p /run/flint
step "flint: disks"; run --stage disks
step "flint: mount"; run --stage mount
[ -e /sysroot/etc/passwd ] || seed-root /sysroot
step "flint: files"; run --stage files
step "user data written after provisioning"
echo "keep me" > /sysroot/srv/user-data
echo "keep me too" > /sysroot/var/user-data
sync
step "flint: umount"; run --stage umount
if grep -q /sysroot /proc/mounts; then echo "still mounted"; exit 1; fi
mdadm --stop /dev/md/root
cryptsetup close var
GUEST
}

scenario_guest2() {
  cat >"$1" <<'GUEST'
export FLINT_DEVICE_TIMEOUT=20
step "flint apply: all stages on provisioned disks"
out=$(flint apply --config-source auto --root /sysroot)
echo "$out"
echo "$out" | grep -qx 'apply: nothing to change'
step "flint plan: nothing"
plan=$(flint plan --config-source auto --root /sysroot)
if [ -n "$plan" ]; then echo "plan not empty: $plan"; exit 1; fi
step "user data survived"
mount -t xfs -o ro /dev/mapper/var /mnt
grep -qx "keep me too" /mnt/user-data
umount /mnt
GUEST
}

scenario_verify() {
  local dir=$1 img=$1/vda.img m=$1/mnt off n
  local -a p
  for n in 1 2 3 4; do
    p[n]=$(part_offset "$img" "$n") || { check "partition $n exists" false; return 1; }
  done
  check "ESP is vfat EFI ABCD-1234" [ "$(blkid_at "$img" "${p[1]}" TYPE)/$(blkid_at "$img" "${p[1]}" LABEL)/$(blkid_at "$img" "${p[1]}" UUID)" = vfat/EFI/ABCD-1234 ]
  check "partition 2 is swap" [ "$(blkid_at "$img" "${p[2]}" TYPE)" = swap ]
  check "partition 3 is LUKS luks-var" [ "$(blkid_at "$img" "${p[3]}" TYPE)/$(blkid_at "$img" "${p[3]}" LABEL)" = crypto_LUKS/luks-var ]
  check "partition 4 is btrfs DATA" [ "$(blkid_at "$img" "${p[4]}" TYPE)/$(blkid_at "$img" "${p[4]}" LABEL)" = btrfs/DATA ]
  check "ESP holds the marker" [ "$(vfat_cat "$img" "${p[1]}" /flint/marker)" = on-the-esp ]
  check "vdb is a raid1 member" sh -c "mdadm --examine '$dir/vdb.img' | grep -q 'Raid Level : raid1'"
  off=$(md_data_offset "$dir/vdb.img") || { check "md data offset" false; return 1; }
  check "root ext4 on the mirror" ro_mount "$dir/vdb.img" "$off" "$m/root" || return 1
  check "hostname" [ "$(cat "$m/root/etc/hostname")" = storage-vm ]
  check "core's key" grep -qxF "$STORAGE_KEY" "$m/root/home/core/.ssh/authorized_keys.d/ignition"
  check "demo.service enabled by preset" grep -qx "enable demo.service" "$m/root/etc/systemd/system-preset/20-ignition.preset"
  check "sshd drop-in" grep -q FLINT=1 "$m/root/etc/systemd/system/sshd.service.d/10-flint.conf"
  check "unwanted.service masked" [ "$(readlink "$m/root/etc/systemd/system/unwanted.service")" = /dev/null ]
  check "LUKS key in /etc/luks/var" [ "$(cat "$m/root/etc/luks/var")" = "$LUKS_KEY" ]
  check "/etc/luks 0700, the key 0600" [ "$(stat -c %a "$m/root/etc/luks")/$(stat -c %a "$m/root/etc/luks/var")" = 700/600 ]
  # As upstream's: no discard option (the flag is in the LUKS2 header, see below), 0600.
  check "crypttab line" grep -qE '^var UUID=[0-9a-f-]+ /etc/luks/var luks$' "$m/root/etc/crypttab"
  check "crypttab 0600" [ "$(stat -c %a "$m/root/etc/crypttab")" = 600 ]
  _vm_loop "$img" "${p[3]}" && check "allow-discards kept in the LUKS2 header (--persistent)" \
    sh -c "cryptsetup luksDump '$VM_LAST_LOOP' | grep -qE '^Flags: .*allow-discards'"
  check "mount points made on root" test -d "$m/root/var" -a -d "$m/root/srv" -a -d "$m/root/boot"
  check "btrfs data" ro_mount "$img" "${p[4]}" "$m/srv" || return 1
  check "/srv marker" [ "$(cat "$m/srv/marker")" = on-btrfs ]
  check "/srv user data survived the second boot" [ "$(cat "$m/srv/user-data")" = "keep me" ]
  # Per-stage figures: the first boot's stage runs, then the second boot's full run.
  awk '/stage times:/ { sub(/.*stage times: /, ""); print }' "$dir/serial.log" "$dir/serial2.log" |
    tr '\n' ';' >"$dir/figures"
  checks_ok
}
