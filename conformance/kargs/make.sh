#!/usr/bin/env bash
# make.sh: records what Flatcar's kernel-argument helper does to grub.cfg, case by case.
#
# The helper is bootengine's dracut/30ignition/ignition-kargs-helper (Flatcar's Ignition runs
# it for the kargs stage with --should-exist ARG... --should-not-exist ARG...). It is taken
# from the bootengine mirror at run time (never kept here) and run unchanged except for its
# two mount points, which are pointed into a scratch directory; `mount` and `systemctl` are
# stand-ins on PATH (mount does nothing, systemctl records the reboot).
#
# Input:  cases/NAME/grub.cfg (absent: no grub.cfg on the partition) and cases/NAME/args
#         (the helper's arguments, one per line).
# Output: cases/NAME/expected (grub.cfg afterwards) and cases/NAME/reboot (yes or no); the
#         helper run again on its own result (the next boot): expected2 and reboot2.
# Usage:  make.sh [BOOTENGINE_GIT_DIR]   (default /work/.mirror/flatcar+bootengine/repo)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
git_dir=${1:-/work/.mirror/flatcar+bootengine/repo}
ref=refs/heads/flatcar-master
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
git -C "$git_dir" show "$ref:dracut/30ignition/ignition-kargs-helper" >"$w/helper.orig"
sed -e "s#/mnt/oem_partition#$w/oem#; s#/mnt/boot_partition#$w/boot#" "$w/helper.orig" >"$w/helper"
mkdir -p "$w/bin"
printf '#!/bin/sh\nexit 0\n' >"$w/bin/mount"
printf '#!/bin/sh\necho "$*" >>"%s/systemctl.log"\n' "$w" >"$w/bin/systemctl"
chmod +x "$w/bin/mount" "$w/bin/systemctl" "$w/helper"
echo "helper: $(git -C "$git_dir" rev-parse "$ref"):dracut/30ignition/ignition-kargs-helper" >"$here/PROVENANCE"
# run CASE SUFFIX: the helper on $w/oem/grub.cfg; records expected$SUFFIX, reboot$SUFFIX.
run() {
  local c=$1 sfx=$2 args
  rm -rf "$w/boot" "$w/systemctl.log"
  mkdir -p "$w/boot/flatcar"
  mapfile -t args <"$c/args"
  if ! OEM_ID=qemu PATH="$w/bin:$PATH" bash "$w/helper" "${args[@]}" >"$w/log" 2>&1; then
    echo "$(basename "$c"): the helper failed:" >&2
    cat "$w/log" >&2
    exit 1
  fi
  cp "$w/oem/grub.cfg" "$c/expected$sfx"
  if grep -q 'reboot --force' "$w/systemctl.log" 2>/dev/null; then
    [ -e "$w/boot/flatcar/first_boot" ] || { echo "$(basename "$c"): reboot without the flag" >&2; exit 1; }
    echo yes >"$c/reboot$sfx"
  else
    echo no >"$c/reboot$sfx"
  fi
}
n=0
for c in "$here"/cases/*/; do
  c=${c%/}
  rm -rf "$w/oem"
  mkdir -p "$w/oem"
  [ -e "$c/grub.cfg" ] && cp "$c/grub.cfg" "$w/oem/grub.cfg"
  run "$c" ""
  run "$c" 2
  n=$((n + 1))
done
echo "$n cases recorded"
