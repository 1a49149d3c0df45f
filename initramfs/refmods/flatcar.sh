# shellcheck shell=bash
# Flatcar bootengine's modules with flint as the USR partition's usr/bin/ignition (which
# the initramfs's /usr/bin/ignition wrapper execs). Sourced by test-reference-modules.

FC_MODULES="30ignition 99setup-root 30disk-uuid 10diskless-generator 10usr-generator 99emergency-timeout 99journald-conf 99switch-root"
# Flatcar's command line, as its GRUB gives it (no dm-verity here: USR-A by its label),
# and the test's console settings (see UP_BASE_ARGS).
FC_BASE_ARGS="console=ttyS0 panic=-1 loglevel=3 systemd.status_unit_format=name root=LABEL=ROOT rootflags=rw mount.usr=/dev/disk/by-partlabel/USR-A mount.usrflags=ro flatcar.oem.id=qemu"

# The scripts Flatcar's bootengine ebuild makes executable after installing the modules
# (dracut keeps each file's mode; in the bootengine tree some of these are 0644).
FC_EXECUTABLES="10diskless-generator/diskless-generator 10usr-generator/usr-generator
  10diskless-generator/diskless-btrfs 30disk-uuid/disk-uuid.sh 30ignition/ignition-generator
  30ignition/ignition-setup.sh 30ignition/ignition-setup-pre.sh 30ignition/ignition-kargs-helper
  30ignition/retry-umount.sh 99setup-root/initrd-setup-root
  99setup-root/initrd-setup-root-after-ignition 99setup-root/gpg-agent-wrapper"

fc_build() {
  local f
  # shellcheck disable=SC2086 # a list of names
  install_modules "$REFS/flatcar-bootengine/dracut" $FC_MODULES
  for f in $FC_EXECUTABLES; do chmod a+x "$DRACUT_MODULES_D/$f"; done
  install_modules "$HERE/refmods" 99flatcar-standins
  local t0=$SECONDS
  if build_image "$WORK/fc-initrd.cpio" "$WORK/fc-dracut.log" \
    "bash systemd systemd-initrd dracut-systemd rootfs-block ignition setup-root disk-uuid diskless-generator usr-generator emergency-timeout journald-conf switch-root flatcar-standins" \
    "virtio_pci virtio_blk ext4 btrfs vfat nls_cp437 nls_iso8859_1 nls_ascii overlay"; then
    pass "flatcar-dracut-build ($((SECONDS - t0)) s)"
  else
    fail flatcar-dracut-build "$(tail -n 3 "$WORK/fc-dracut.log" | tr '\n' ' ')"
    remove_modules
    return 1
  fi
  remove_modules
  local why=""
  lsinitrd -f usr/bin/ignition "$WORK/fc-initrd.cpio" | grep -q 'exec "/sysusr/usr/bin/ignition"' \
    || why+=" /usr/bin/ignition is not the /sysusr wrapper;"
  lsinitrd "$WORK/fc-initrd.cpio" >"$WORK/fc-lsinitrd.txt" 2>&1 || true
  for f in usr/sbin/ignition-kargs-helper usr/sbin/ignition-setup usr/sbin/flatcar-tmpfiles usr/sbin/initrd-setup-root; do
    grep -qE "^-r.x.*[0-9] $f$" "$WORK/fc-lsinitrd.txt" || why+=" no executable $f;"
  done
  verdict flatcar-image-contents "$why"
}

