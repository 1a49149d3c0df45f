# shellcheck shell=bash
# Flatcar bootengine's modules with flint as the USR partition's usr/bin/ignition (which
# the initramfs's /usr/bin/ignition wrapper execs). Sourced by test-reference-modules.

FC_MODULES="30ignition 31decrypt-root 99setup-root 30disk-uuid 10diskless-generator 10usr-generator 99emergency-timeout 99journald-conf 99switch-root"
# Clevis's dracut modules, as Flatcar's image has them (its clevis package installs them and
# its dracut run takes every module it finds): Debian's, from clevis-dracut and
# clevis-systemd of the host's clevis version. Those packages are not installed on the host
# (they bring hooks that change its dracut): fc_clevis_fetch downloads and unpacks them.
FC_CLEVIS_MODULES="60clevis 60clevis-pin-tpm2 60clevis-pin-sss"
FC_CLEVIS=0 # 1 once the image has them
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

# fc_clevis_fetch: clevis-dracut and clevis-systemd unpacked in $WORK/clevis-debs/x, and
# the files of clevis-systemd that 60clevis's install() copies from the host (the askpass
# units and script) put on the host for the run where it lacks them ($HOST_FILES).
fc_clevis_fetch() {
  local d=$WORK/clevis-debs v f
  v=$(dpkg-query -W -f='${Version}' clevis) || return 1
  mkdir -p "$d/x"
  (cd "$d" && apt-get -q -o APT::Sandbox::User=root download "clevis-dracut=$v" "clevis-systemd=$v") \
    >"$d/apt.log" 2>&1 || return 1
  for f in "$d"/*.deb; do dpkg -x "$f" "$d/x" || return 1; done
  for f in $(cd "$d/x" && find lib usr/libexec -type f); do
    host_file_add "$d/x/$f" "/$f" "$HOST_FILES" || return 1
  done
}

fc_build() {
  local f m mods=""
  # shellcheck disable=SC2086 # a list of names
  install_modules "$REFS/flatcar-bootengine/dracut" $FC_MODULES
  for f in $FC_EXECUTABLES; do chmod a+x "$DRACUT_MODULES_D/$f"; done
  if fc_clevis_fetch; then
    for m in $FC_CLEVIS_MODULES; do
      # A host with clevis-dracut installed has them already: those are used.
      [ -d "$DRACUT_MODULES_D/$m" ] && [ ! -e "$DRACUT_MODULES_D/$m/$MARKER" ] && continue
      install_modules "$WORK/clevis-debs/x/usr/lib/dracut/modules.d" "$m"
    done
    FC_CLEVIS=1
    mods=" crypt clevis clevis-pin-tpm2 clevis-pin-sss decrypt-root"
  else
    fail flatcar-clevis-modules "clevis-dracut/clevis-systemd not downloaded: $(tail -n 2 "$WORK/clevis-debs/apt.log" 2>/dev/null | tr '\n' ' ')"
  fi
  install_modules "$HERE/refmods" 99flatcar-standins
  local t0=$SECONDS
  if build_image "$WORK/fc-initrd.cpio" "$WORK/fc-dracut.log" \
    "bash systemd systemd-initrd dracut-systemd rootfs-block ignition setup-root disk-uuid diskless-generator usr-generator emergency-timeout journald-conf switch-root flatcar-standins$mods" \
    "virtio_pci virtio_blk ext4 btrfs vfat nls_cp437 nls_iso8859_1 nls_ascii overlay"; then
    pass "flatcar-dracut-build ($((SECONDS - t0)) s)"
  else
    fail flatcar-dracut-build "$(tail -n 3 "$WORK/fc-dracut.log" | tr '\n' ' ')"
    remove_modules
    host_files_remove "$HOST_FILES"
    return 1
  fi
  remove_modules
  host_files_remove "$HOST_FILES"
  local why=""
  lsinitrd -f usr/bin/ignition "$WORK/fc-initrd.cpio" | grep -q 'exec "/sysusr/usr/bin/ignition"' \
    || why+=" /usr/bin/ignition is not the /sysusr wrapper;"
  lsinitrd "$WORK/fc-initrd.cpio" >"$WORK/fc-lsinitrd.txt" 2>&1 || true
  for f in usr/sbin/ignition-kargs-helper usr/sbin/ignition-setup usr/sbin/flatcar-tmpfiles usr/sbin/initrd-setup-root; do
    grep -qE "^-r.x.*[0-9] $f$" "$WORK/fc-lsinitrd.txt" || why+=" no executable $f;"
  done
  verdict flatcar-image-contents "$why"
  [ "$FC_CLEVIS" = 1 ] || return 0
  # The root's unlock at a later boot: bootengine's decrypt-root, systemd-cryptsetup, and
  # Clevis's askpass agent (the real script) behind cryptsetup.target; Clevis itself through
  # 30ignition's /sysusr wrappers.
  why=""
  for f in usr/sbin/decrypt-root usr/libexec/clevis-luks-askpass usr/lib/systemd/systemd-cryptsetup \
    usr/lib/systemd/system-generators/systemd-cryptsetup-generator usr/lib/systemd/systemd-reply-password; do
    grep -qE "^-r.x.*[0-9] $f$" "$WORK/fc-lsinitrd.txt" || why+=" no executable $f;"
  done
  grep -qE "/ignition-subsequent.target.wants/decrypt-root.service -> " "$WORK/fc-lsinitrd.txt" \
    || why+=" decrypt-root.service not enabled;"
  grep -qE "/cryptsetup.target.wants/clevis-luks-askpass.path -> " "$WORK/fc-lsinitrd.txt" \
    || why+=" clevis-luks-askpass.path not wanted by cryptsetup.target;"
  lsinitrd -f usr/bin/clevis "$WORK/fc-initrd.cpio" | grep 'exec "/sysusr/usr/bin/clevis"' >/dev/null \
    || why+=" /usr/bin/clevis is not the /sysusr wrapper;"
  # The scripts clevis's scripts source by name from PATH are the files themselves (30ignition
  # installs them before its wrappers): a wrapper sourced would replace the sourcing script.
  lsinitrd -f usr/bin/clevis-luks-common-functions "$WORK/fc-initrd.cpio" | grep '^clevis_luks_unlock_device()' >/dev/null \
    || why+=" /usr/bin/clevis-luks-common-functions is not the functions file;"
  fc_clevis_usr || why+=" the USR partition's Clevis tree could not be made;"
  verdict "flatcar-image-clevis (USR lacks: $(tr '\n' ' ' <"$WORK/fc-usr-clevis.missing" 2>/dev/null))" "$why"
}

# fc_libs BINARY DIR: the libraries of BINARY beyond glibc's libc and loader (the
# initramfs has those) copied into DIR, where the /sysusr wrappers' LD_LIBRARY_PATH=
# /sysusr/usr/lib64 finds them.
fc_libs() {
  local lib
  for lib in $(ldd "$1" | grep -o '/[^ ]*\.so[^ ]*'); do
    case $lib in */libc.so.* | */ld-linux*) ;; *) [ -e "$2/${lib##*/}" ] || cp -L "$lib" "$2/" ;; esac
  done
}

