# shellcheck shell=bash
# Results are handed back in globals (BOOT_*, INITRAMFS_CACHED), and QEMU options contain commas:
# shellcheck disable=SC2034,SC2054
# vm-lib.sh: functions for flint's QEMU VM tests, sourced by run-vm-tests.
#   build_initramfs OUT FLINT      busybox + storage/shadow tools + modules + flint (cached)
#   boot_vm NAME LOG DISK...       boot it under TCG, serial to LOG; returns the guest's rc
#   part_offset, blkid_at, ro_mount/ro_umount, md_data_offset, vfat_cat: host-side checks
#   check DESC CMD..., checks_ok   verification steps that name what failed
#   vm_spawn, vm_on_exit, vm_cleanup   background helpers and cleanup that also runs on failure
#   tang_start DIR [PORT], tang_stop   a real Tang server on the host for Clevis scenarios
# VM_CLEVIS=1 puts Debian's clevis tooling in the image; VM_TPM=DIR gives a boot a swtpm TPM.
# Recipe and pitfalls: /work/shared/recipes/vm-provision-smoke.sh.

VM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KVER=${KVER:-$(find /lib/modules -mindepth 1 -maxdepth 1 -printf "%f\n" | sort -V | tail -1)}
KERNEL=${KERNEL:-/boot/vmlinuz-$KVER}

# Real tools rather than busybox applets: flint drives these, and busybox's versions differ
# in flags and output (mkswap, blkid, losetup, ...).
VM_TOOLS="sgdisk sfdisk mdadm cryptsetup dmsetup mke2fs mkfs.xfs mkfs.btrfs mkfs.fat mkswap
          blkid wipefs partx losetup useradd usermod userdel groupadd groupdel"
# Loaded in this order (after dependency resolution). virtio_net for QEMU user networking;
# qemu_fw_cfg exposes the config and the scenario script under /sys/firmware.
# isofs and udf: config drives (ISO9660, Azure's UDF provisioning disc).
VM_MODULES="virtio_pci virtio_blk virtio_net qemu_fw_cfg loop md_mod raid1 dm_mod dm_crypt
            ext4 xfs btrfs vfat nls_cp437 nls_ascii nls_iso8859_1 nls_utf8 xts aesni_intel
            crc32c_generic crc32c_intel af_alg algif_skcipher algif_hash isofs udf"

# Clevis tooling for VM_CLEVIS=1 (see _vm_add_clevis): the real clevis scripts and what
# they run. The clevis scripts are bash; tpm2 is Debian's multi-call tpm2-tools binary.
VM_CLEVIS_PKGS="clevis clevis-luks clevis-tpm2 jose luksmeta tpm2-tools curl libpwquality-tools bash"

vm_log() { printf '[vm] %s\n' "$*" >&2; }

# Microseconds since the epoch, without forking (bash has no floating point).
_vm_usec() { local t=${EPOCHREALTIME/./}; echo "$((10#$t))"; }
# usec -> "12.34"
_vm_secs() { printf '%d.%02d' "$(($1 / 1000000))" "$(($1 % 1000000 / 10000))"; }

# ---------------------------------------------------------------------------------------
# Initramfs
# ---------------------------------------------------------------------------------------

# _vm_copy_with_libs BIN ROOT DEST: BIN and the shared libraries ldd names for it.
_vm_copy_with_libs() {
  local bin=$1 root=$2 dest=$3 lib
  cp -L "$bin" "$root$dest"
  for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
    [ -e "$root$lib" ] || cp -L --parents "$lib" "$root"
  done
}

