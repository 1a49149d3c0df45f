# shellcheck shell=bash
# Upstream Ignition v2.26.0's 30ignition with flint as its `ignition` and the stand-in
# distribution module 31refdistro. Sourced by test-reference-modules (uses its helpers).

# The disk: 1 "boot" (ext4: the first-boot stamp and the boot-loader entry), 2 "root"
# (ext4, the busybox root), then free space for the partition the config adds (3).
# loglevel=3: no info messages of the kernel or systemd on the (slow, emulated) serial
# console; systemd's status lines, which the checks read, stay.
UP_BASE_ARGS="console=ttyS0 panic=-1 loglevel=3 rd.shell=0 rd.emergency=poweroff systemd.status_unit_format=name"

# up_filesystems: the boot and root filesystems every disk starts from (made once, before
# the lanes of boots start).
up_filesystems() {
  local b=$WORK/up-boot
  rm -rf "$b" "$WORK/up-rootdir"
  mkdir -p "$b/loader/entries"
  : >"$b/ignition.firstboot"
  printf 'title refdistro\nlinux /vmlinuz\noptions root=LABEL=root rw ignition.platform.id=qemu refmods.drop\n' \
    >"$b/loader/entries/refdistro.conf"
  mkfs.ext4 -q -F -L boot -d "$b" "$WORK/up-boot.fs" 16M >/dev/null 2>&1 || return 1
  busybox_root "$WORK/up-rootdir"
  mkdir -p "$WORK/up-rootdir/srv"
  mkfs.ext4 -q -F -L root -d "$WORK/up-rootdir" "$WORK/up-root.fs" 64M >/dev/null 2>&1
}

# up_disk NAME: a fresh $WORK/NAME.img.
up_disk() {
  local img=$WORK/$1.img
  rm -f "$img"
  truncate -s 128M "$img"
  sgdisk -n 1:2048:+16M -c 1:boot -n 2:0:+64M -c 2:root "$img" >/dev/null || return 1
  dd if="$WORK/up-boot.fs" of="$img" bs=1M seek=1 conv=notrunc,sparse status=none || return 1
  dd if="$WORK/up-root.fs" of="$img" bs=1M seek=17 conv=notrunc,sparse status=none
}

