# shellcheck shell=bash
# dracut-lib.sh: pieces shared by the tests that boot dracut images under QEMU
# (test-dracut-module, test-reference-modules).
#   busybox_root DIR [noaccounts]   a small root tree whose /sbin/init reports and powers off
#   grub_linux_append GRUBCFG       the kernel arguments GRUB makes of an OEM grub.cfg
#   console_clean RAW OUT           a serial log without terminal escapes and CRs
#   module_install SRC NAME MARKER  a dracut module copied into modules.d for a run
#   module_remove NAME MARKER       ... and removed again (only a copy carrying MARKER)
#   host_file_add SRC DST LIST      a file a module's install() copies from the host, put at
#                                   DST for a run when the host lacks it (listed in LIST)
#   host_files_remove LIST          ... and removed again

DRACUT_MODULES_D=${DRACUT_MODULES_D:-/usr/lib/dracut/modules.d}

# busybox_root DIR [noaccounts]: a root for the boots: a static busybox and an /sbin/init
# that prints ROOT-REACHED, /etc/flint-e2e and /proc/cmdline, then powers off. The account
# databases are there unless "noaccounts" (Flatcar's root gets them from its /usr).
busybox_root() {
  local d=$1
  mkdir -p "$d/bin" "$d/sbin" "$d/etc" "$d/proc" "$d/sys" "$d/dev" "$d/run" "$d/tmp" "$d/home"
  cp "$(command -v busybox)" "$d/bin/busybox"
  printf 'ID=flint-test\nNAME="flint test root"\n' >"$d/etc/os-release" # switch-root wants it
  if [ "${2:-}" != noaccounts ]; then
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$d/etc/passwd"
    printf 'root:x:0:\n' >"$d/etc/group"
    printf 'root:*:19000:0:99999:7:::\n' >"$d/etc/shadow"
    printf 'root:*::\n' >"$d/etc/gshadow"
    chmod 600 "$d/etc/shadow" "$d/etc/gshadow"
  fi
  cat >"$d/sbin/init" <<'EOF'
#!/bin/busybox sh
echo "ROOT-REACHED"
echo "ROOT-FILE $(/bin/busybox cat /etc/flint-e2e 2>/dev/null)"
echo "ROOT-CMDLINE $(/bin/busybox cat /proc/cmdline 2>/dev/null)"
/bin/busybox sync
/bin/busybox poweroff -f
EOF
  chmod 755 "$d/sbin/init"
}

# grub_linux_append GRUBCFG: what Flatcar's GRUB makes of the OEM grub.cfg's
# `set linux_append="..."` lines (each may use the value so far as $linux_append).
grub_linux_append() {
  local la="" line v
  while IFS= read -r line; do
    case $line in 'set linux_append="'*'"'*) ;; *) continue ;; esac
    v=${line#set linux_append=\"}
    v=${v%\"*}
    la=${v//\$linux_append/$la}
  done <"$1"
  echo "$la"
}

# console_clean RAW OUT: the serial console as text (escapes and CRs dropped), so that
# checks can grep whole lines.
console_clean() {
  sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\r$//' "$1" >"$2"
}

# module_install SRC NAME MARKER: SRC copied to modules.d/NAME with MARKER inside, so that
# module_remove takes away only copies a test made. A NAME there without MARKER is
# someone's real install: refused (non-zero).
module_install() {
  local dst=$DRACUT_MODULES_D/$2
  if [ -e "$dst" ] && [ ! -e "$dst/$3" ]; then
    echo "$dst exists and is not a test's copy: not touching it" >&2
    return 1
  fi
  rm -rf "$dst"
  cp -r "$1" "$dst"
  touch "$dst/$3"
}

module_remove() {
  local dst=$DRACUT_MODULES_D/$1
  if [ -e "$dst/$2" ]; then rm -rf "$dst"; fi
}

# host_file_add SRC DST LIST: SRC copied to DST when nothing is at DST (a module's install()
# copies DST from the host, e.g. a unit of a package the host has not installed), and DST
# listed in LIST for host_files_remove. A DST there already is left as it is.
host_file_add() {
  [ -e "$2" ] || [ -L "$2" ] && return 0
  mkdir -p "$(dirname "$2")"
  cp -p "$1" "$2" || return 1
  echo "$2" >>"$3"
}

host_files_remove() {
  local f
  [ -e "$1" ] || return 0
  while IFS= read -r f; do rm -f "$f"; done <"$1"
  rm -f "$1"
}