# _vm_is_elf FILE: true for an ELF binary (ldd has nothing to say about scripts).
_vm_is_elf() { [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# _vm_add_clevis ROOT: Debian's clevis with the tools its scripts run, in /usr/bin of the
# image (the busybox applets in /bin come first in the guest's PATH for everything else:
# mktemp, sed -r, tr, cut, sort, tail, awk and cat as busybox has them do what clevis asks
# of them). cryptsetup is in VM_TOOLS already.
_vm_add_clevis() {
  local R=$1 f t
  for t in /usr/bin/clevis /usr/bin/clevis-* /usr/bin/jose /usr/bin/curl /usr/bin/pwmake \
    /usr/bin/tpm2 /usr/bin/luksmeta /bin/bash; do
    [ -e "$t" ] || { echo "missing host tool for VM_CLEVIS: $t (scripts/install-deps.sh)" >&2; exit 1; }
    mkdir -p "$R$(dirname "$t")"
    if _vm_is_elf "$t"; then _vm_copy_with_libs "$t" "$R" "$t"; else cp -L "$t" "$R$t"; fi
  done
  # tpm2_createprimary, tpm2_unseal, ...: argv[0] picks the tool of the multi-call binary.
  for t in /usr/bin/tpm2_*; do
    [ "$(readlink "$t")" = tpm2 ] && ln -sf tpm2 "$R$t"
  done
  # The TSS loads its transport (TCTI) with dlopen(), which ldd cannot see. The clevis tpm2
  # pin asks for "device:/dev/tpmrm0", i.e. libtss2-tcti-device.
  f=/usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0
  mkdir -p "$R$(dirname "$f")"
  _vm_copy_with_libs "$f" "$R" "$f"
  # pwmake (clevis' generator of the new slot's passphrase) would check its result against
  # cracklib's dictionaries, which are not in the image; the password is random anyway.
  mkdir -p "$R/etc/security/pwquality.conf.d"
  echo "dictcheck = 0" >"$R/etc/security/pwquality.conf.d/flint-vm.conf"
}

# build_initramfs OUT.cpio.gz FLINT_BINARY
# Rebuilt only when its inputs change: the flint binary, the guest files, this library and
# the kernel; otherwise OUT is pointed at the cached archive.
build_initramfs() {
  local out=$1 flint=$2 key cache stage t0
  [ -x "$flint" ] || { vm_log "no flint binary at $flint"; return 1; }
  key=$({
    sha256sum "$flint" "${BASH_SOURCE[0]}"
    find "$VM_LIB_DIR/guest" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    echo "$KVER $VM_TOOLS $VM_MODULES clevis=${VM_CLEVIS:-0}"
    # The clevis set is copied from the host's packages: a package update changes the image.
    # shellcheck disable=SC2086 # a list of package names
    if [ "${VM_CLEVIS:-0}" = 1 ]; then dpkg-query -W $VM_CLEVIS_PKGS 2>&1; fi
  } | sha256sum | cut -c1-16)
  cache="$(dirname "$out")/initramfs-$key.cpio.gz"
  if [ -s "$cache" ]; then
    ln -sfn "$(basename "$cache")" "$out"
    INITRAMFS_CACHED=1
    return 0
  fi
  INITRAMFS_CACHED=0
  t0=$(_vm_usec)
  stage=$(mktemp -d "$(dirname "$out")/initramfs-stage.XXXXXX")
  (
    set -euo pipefail
    R=$stage
    mkdir -p "$R"/{bin,sbin,etc,proc,sys,dev,run,tmp,mnt,sysroot,root,lib64,usr/bin,usr/sbin}
    mkdir -p "$R/usr/share/flint-vm"

    # busybox-static: the shell, mount, insmod, ip, poweroff, ...
    cp -L "$(command -v busybox)" "$R/bin/busybox"
    for app in $("$R/bin/busybox" --list); do
      [ -e "$R/bin/$app" ] || ln -s busybox "$R/bin/$app"
    done

    # /sbin comes first in the guest's PATH, so these win over busybox applets.
    local t path
    for t in $VM_TOOLS; do
      path=$(command -v "$t") || { echo "missing host tool: $t" >&2; exit 1; }
      _vm_copy_with_libs "$path" "$R" "/sbin/$t"
    done
    _vm_copy_with_libs "$flint" "$R" /bin/flint
    # In an `if`, not `&&`: bash would ignore errexit inside the function otherwise.
    if [ "${VM_CLEVIS:-0}" = 1 ]; then _vm_add_clevis "$R"; fi
    ln -s mke2fs "$R/sbin/mkfs.ext4"   # mke2fs picks the fs type from argv[0]
    ln -s mkfs.fat "$R/sbin/mkfs.vfat"
    # glibc dlopen()s libgcc_s for pthread_cancel (libcryptsetup's threads); ldd can't see it.
    [ -e "$R/lib/x86_64-linux-gnu/libgcc_s.so.1" ] || cp -L --parents /lib/x86_64-linux-gnu/libgcc_s.so.1 "$R"
    cp /etc/mke2fs.conf /etc/login.defs "$R/etc/"
    mkdir -p "$R/etc/default"
    [ -e /etc/default/useradd ] && cp /etc/default/useradd "$R/etc/default/"
    # The tools (mdadm, cryptsetup, useradd without --root) look up root by name.
    cp "$VM_LIB_DIR/guest/baselayout/passwd" "$VM_LIB_DIR/guest/baselayout/group" "$R/etc/"
    cp -r "$VM_LIB_DIR/guest/baselayout" "$R/usr/share/flint-vm/"
    cp "$VM_LIB_DIR/guest/init" "$R/init"
    cp "$VM_LIB_DIR/guest/step" "$VM_LIB_DIR/guest/seed-root" "$VM_LIB_DIR/guest/unlock-crypttab" "$R/bin/"
    chmod 755 "$R/init" "$R/bin/step" "$R/bin/seed-root" "$R/bin/unlock-crypttab"

    # Modules with hard and soft dependencies, in load order, for the *guest* kernel.
    local m ko
    : >"$R/modules.order"
    for m in $VM_MODULES; do
      modprobe -S "$KVER" --show-depends "$m" || { echo "no module $m for $KVER" >&2; exit 1; }
    done | awk '$1=="insmod"{print $2}' | awk '!seen[$0]++' | while read -r ko; do
      cp --parents "$ko" "$R"
      echo "$ko" >>"$R/modules.order"
    done

    # mktemp made the stage 0700; the guest's / must be 0755 as on a real image, or nothing
    # running as another user (SSH keys are written as their user) can reach /sysroot.
    chmod 755 "$R"
    chmod 1777 "$R/tmp"
    (cd "$R" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$cache.tmp"
    mv "$cache.tmp" "$cache"
  ) || { rm -rf "$stage" "$cache.tmp"; return 1; }
  rm -rf "$stage"
  # Older archives are for binaries that no longer exist.
  find "$(dirname "$out")" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "$(basename "$cache")" -delete
  ln -sfn "$(basename "$cache")" "$out"
  vm_log "initramfs built in $(_vm_secs $(($(_vm_usec) - t0)))s: $(($(stat -c %s "$cache") / 1024)) KiB"
}

# ---------------------------------------------------------------------------------------
# Booting
# ---------------------------------------------------------------------------------------

# boot_vm NAME LOG DISK...
# Inputs (variables): VM_INITRD (required), VM_SCRIPT (the guest script, required),
#   VM_CONFIG (Ignition config for fw_cfg, optional), VM_NET=1 (QEMU user net),
#   VM_APPEND (more kernel arguments, e.g. flatcar.oem.id=ec2),
#   VM_TIMEOUT (s, default 300), VM_MEM (MiB, default 1024),
#   VM_TPM=DIR (a TPM 2.0: swtpm keeps its state in DIR, so a later boot with the same
#   DIR sees the same TPM; the guest finds it as /dev/tpm0 and /dev/tpmrm0).
# Outputs: BOOT_SECS (qemu start -> RESULT line, host clock), BOOT_UPTIME (guest uptime at
#   RESULT), BOOT_STATUS (ok | timeout | noresult | error: QEMU not started). Returns
#   the guest's rc, or 124 when the guest printed no RESULT.
boot_vm() {
  local name=$1 log=$2 disk t0 line rc
  shift 2
  local args=(-accel tcg -cpu max -smp 2 -m "${VM_MEM:-1024}"
    -name "flint-$name" -nographic -no-reboot -monitor none
    -kernel "$KERNEL" -initrd "${VM_INITRD:?}")
  local append="console=ttyS0 panic=-1 quiet loglevel=4 flatcar.first_boot=detected"
  append+=" flint.disks=$# flint.net=${VM_NET:-0}${VM_APPEND:+ $VM_APPEND}"
  for disk in "$@"; do
    args+=(-drive "file=$disk,if=virtio,format=raw")
  done
  # fw_cfg file names may not contain commas (they separate QEMU's options).
  [ -n "${VM_CONFIG:-}" ] && args+=(-fw_cfg "name=opt/org.flatcar-linux/config,file=$VM_CONFIG")
  args+=(-fw_cfg "name=opt/flint/script,file=${VM_SCRIPT:?}")
  if [ "${VM_NET:-0}" = 1 ]; then
    # romfile= skips the iPXE option ROM: we boot with -kernel, never from the network.
    args+=(-netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile=)
  else
    args+=(-nic none)
  fi
  args+=(-append "$append")
  BOOT_SECS=0 BOOT_UPTIME="" BOOT_STATUS=error
  local tpm_pid=""
  if [ -n "${VM_TPM:-}" ]; then
    _vm_swtpm "$VM_TPM" || return 1
    tpm_pid=$VM_SPAWNED
    args+=(-chardev "socket,id=chrtpm,path=$VM_TPM/swtpm.sock"
      -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0)
  fi

  t0=$(_vm_usec)
  BOOT_SECS="" BOOT_UPTIME="" BOOT_STATUS=noresult
  # Each serial line gets the host time since qemu started, so boot time is measured
  # from outside; the guest's own uptime is in its markers. sed drops SeaBIOS's terminal
  # escapes, which would otherwise glue the first guest line to "Booting from ROM".
  # qemu's status goes through a file so that errexit/pipefail in the caller can't abort
  # us before the log is parsed.
  {
    rc=0
    timeout "${VM_TIMEOUT:-300}" qemu-system-x86_64 "${args[@]}" </dev/null 2>&1 || rc=$?
    echo "$rc" >"$log.qemu-rc"
  } | sed -u 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | while IFS= read -r line; do
    printf '%s %s\n' "$(_vm_secs $(($(_vm_usec) - t0)))" "${line%$'\r'}"
  done >"$log"
  # swtpm ends by itself when QEMU hangs up (--terminate); this is for when it did not.
  [ -z "$tpm_pid" ] || _vm_kill "$tpm_pid"
  line=$(grep -a -m1 ' RESULT rc=' "$log" || true)
  if [ -n "$line" ]; then
    BOOT_STATUS=ok
    BOOT_SECS=${line%% *}
    rc=${line#* RESULT rc=}; rc=${rc%% *}
    BOOT_UPTIME=${line##*uptime=}
    return "$rc"
  fi
  [ "$(cat "$log.qemu-rc" 2>/dev/null)" = 124 ] && BOOT_STATUS=timeout
  return 124
}

# _vm_swtpm DIR: start a software TPM 2.0 for one boot (VM_SPAWNED is its pid), with its
# state in DIR and its control socket DIR/swtpm.sock for QEMU's tpm-emulator backend. QEMU
# sends the TPM's init over that socket and hands it the data channel; the guest kernel's
# TPM driver issues TPM2_Startup itself, so no --flags startup-clear here.
_vm_swtpm() {
  local dir=$1 i
  command -v swtpm >/dev/null || { vm_log "VM_TPM: no swtpm (scripts/install-deps.sh)"; return 1; }
  mkdir -p "$dir"
  rm -f "$dir/swtpm.sock"
  # swtpm 0.7 (bookworm) has --terminate as a flag of its own, not a --ctrl option.
  vm_spawn swtpm socket --tpm2 --tpmstate "dir=$dir" --terminate \
    --ctrl "type=unixio,path=$dir/swtpm.sock" --log "file=$dir/swtpm.log,level=1"
  for i in $(seq 50); do
    [ -S "$dir/swtpm.sock" ] && return 0
    kill -0 "$VM_SPAWNED" 2>/dev/null || break
    sleep 0.1
  done
  vm_log "swtpm did not start: $(tail -n 5 "$dir/swtpm.log" 2>/dev/null)"
  return 1
}

# ---------------------------------------------------------------------------------------
# Tang: Debian's tangd behind initramfs/host/tang.py (tangd is per connection, inetd
# style; tang.py accepts and forks as systemd's tangd.socket would).
# ---------------------------------------------------------------------------------------

# tang_start DIR [PORT]: serve the keys in DIR/db (made on first use: a signing and an
# exchange key) on 127.0.0.1:PORT (default: a free port). Sets TANG_PORT, TANG_URL (as the
# guest sees it, http://10.0.2.2:PORT), TANG_THP (S256 thumbprint of the signing key, the
# "thp" of a clevis tang pin) and TANG_PID; vm_cleanup stops it. The log, one line per
# request, is DIR/tang.log. Call it again with the same DIR and TANG_PORT after tang_stop
# to bring the same server back.
tang_start() {
  local dir=$1 port=${2:-0} i
  if [ ! -x /usr/libexec/tangd ] || ! command -v jose >/dev/null; then
    vm_log "tang_start: no tangd or jose (scripts/install-deps.sh)"
    return 1
  fi
  mkdir -p "$dir/db"
  if [ ! -e "$dir/db/sig.jwk" ]; then
    # It chowns the keys to _tang and says so on stderr when there is no such user.
    /usr/libexec/tangd-keygen "$dir/db" sig exc 2>/dev/null
  fi
  TANG_THP=$(jose jwk thp -i "$dir/db/sig.jwk" -a S256) || return 1
  # Only this start's "port N" line counts, not one of an earlier start in the same log.
  local seen
  seen=0
  [ ! -e "$dir/tang.log" ] || seen=$(wc -l <"$dir/tang.log")
  vm_spawn python3 -u "$VM_LIB_DIR/host/tang.py" "$dir/db" "$port" >>"$dir/tang.log" 2>&1
  TANG_PID=$VM_SPAWNED
  for i in $(seq 50); do
    TANG_PORT=$(tail -n +"$((seen + 1))" "$dir/tang.log" | sed -n 's/^port \([0-9][0-9]*\)$/\1/p')
    if [ -n "$TANG_PORT" ] && { [ "$port" = 0 ] || [ "$TANG_PORT" = "$port" ]; }; then
      TANG_URL=http://10.0.2.2:$TANG_PORT
      return 0
    fi
    kill -0 "$TANG_PID" 2>/dev/null || break
    sleep 0.1
  done
  vm_log "tang did not start: $(tail -n 5 "$dir/tang.log")"
  return 1
}

# tang_stop: stop the server of the last tang_start (e.g. between boots, for a threshold
# that must hold without it). Its keys stay in DIR/db.
tang_stop() { [ -z "${TANG_PID:-}" ] || _vm_kill "$TANG_PID"; TANG_PID=""; }

# ---------------------------------------------------------------------------------------
# Host-side verification. The host kernel parses no partition tables and has no md, dm
# or vfat: everything goes through byte offsets, read-only loop devices and mtools.
# ---------------------------------------------------------------------------------------

VM_LOOPS=()   # loop devices we attached
VM_MOUNTS=()  # mount points we mounted
VM_EXIT=()    # extra cleanup commands (servers, ...)

# vm_on_exit CMD...: run CMD (eval'd) in vm_cleanup.
vm_on_exit() { VM_EXIT+=("$*"); }

# vm_spawn CMD...: start CMD in the background, stopped again by vm_cleanup; its pid is
# VM_SPAWNED. The child drops our EXIT trap before exec'ing: bash runs EXIT traps on
# SIGTERM, so a child killed before its exec would otherwise run vm_cleanup as well.
vm_spawn() {
  (
    trap - EXIT
    exec "$@"
  ) &
  VM_SPAWNED=$!
  vm_kill_on_exit "$VM_SPAWNED"
}

# vm_kill_on_exit PID: stop a background process of ours in vm_cleanup. Polls instead of
# `wait`: bash 5.2 mishandles `wait` inside an EXIT trap that errexit fired in a function
# (it can replace the exit status).
vm_kill_on_exit() { VM_EXIT+=("_vm_kill $1"); }
_vm_kill() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    kill "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
}

# vm_cleanup: unmount, detach, run registered commands; safe to call more than once.
vm_cleanup() {
  local i
  for ((i = ${#VM_MOUNTS[@]} - 1; i >= 0; i--)); do
    umount "${VM_MOUNTS[i]}" 2>/dev/null || umount -l "${VM_MOUNTS[i]}" 2>/dev/null || true
  done
  for i in "${VM_LOOPS[@]}"; do losetup -d "$i" 2>/dev/null || true; done
  for ((i = ${#VM_EXIT[@]} - 1; i >= 0; i--)); do eval "${VM_EXIT[i]}" || true; done
  VM_MOUNTS=() VM_LOOPS=() VM_EXIT=()
}

# part_offset IMG N: byte offset of partition N (GPT or MBR), from sfdisk's dump.
part_offset() {
  local img=$1 n=$2
  sfdisk -d "$img" 2>/dev/null | awk -v p="$img$n" '
    /^sector-size:/ { ss = $2 }
    $1 == p { for (i = 1; i <= NF; i++) if ($i == "start=") { gsub(",", "", $(i+1)); s = $(i+1) } }
    END { if (s == "") exit 1; print s * (ss ? ss : 512) }'
}

# blkid_at IMG OFFSET [TAG]: blkid's probe of the filesystem at OFFSET (all tags as
# KEY=value lines, or just TAG's value).
blkid_at() {
  local img=$1 off=$2 tag=${3:-}
  if [ -n "$tag" ]; then
    blkid -p -O "$off" -o value -s "$tag" "$img"
  else
    blkid -p -O "$off" -o export "$img"
  fi
}

# _vm_loop IMG OFFSET [SIZELIMIT]: a read-only loop device (tracked for cleanup).
_vm_loop() {
  local dev lim=()
  [ -n "${3:-}" ] && lim=(--sizelimit "$3")
  dev=$(losetup -f --show -r -o "$2" "${lim[@]}" "$1") || return 1
  VM_LOOPS+=("$dev")
  VM_LAST_LOOP=$dev
}

# ro_mount IMG OFFSET DIR: mount the filesystem at OFFSET read-only on DIR. Not from a
# command substitution: the tracking arrays must survive for vm_cleanup.
ro_mount() {
  local img=$1 off=$2 dir=$3 type opts=ro
  _vm_loop "$img" "$off" || return 1
  type=$(blkid -p -o value -s TYPE "$VM_LAST_LOOP" || true)
  # The guest was powered off mid-flight as far as journals go: don't replay them, a
  # read-only loop could not take the writes anyway.
  case $type in
    ext4 | ext3) opts=ro,noload ;;
    xfs) opts=ro,norecovery ;;
  esac
  mkdir -p "$dir"
  mount -t "${type:-auto}" -o "$opts" "$VM_LAST_LOOP" "$dir" || return 1
  VM_MOUNTS+=("$dir")
}

# ro_umount DIR: undo one ro_mount now (vm_cleanup would do it at the end anyway).
ro_umount() {
  local dir=$1 dev i
  dev=$(findmnt -n -o SOURCE --target "$dir") || return 1
  umount "$dir"
  losetup -d "$dev" 2>/dev/null || true
  for i in "${!VM_MOUNTS[@]}"; do [ "${VM_MOUNTS[i]}" = "$dir" ] && unset 'VM_MOUNTS[i]'; done
  for i in "${!VM_LOOPS[@]}"; do [ "${VM_LOOPS[i]}" = "$dev" ] && unset 'VM_LOOPS[i]'; done
  VM_MOUNTS=("${VM_MOUNTS[@]}") VM_LOOPS=("${VM_LOOPS[@]}")
}

# md_data_offset IMG [OFFSET]: byte offset (from the start of IMG) of the data of the md
# member at OFFSET; with raid1 that is where the mirrored filesystem starts.
md_data_offset() {
  local img=$1 off=${2:-0} dev sectors
  dev=$(losetup -f --show -r -o "$off" "$img") || return 1
  sectors=$(mdadm --examine "$dev" 2>/dev/null | awk '/Data Offset/ { print $4; exit }')
  losetup -d "$dev"
  [ -n "$sectors" ] || return 1
  echo $((off + sectors * 512))
}

# vfat_cat IMG OFFSET PATH: a file's contents from the FAT filesystem at OFFSET (mtools).
vfat_cat() {
  # mtools refuses geometries that don't divide evenly, which mkfs.fat on a partition makes.
  MTOOLS_SKIP_CHECK=1 mtype -i "$1@@$2" "::$3"
}

# check DESC CMD...: run CMD in this shell (so ro_mount's tracking survives); on failure
# note DESC. The first failure becomes the scenario's FAIL reason.
VM_FAILS=()
check() {
  local desc=$1
  shift
  if "$@"; then return 0; fi
  VM_FAILS+=("$desc")
  vm_log "check failed: $desc"
  return 1
}

# checks_ok: end of a scenario_verify; nonzero when any check failed.
checks_ok() { [ ${#VM_FAILS[@]} -eq 0 ]; }