# up_loader IMG: the host as the boot loader: the entry's options, and ignition.firstboot
# while the stamp is on the boot partition. Sets UP_CMDLINE.
up_loader() {
  local mnt=$WORK/mnt-${1##*/}-boot opts first=""
  ro_mount "$1" "$(part_offset "$1" 1)" "$mnt" || return 1
  opts=$(sed -n 's/^options //p' "$mnt/loader/entries/refdistro.conf")
  [ -e "$mnt/ignition.firstboot" ] && first=" ignition.firstboot"
  ro_umount "$mnt"
  UP_CMDLINE="$UP_BASE_ARGS $opts$first"
}
up_stamp() {
  local mnt=$WORK/mnt-${1##*/}-boot rc=1
  ro_mount "$1" "$(part_offset "$1" 1)" "$mnt" || return 2
  [ -e "$mnt/ignition.firstboot" ] && rc=0
  ro_umount "$mnt"
  return "$rc"
}
up_options() {
  local mnt=$WORK/mnt-${1##*/}-boot
  ro_mount "$1" "$(part_offset "$1" 1)" "$mnt" || return 1
  sed -n 's/^options //p' "$mnt/loader/entries/refdistro.conf"
  ro_umount "$mnt"
}

# up_boot NAME INITRD DISK CONFIG [EXTRA-ARGS]
up_boot() {
  up_loader "$3" || return 1
  qboot "$1" "$2" "$3" "$UP_CMDLINE${5:+ $5}" "$4"
}

up_configs() {
  cat >"$WORK/up-good.ign" <<'EOF'
{"ignition": {"version": "3.4.0"},
 "kernelArguments": {"shouldExist": ["refmods.karg=1"], "shouldNotExist": ["refmods.drop"]},
 "storage": {
   "disks": [{"device": "/dev/vda", "partitions": [{"number": 3, "label": "data", "sizeMiB": 0}]}],
   "filesystems": [{"device": "/dev/disk/by-partlabel/data", "format": "ext4", "label": "DATA", "path": "/srv"}],
   "directories": [{"path": "/etc/refmods.d", "mode": 488}],
   "files": [
     {"path": "/etc/flint-e2e", "mode": 420, "contents": {"source": "data:,provisioned%20by%20the%20reference%20modules%0A"}},
     {"path": "/etc/refmods.d/gz", "mode": 384, "contents": {"compression": "gzip", "source": "data:;base64,H4sIAAAAAAAAA8tIzcnJBwCGphA2BQAAAA=="}},
     {"path": "/srv/data/hello", "mode": 416, "user": {"name": "core"}, "group": {"name": "ops"}, "contents": {"source": "data:,on%20the%20new%20filesystem%0A"}}],
   "links": [{"path": "/etc/refmods-link", "target": "/etc/flint-e2e"}]},
 "passwd": {
   "groups": [{"name": "ops", "gid": 2000}],
   "users": [{"name": "core", "groups": ["ops"], "sshAuthorizedKeys": ["ssh-ed25519 AAAA refmods"]}]},
 "systemd": {"units": [
   {"name": "refmods.service", "enabled": true, "contents": "[Unit]\nDescription=refmods\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
   {"name": "srv.mount", "enabled": true, "contents": "[Mount]\nWhat=/dev/disk/by-label/DATA\nWhere=/srv\nType=ext4\n[Install]\nWantedBy=local-fs.target\n"},
   {"name": "getty@.service", "dropins": [{"name": "refmods.conf", "contents": "[Service]\nTTYVTDisallocate=no\n"}]}]}}
EOF
  # The files stage fails: /etc/passwd is a file, not a directory.
  cat >"$WORK/up-bad.ign" <<'EOF'
{"ignition": {"version": "3.4.0"},
 "storage": {"files": [{"path": "/etc/flint-e2e", "contents": {"source": "data:,x"}},
                       {"path": "/etc/passwd/x", "contents": {"source": "data:,x"}}]}}
EOF
}

up_build() {
  install_modules "$REFS/ignition-v2.26.0/dracut" 30ignition
  # As a distribution packages its binary: into the module directory, as `ignition`.
  cp "$FLINT_BIN" "$DRACUT_MODULES_D/30ignition/ignition"
  install_modules "$HERE/refmods" 31refdistro
  local t0=$SECONDS
  if build_image "$WORK/up-initrd.cpio" "$WORK/up-dracut.log" \
    "bash systemd systemd-initrd dracut-systemd rootfs-block refdistro" "virtio_pci virtio_blk ext4"; then
    pass "upstream-dracut-build ($((SECONDS - t0)) s)"
  else
    fail upstream-dracut-build "$(tail -n 3 "$WORK/up-dracut.log" | tr '\n' ' ')"
    remove_modules
    return 1
  fi
  remove_modules
  local why=""
  cmp -s <(lsinitrd -f usr/bin/ignition "$WORK/up-initrd.cpio") "$FLINT_BIN" || why+=" /usr/bin/ignition is not flint;"
  cmp -s <(lsinitrd -f usr/sbin/ignition-kargs-helper "$WORK/up-initrd.cpio") "$HERE/refmods/31refdistro/refdistro-kargs-helper" \
    || why+=" the kargs helper is not refdistro's;"
  lsinitrd "$WORK/up-initrd.cpio" >"$WORK/up-lsinitrd.txt" 2>&1 || true
  for u in fetch-offline fetch kargs disks mount files; do
    grep -q "ignition-complete.target.requires/ignition-$u.service" \
      "$WORK/up-lsinitrd.txt" || why+=" ignition-$u.service not required by ignition-complete.target;"
  done
  verdict upstream-image-contents "$why"
  # The reference binary and the stock helper: the same image with one file replaced.
  append_file "$WORK/up-initrd.cpio" "$WORK/up-initrd-ref.cpio" usr/bin/ignition "$ORACLE"
  append_file "$WORK/up-initrd.cpio" "$WORK/up-initrd-stock.cpio" usr/sbin/ignition-kargs-helper \
    "$REFS/ignition-v2.26.0/dracut/30ignition/ignition-kargs-helper.sh"
}

# up_kargs_boot NAME WHO INITRD DISK: boot 1, the helper sets the arguments and reboots.
up_kargs_boot() {
  local name=$1 disk=$4 why="" opts
  up_boot "$name" "$3" "$disk" "$WORK/up-good.ign" || { fail "$name" "no boot loader entry"; return; }
  [[ " $UP_CMDLINE " == *" ignition.firstboot "* ]] || why+=" no ignition.firstboot before boot 1;"
  [ "$VM_END" = exit ] || why+=" the VM did not reboot ($VM_END);"
  has_line "$name" "Finished ignition-fetch-offline.service" || why+=" fetch-offline did not finish;"
  ran "$name" ignition-kargs.service || why+=" the kargs stage did not run;"
  ran "$name" ignition-disks.service && why+=" went on past kargs;"
  opts=$(up_options "$disk")
  [[ " $opts " == *" refmods.karg=1 "* ]] || why+=" options lack refmods.karg=1 ($opts);"
  [[ " $opts " == *" refmods.drop "* ]] && why+=" options still have refmods.drop;"
  up_stamp "$disk" || why+=" the first-boot stamp is gone;"
  verdict "upstream-$2-kargs-reboot (${VM_SECS}s)" "$why"
}

# up_provision_boot NAME WHO INITRD DISK: boot 2, every stage runs, the root is reached.
up_provision_boot() {
  local name=$1 disk=$4 why=""
  up_boot "$name" "$3" "$disk" "$WORK/up-good.ign" || { fail "$name" "no boot loader entry"; return; }
  has_line "$name" "ROOT-CMDLINE .* refmods\.karg=1" || why+=" refmods.karg=1 not on /proc/cmdline;"
  has_line "$name" "ROOT-CMDLINE .* refmods\.drop( |$)" && why+=" refmods.drop still on /proc/cmdline;"
  local prev="" u
  for u in fetch-offline kargs disks mount files; do
    has_line "$name" "Finished ignition-$u.service" || why+=" ignition-$u.service did not finish;"
    [ -z "$prev" ] || before "$name" "Finished ignition-$prev.service" "Starting ignition-$u.service" \
      || why+=" ignition-$u before ignition-$prev finished;"
    prev=$u
  done
  ran "$name" ignition-fetch.service && why+=" the fetch stage ran (no network needed);"
  before "$name" "Reached target ignition-complete.target" "Reached target initrd.target" \
    || why+=" initrd.target before ignition-complete.target;"
  has_line "$name" "Finished refdistro-firstboot-done.service" || why+=" the stamp unit did not finish;"
  before "$name" "Reached target initrd.target" "ROOT-REACHED" || why+=" the root was not reached;"
  has_line "$name" "ROOT-FILE provisioned by the reference modules" || why+=" the root lacks /etc/flint-e2e;"
  up_stamp "$disk" && why+=" the first-boot stamp is still there;"
  verdict "upstream-$2-provisions (${VM_SECS}s)" "$why"
  disk_manifest "$disk" "$WORK/up-$2.manifest" 2 3
}

# The provisioned root, as the config says (on the flint run's manifest).
check_provisioned() { # NAME MANIFEST
  local m=$2 why=""
  in_manifest "$m" '^etc/flint-e2e f 644 0:0 ' || why+=" /etc/flint-e2e;"
  in_manifest "$m" '^etc/refmods.d d 750 0:0$' || why+=" /etc/refmods.d;"
  in_manifest "$m" "^etc/refmods.d/gz f 600 0:0 $(printf hello | sha256sum | cut -c1-16)$" || why+=" /etc/refmods.d/gz (gzip);"
  in_manifest "$m" '^etc/refmods-link l 777 0:0 -> /etc/flint-e2e$' || why+=" /etc/refmods-link;"
  in_manifest "$m" '^home/core d [0-7]+ 1000:[0-9]+$' || why+=" /home/core;"
  in_manifest "$m" '^home/core/.ssh/authorized_keys.d/ignition f 600 1000:[0-9]+ ' || why+=" the SSH key;"
  in_manifest "$m" '^etc/systemd/system/srv.mount f 644 0:0 ' || why+=" srv.mount;"
  in_manifest "$m" '^etc/systemd/system/getty@.service.d/refmods.conf f 644 ' || why+=" the drop-in;"
  in_manifest "$m" '^etc/systemd/system-preset/20-ignition.preset f 644 ' || why+=" the preset;"
  in_manifest "$m" '^== partition (3|10)$' || why+=" no new partition;"
  in_manifest "$m" '^data/hello f 640 1000:2000 ' || why+=" /srv/data/hello on the new filesystem;"
  verdict "$1" "$why"
}

up_flint_chain() {
  local D=$WORK/up-flint.img why=""
  up_disk up-flint || { fail up-flint-disk "could not build the disk"; return; }
  up_kargs_boot up-flint-1 flint "$WORK/up-initrd.cpio" "$D"
  up_provision_boot up-flint-2 flint "$WORK/up-initrd.cpio" "$D"
  check_provisioned upstream-flint-root-as-configured "$WORK/up-flint.manifest"
  # Boot 3: the stamp is gone, so no ignition.firstboot: the subsequent target, no stage.
  up_boot up-flint-3 "$WORK/up-initrd.cpio" "$D" "$WORK/up-good.ign"
  [[ " $UP_CMDLINE " == *" ignition.firstboot"* ]] && why+=" the boot loader still passed ignition.firstboot;"
  has_line up-flint-3 "Starting ignition-" && why+=" an ignition stage ran;"
  has_line up-flint-3 "Reached target ignition-subsequent.target" || why+=" ignition-subsequent.target not reached;"
  has_line up-flint-3 "ROOT-REACHED" || why+=" the root was not reached;"
  verdict "upstream-flint-next-boot-runs-no-stage (${VM_SECS}s)" "$why"
}

up_bad_boot() {
  local D=$WORK/up-bad.img why=""
  up_disk up-bad || { fail up-bad-disk "could not build the disk"; return; }
  up_boot up-bad "$WORK/up-initrd.cpio" "$D" "$WORK/up-bad.ign"
  has_line up-bad "Failed to start ignition-files.service" || why+=" ignition-files.service did not fail;"
  before up-bad "Failed to start ignition-files.service" "Reached target emergency.target" \
    || why+=" no emergency.target after the failure;"
  has_line up-bad "Reached target initrd.target" && why+=" initrd.target reached;"
  has_line up-bad "ROOT-REACHED" && why+=" switched to the root;"
  up_stamp "$D" || why+=" the first-boot stamp was removed;"
  verdict "upstream-flint-bad-config-emergency (${VM_SECS}s)" "$why"
}

# The module's own helper refuses kernel arguments: the kargs stage fails the boot.
up_stock_boot() {
  local D=$WORK/up-stock.img why=""
  up_disk up-stock || { fail up-stock-disk "could not build the disk"; return; }
  # The journal on the console: the helper's words are only in Ignition's log.
  up_boot up-stock "$WORK/up-initrd-stock.cpio" "$D" "$WORK/up-good.ign" systemd.journald.forward_to_console=1
  has_line up-stock "Failed to start ignition-kargs.service" || why+=" ignition-kargs.service did not fail;"
  has_line up-stock "not supported by this Linux distribution" || why+=" the stock helper's message not logged;"
  before up-stock "Failed to start ignition-kargs.service" "Reached target emergency.target" \
    || why+=" no emergency.target after the failure;"
  ran up-stock ignition-disks.service && why+=" the disks stage ran;"
  has_line up-stock "ROOT-REACHED" && why+=" switched to the root;"
  [[ " $(up_options "$D") " == *" refmods.drop "* ]] || why+=" the entry was changed;"
  verdict "upstream-flint-stock-kargs-helper-fails (${VM_SECS}s)" "$why"
}

up_ref_chain() {
  local D=$WORK/up-ref.img
  up_disk up-ref || { fail up-ref-disk "could not build the disk"; return; }
  up_kargs_boot up-ref-1 reference "$WORK/up-initrd-ref.cpio" "$D"
  up_provision_boot up-ref-2 reference "$WORK/up-initrd-ref.cpio" "$D"
}

upstream_prepare() {
  up_configs
  up_filesystems || { fail upstream-filesystems "mkfs failed"; return 1; }
  up_build
}
upstream_finish() {
  compare_manifests upstream-root-flint-equals-reference "$WORK/up-flint.manifest" "$WORK/up-reference.manifest"
}