# fc_usr DIR BINARY: a USR partition's tree (what is mounted at /sysusr/usr, then
# /sysroot/usr) with BINARY as bin/ignition.
fc_usr() {
  local d=$1 lib t
  mkdir -p "$d/bin" "$d/lib64" "$d/lib/tmpfiles.d" "$d/share/baselayout" "$d/share/flatcar/etc/flatcar"
  cp "$2" "$d/bin/ignition"
  # Its libraries beyond glibc (the initramfs has that), found by the wrapper's
  # LD_LIBRARY_PATH=/sysusr/usr/lib64.
  for lib in $(ldd "$2" | grep -o '/[^ ]*\.so[^ ]*'); do
    case $lib in */libc.so.* | */ld-linux*) ;; *) cp -L "$lib" "$d/lib64/" ;; esac
  done
  cp "$(command -v busybox)" "$d/bin/busybox"
  for t in find mountpoint rmdir cmp dirname; do ln -s busybox "$d/bin/$t"; done
  printf 'NAME="Flatcar Container Linux (flint test)"\nID=flatcar\nVERSION=0.0.0-test\nFLATCAR_BOARD=amd64-usr\n' >"$d/lib/os-release"
  printf 'd /home 0755 root root -\nd /root 0700 root root -\nd /boot 0755 root root -\n' >"$d/lib/tmpfiles.d/baselayout.conf"
  printf 'd /var 0755 root root -\n' >"$d/lib/tmpfiles.d/base_image_var.conf"
  printf '# nothing in the test image\n' >"$d/lib/tmpfiles.d/baselayout-usr.conf"
  printf '# nothing in the test image\n' >"$d/lib/tmpfiles.d/baselayout-home.conf"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$d/share/baselayout/passwd"
  printf 'root:x:0:\nwheel:x:10:root\n' >"$d/share/baselayout/group"
  printf 'root:*:19000:0:99999:7:::\n' >"$d/share/baselayout/shadow"
  printf 'root:*::\nwheel:*::root\n' >"$d/share/baselayout/gshadow"
  chmod 600 "$d/share/baselayout/shadow" "$d/share/baselayout/gshadow"
  : >"$d/share/flatcar/etc-no-whiteouts"
  : >"$d/share/flatcar/enabled-sysext.conf"
  : >"$d/share/flatcar/etc/flatcar/enabled-sysext.conf"
}

# fc_disk NAME BINARY CONFIG: $WORK/NAME.img, Flatcar's partition numbers and labels:
# 1 EFI-SYSTEM (vfat, flatcar/first_boot), 2 BIOS-BOOT, 3 USR-A (ext4, BINARY as
# usr/bin/ignition), 4 USR-B, 6 OEM (btrfs: CONFIG as config.ign, grub.cfg), 7 OEM-CONFIG,
# 9 ROOT (ext4), then free space for the partition the config adds (10).
fc_disk() {
  local img=$WORK/$1.img w=$WORK/fc-$1 n
  rm -rf "$w" "$img"
  mkdir -p "$w/oem" "$w/usr"
  cp "$3" "$w/oem/config.ign"
  printf '# Flatcar OEM grub.cfg\nset oem_id="qemu"\nset linux_append="refmods.drop"\n' >"$w/oem/grub.cfg"
  fc_usr "$w/usr" "$2"
  busybox_root "$w/root" noaccounts
  mkdir -p "$w/root/usr" "$w/root/srv"
  truncate -s 360M "$img"
  sgdisk -n 1:2048:+32M -t 1:EF00 -c 1:EFI-SYSTEM -n 2:0:+1M -t 2:EF02 -c 2:BIOS-BOOT \
    -n 3:0:+80M -c 3:USR-A -n 4:0:+1M -c 4:USR-B -n 6:0:+128M -c 6:OEM \
    -n 7:0:+1M -c 7:OEM-CONFIG -n 9:0:+64M -c 9:ROOT "$img" >/dev/null || return 1
  mkfs.vfat -n EFI-SYSTEM -C "$w/p1" 32768 >/dev/null || return 1
  : >"$w/empty"
  MTOOLS_SKIP_CHECK=1 mmd -i "$w/p1" ::/flatcar || return 1
  MTOOLS_SKIP_CHECK=1 mcopy -i "$w/p1" "$w/empty" ::/flatcar/first_boot || return 1
  mkfs.ext4 -q -F -L USR-A -d "$w/usr" "$w/p3" 80M >/dev/null 2>&1 || return 1
  truncate -s 128M "$w/p6"
  mkfs.btrfs -q -f -L OEM --rootdir "$w/oem" "$w/p6" >/dev/null 2>&1 || return 1
  mkfs.ext4 -q -F -L ROOT -d "$w/root" "$w/p9" 64M >/dev/null 2>&1 || return 1
  for n in 1 3 6 9; do
    dd if="$w/p$n" of="$img" bs=1M seek=$(($(part_offset "$img" "$n") / 1048576)) \
      conv=notrunc,sparse status=none || return 1
  done
  rm -rf "$w"
}