# fc_clevis_usr: $WORK/fc-usr-clevis, what the image's /sysusr wrappers (30ignition's, for
# Clevis and the tools its scripts run) exec on a Flatcar USR partition: the host's program
# at each path a wrapper names (by name when the path is Flatcar's own), multi-call links
# kept, and the libraries in lib64. A program the host lacks is left out and listed in
# fc-usr-clevis.missing (Flatcar's coreos-metadata, setfiles, clevis-luks-generic-unlocker).
fc_clevis_usr() {
  local x=$WORK/fc-initrd.x u=$WORK/fc-usr-clevis w t src dst l
  rm -rf "$x" "$u"
  mkdir -p "$x" "$u/lib64"
  (cd "$x" && cpio -id --quiet 'usr/bin/*' <"$WORK/fc-initrd.cpio") || return 1
  : >"$u.missing"
  for w in "$x"/usr/bin/*; do
    { [ -f "$w" ] && [ ! -L "$w" ]; } || continue
    t=$(sed -n 's|^LD_LIBRARY_PATH=/sysusr/usr/lib64 exec "/sysusr\(/usr/[^"]*\)".*|\1|p' "$w")
    { [ -n "$t" ] && [ "$t" != /usr/bin/ignition ]; } || continue
    case $t in
      /usr/lib/systemd-reply-password) src=/lib/systemd/systemd-reply-password ;;
      /usr/local/libexec/clevis-luks-askpass) src=$WORK/clevis-debs/x/usr/libexec/clevis-luks-askpass ;;
      *) if [ -e "$t" ]; then src=$t; else src=$(command -v "${t##*/}" || true); fi ;;
    esac
    if [ -z "$src" ] || [ ! -e "$src" ]; then echo "$t" >>"$u.missing"; continue; fi
    dst=$u/${t#/usr/}
    mkdir -p "$(dirname "$dst")"
    l=$(readlink "$src" || true)
    if [ -n "$l" ] && [[ $l != */* ]]; then # tpm2_load -> tpm2: argv[0] picks the tool
      ln -sfn "$l" "$dst"
      src=$(dirname "$src")/$l dst=$(dirname "$dst")/$l
    fi
    [ -e "$dst" ] || cp -L "$src" "$dst"
    if [ "$(head -c4 "$src" | od -An -c | tr -d ' ')" = '177ELF' ]; then fc_libs "$src" "$u/lib64"; fi
  done
  # The TSS loads its transport with dlopen() (ldd cannot see it): device:/dev/tpmrm0.
  cp -L /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0 "$u/lib64/"
  fc_libs /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0 "$u/lib64"
  rm -rf "$x"
  [ -x "$u/bin/clevis" ]
}

# fc_usr DIR BINARY [clevis]: a USR partition's tree (what is mounted at /sysusr/usr, then
# /sysroot/usr) with BINARY as bin/ignition; with "clevis", what the Clevis wrappers exec.
fc_usr() {
  local d=$1 t
  mkdir -p "$d/bin" "$d/lib64" "$d/lib/tmpfiles.d" "$d/share/baselayout" "$d/share/flatcar/etc/flatcar"
  if [ "${3:-}" = clevis ] && [ -d "$WORK/fc-usr-clevis" ]; then cp -a "$WORK/fc-usr-clevis/." "$d/"; fi
  cp "$2" "$d/bin/ignition"
  fc_libs "$2" "$d/lib64"
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

# fc_disk NAME BINARY CONFIG [clevis]: $WORK/NAME.img, Flatcar's partition numbers and
# labels: 1 EFI-SYSTEM (vfat, flatcar/first_boot), 2 BIOS-BOOT, 3 USR-A (ext4, BINARY as
# usr/bin/ignition; with "clevis" also Clevis and its tools, see fc_clevis_usr), 4 USR-B,
# 6 OEM (btrfs: CONFIG as config.ign, grub.cfg), 7 OEM-CONFIG, 9 ROOT (ext4), then free
# space for the partition the config adds (10).
fc_disk() {
  local img=$WORK/$1.img w=$WORK/fc-$1 n usr=80
  rm -rf "$w" "$img"
  mkdir -p "$w/oem" "$w/usr"
  cp "$3" "$w/oem/config.ign"
  printf '# Flatcar OEM grub.cfg\nset oem_id="qemu"\nset linux_append="refmods.drop"\n' >"$w/oem/grub.cfg"
  fc_usr "$w/usr" "$2" "${4:-}"
  [ "${4:-}" != clevis ] || usr=128
  busybox_root "$w/root" noaccounts
  mkdir -p "$w/root/usr" "$w/root/srv"
  truncate -s $((280 + usr))M "$img"
  sgdisk -n 1:2048:+32M -t 1:EF00 -c 1:EFI-SYSTEM -n 2:0:+1M -t 2:EF02 -c 2:BIOS-BOOT \
    -n 3:0:+${usr}M -c 3:USR-A -n 4:0:+1M -c 4:USR-B -n 6:0:+128M -c 6:OEM \
    -n 7:0:+1M -c 7:OEM-CONFIG -n 9:0:+64M -c 9:ROOT "$img" >/dev/null || return 1
  mkfs.vfat -n EFI-SYSTEM -C "$w/p1" 32768 >/dev/null || return 1
  : >"$w/empty"
  MTOOLS_SKIP_CHECK=1 mmd -i "$w/p1" ::/flatcar || return 1
  MTOOLS_SKIP_CHECK=1 mcopy -i "$w/p1" "$w/empty" ::/flatcar/first_boot || return 1
  mkfs.ext4 -q -F -L USR-A -d "$w/usr" "$w/p3" ${usr}M >/dev/null 2>&1 || return 1
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
# the ESP, the OEM grub.cfg's linux_append. Stops at Flatcar's emergency prompt. The
# machine has a TPM (swtpm) whose state stays with the disk (DISK without .img, .tpm).
fc_boot() {
  local first="" append
  fc_flag "$2" && first=" flatcar.first_boot=detected"
  fc_grubcfg "$2" >"$WORK/$1.grub.cfg" || return 1
  append=$(grub_linux_append "$WORK/$1.grub.cfg")
  FC_CMDLINE="$FC_BASE_ARGS$first $append"
  STOP_AT="Press Enter for emergency shell" QBOOT_TPM=${2%.img}.tpm \
    qboot "$1" "$WORK/fc-initrd.cpio" "$2" "$FC_CMDLINE"
}

# fc_configs: the good config is upstream's with the new partition numbered 10 and, when
# the image has Clevis, the root on LUKS (flatcar-luks.sh); the bad one is upstream's.
fc_configs() {
  sed -e 's|"/dev/vda", "partitions": \[{"number": 3|"/dev/vda", "partitions": [{"number": 10|' \
    "$WORK/up-good.ign" >"$WORK/fc-good.ign"
  if [ "$FC_CLEVIS" = 1 ]; then
    fcl_config "$WORK/fc-good.ign" "$WORK/fc-good-luks.ign" && mv "$WORK/fc-good-luks.ign" "$WORK/fc-good.ign"
  fi
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
  if [ "$FC_CLEVIS" = 1 ]; then
    # The root is encrypted: its manifest is the one its init printed.
    fcl_provisioned "$name" "$2" "$disk"
    disk_manifest "$disk" "$WORK/fc-$2.parts" 10 6
    { echo "== partition 9"; fcl_root_manifest "$name"; cat "$WORK/fc-$2.parts"; } >"$WORK/fc-$2.manifest"
  else
    disk_manifest "$disk" "$WORK/fc-$2.manifest" 9 10 6
  fi
}

# fc_next_boot NAME WHO DISK: the boot after provisioning runs no stage (and opens the root
# on LUKS).
fc_next_boot() {
  local name=$1 disk=$3 why=""
  fc_boot "$name" "$disk" || { fail "flatcar-$2-next-boot-runs-no-stage" "no grub.cfg"; return; }
  [[ " $FC_CMDLINE " == *" flatcar.first_boot"* ]] && why+=" GRUB still saw a flag;"
  has_line "$name" "Starting ignition-(fetch|kargs|disks|mount|files)" && why+=" an ignition stage ran;"
  has_line "$name" "Reached target ignition-subsequent.target" || why+=" ignition-subsequent.target not reached;"
  has_line "$name" "ROOT-CMDLINE .* refmods\.karg=1" || why+=" refmods.karg=1 not on /proc/cmdline;"
  has_line "$name" "ROOT-REACHED" || why+=" the root was not reached;"
  has_line "$name" "ROOT-FILE provisioned by the reference modules" || why+=" the root lacks /etc/flint-e2e;"
  verdict "flatcar-$2-next-boot-runs-no-stage (${VM_SECS}s)" "$why"
  [ "$FC_CLEVIS" = 0 ] || fcl_unlocked "$name" "$2"
}

fc_flint_chain() {
  local D=$WORK/fc-flint.img
  fc_disk fc-flint "$FLINT_BIN" "$WORK/fc-good.ign" clevis || { fail flatcar-flint-disk "could not build the disk"; return; }
  fc_kargs_boot fc-flint-1 flint "$D"
  fc_provision_boot fc-flint-2 flint "$D"
  check_provisioned flatcar-flint-root-as-configured "$WORK/fc-flint.manifest"
  fc_next_boot fc-flint-3 flint "$D"
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
  fc_disk fc-ref "$ORACLE" "$WORK/fc-good.ign" clevis || { fail flatcar-reference-disk "could not build the disk"; return; }
  fc_kargs_boot fc-ref-1 reference "$D"
  fc_provision_boot fc-ref-2 reference "$D"
  [ "$FC_CLEVIS" = 0 ] || fc_next_boot fc-ref-3 reference "$D"
}

flatcar_prepare() {
  [ -e "$WORK/up-good.ign" ] || up_configs
  fc_build || return 1
  fc_configs
}
flatcar_finish() {
  compare_manifests flatcar-root-flint-equals-reference "$WORK/fc-flint.manifest" "$WORK/fc-reference.manifest"
  [ "$FC_CLEVIS" = 0 ] || fcl_compare
}