fc_flag() { vfat_cat "$1" "$(part_offset "$1" 1)" /flatcar/first_boot >/dev/null 2>&1; }
# fc_grubcfg IMG: the OEM partition's grub.cfg.
fc_grubcfg() {
  local mnt=$WORK/mnt-${1##*/}-oem
  ro_mount "$1" "$(part_offset "$1" 6)" "$mnt" || return 1
  cat "$mnt/grub.cfg"
  ro_umount "$mnt"
}
# fc_boot NAME DISK: the host as GRUB: flatcar.first_boot=detected while the flag is on
# the ESP, the OEM grub.cfg's linux_append. Stops at Flatcar's emergency prompt.
fc_boot() {
  local first="" append
  fc_flag "$2" && first=" flatcar.first_boot=detected"
  fc_grubcfg "$2" >"$WORK/$1.grub.cfg" || return 1
  append=$(grub_linux_append "$WORK/$1.grub.cfg")
  FC_CMDLINE="$FC_BASE_ARGS$first $append"
  STOP_AT="Press Enter for emergency shell" qboot "$1" "$WORK/fc-initrd.cpio" "$2" "$FC_CMDLINE"
}

fc_configs() {
  sed -e 's|"/dev/vda", "partitions": \[{"number": 3|"/dev/vda", "partitions": [{"number": 10|' \
    "$WORK/up-good.ign" >"$WORK/fc-good.ign"
  cp "$WORK/up-bad.ign" "$WORK/fc-bad.ign"
}

fc_kargs_boot() { # NAME WHO DISK
  local name=$1 disk=$3 why="" cfg
  fc_boot "$name" "$disk" || { fail "flatcar-$2-kargs-reboot" "no grub.cfg"; return; }
  [[ " $FC_CMDLINE " == *" flatcar.first_boot=detected "* ]] || why+=" GRUB saw no flag before boot 1;"
  [ "$VM_END" = exit ] || why+=" the VM did not reboot ($VM_END);"
  has_line "$name" "Finished ignition-setup.service" || why+=" ignition-setup did not finish;"
  has_line "$name" "Finished ignition-fetch-offline.service" || why+=" fetch-offline did not finish;"
  ran "$name" ignition-kargs.service || why+=" the kargs stage did not run;"
  ran "$name" ignition-disks.service && why+=" went on past kargs;"
  cfg=$(fc_grubcfg "$disk")
  # shellcheck disable=SC2016 # GRUB's variable, literally
  grep -qx 'set linux_append="$linux_append refmods.karg=1"' <<<"$cfg" || why+=" grub.cfg: $(tr '\n' '|' <<<"$cfg");"
  fc_flag "$disk" || why+=" the flag is gone;"
  verdict "flatcar-$2-kargs-reboot (${VM_SECS}s)" "$why"
}

fc_provision_boot() { # NAME WHO DISK
  local name=$1 disk=$3 why="" u prev=""
  fc_boot "$name" "$disk" || { fail "flatcar-$2-provisions" "no grub.cfg"; return; }
  has_line "$name" "ROOT-CMDLINE .* refmods\.karg=1" || why+=" refmods.karg=1 not on /proc/cmdline;"
  has_line "$name" "ROOT-CMDLINE .* refmods\.drop( |$)" && why+=" refmods.drop still on /proc/cmdline;"
  for u in fetch-offline kargs disks mount files; do
    has_line "$name" "Finished ignition-$u.service" || why+=" ignition-$u.service did not finish;"
    [ -z "$prev" ] || before "$name" "Finished ignition-$prev.service" "Starting ignition-$u.service" \
      || why+=" ignition-$u before ignition-$prev finished;"
    prev=$u
  done
  has_line "$name" "Finished initrd-setup-root.service" || why+=" initrd-setup-root did not finish;"
  has_line "$name" "Finished initrd-setup-root-after-ignition.service" || why+=" initrd-setup-root-after-ignition did not finish;"
  has_line "$name" "Finished ignition-quench.service" || why+=" ignition-quench did not finish;"
  before "$name" "Reached target initrd.target" "ROOT-REACHED" || why+=" the root was not reached;"
  has_line "$name" "ROOT-FILE provisioned by the reference modules" || why+=" the root lacks /etc/flint-e2e;"
  fc_flag "$disk" && why+=" the flag is still on the ESP;"
  verdict "flatcar-$2-provisions (${VM_SECS}s)" "$why"
  disk_manifest "$disk" "$WORK/fc-$2.manifest" 9 10 6
}

fc_flint_chain() {
  local D=$WORK/fc-flint.img why=""
  fc_disk fc-flint "$FLINT_BIN" "$WORK/fc-good.ign" || { fail flatcar-flint-disk "could not build the disk"; return; }
  fc_kargs_boot fc-flint-1 flint "$D"
  fc_provision_boot fc-flint-2 flint "$D"
  check_provisioned flatcar-flint-root-as-configured "$WORK/fc-flint.manifest"
  fc_boot fc-flint-3 "$D"
  [[ " $FC_CMDLINE " == *" flatcar.first_boot"* ]] && why+=" GRUB still saw a flag;"
  has_line fc-flint-3 "Starting ignition-(fetch|kargs|disks|mount|files)" && why+=" an ignition stage ran;"
  has_line fc-flint-3 "Reached target ignition-subsequent.target" || why+=" ignition-subsequent.target not reached;"
  has_line fc-flint-3 "ROOT-CMDLINE .* refmods\.karg=1" || why+=" refmods.karg=1 not on /proc/cmdline;"
  has_line fc-flint-3 "ROOT-REACHED" || why+=" the root was not reached;"
  verdict "flatcar-flint-next-boot-runs-no-stage (${VM_SECS}s)" "$why"
}

fc_bad_boot() {
  local D=$WORK/fc-bad.img why=""
  fc_disk fc-bad "$FLINT_BIN" "$WORK/fc-bad.ign" || { fail flatcar-bad-disk "could not build the disk"; return; }
  # No kernel arguments in this config: the first boot provisions (and fails).
  fc_boot fc-bad "$D"
  has_line fc-bad "Failed to start ignition-files.service" || why+=" ignition-files.service did not fail;"
  has_line fc-bad "^Ignition has failed\. Please ensure your config is valid\." || why+=" no banner;"
  has_line fc-bad "Press Enter for emergency shell" || why+=" no emergency prompt;"
  has_line fc-bad "ROOT-REACHED" && why+=" switched to the root;"
  ran fc-bad ignition-quench.service && why+=" ignition-quench ran;"
  fc_flag "$D" || why+=" the flag was cleared;"
  verdict "flatcar-flint-bad-config-banner-flag-kept (${VM_SECS}s)" "$why"
}

fc_ref_chain() {
  local D=$WORK/fc-ref.img
  fc_disk fc-ref "$ORACLE" "$WORK/fc-good.ign" || { fail flatcar-reference-disk "could not build the disk"; return; }
  fc_kargs_boot fc-ref-1 reference "$D"
  fc_provision_boot fc-ref-2 reference "$D"
}

flatcar_prepare() {
  [ -e "$WORK/up-good.ign" ] || up_configs
  fc_configs
  fc_build
}
flatcar_finish() {
  compare_manifests flatcar-root-flint-equals-reference "$WORK/fc-flint.manifest" "$WORK/fc-reference.manifest"
}
