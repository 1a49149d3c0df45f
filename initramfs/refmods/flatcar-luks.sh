# shellcheck shell=bash
# Flatcar's root on LUKS (sourced by test-reference-modules, used by flatcar.sh): the good
# config also makes the root an encrypted volume as Flatcar's documentation does (volume
# "rootencrypted" on the partition labelled ROOT, wiped, discards allowed, bound with Clevis
# to the TPM; an ext4 filesystem labelled ROOT on /dev/mapper/rootencrypted), and the next
# boot opens it with Flatcar's own initramfs: bootengine's 31decrypt-root writes the
# crypttab line "rootencrypted UUID=... none luks,tpm2-device=auto" and starts
# systemd-cryptsetup@rootencrypted, whose password request Clevis's askpass agent (Debian's
# 60clevis module, the real clevis-luks-askpass) answers from the Clevis token. The TPM is a
# real swtpm behind QEMU's tpm-tis, its state kept with the disk.
#
# The volume is new, so the root's /sbin/init comes from the config too: it prints what
# the checks read (ROOT-* lines, the root's manifest as manifest() makes it) and powers
# off. The LUKS header is read from the host (cryptsetup luksDump needs no key).

# fcl_init: the root's /sbin/init (busybox from the USR partition, /usr/bin/busybox).
# ROOT-ENTRY lines are manifest() lines of the root filesystem (path, type, mode, owner,
# contents' sha256 or link target; the same exclusions; /etc/crypttab with its UUIDs as
# "U"; lost+found left out), read through a bind mount of / (Flatcar's /etc is an overlay
# whose upper directory is the root's /etc).
fcl_init() {
  cat <<'EOF'
#!/usr/bin/busybox sh
# The encrypted root's init in flint's refmods test: what the checks read, then power off.
b=/usr/bin/busybox
echo "ROOT-REACHED"
echo "ROOT-FILE $($b cat /etc/flint-e2e 2>/dev/null)"
echo "ROOT-CMDLINE $($b cat /proc/cmdline)"
echo "ROOT-MOUNT $($b grep ' / / ' /proc/self/mountinfo)"
for d in /sys/block/dm-*; do
  [ -e "$d/dm/name" ] && echo "ROOT-DM $($b cat "$d/dev") $($b cat "$d/dm/name") $($b cat "$d/dm/uuid")"
done
[ -e /etc/crypttab ] && $b sed 's/^/ROOT-CRYPTTAB /' /etc/crypttab
# The root filesystem itself, as the host would see it: /etc is an overlay mounted on it.
$b mkdir -p /run/rootfs && $b mount -o bind / /run/rootfs && cd /run/rootfs || { echo "ROOT-ERROR no bind mount of /"; cd /; }
$b find . -xdev ! -path ./lost+found ! -path './lost+found/*' ! -path . | while read -r p; do
  p=${p#./}
  set -- $($b stat -c '%A %a %u:%g' "$p")
  case $1 in
    l*) echo "ROOT-ENTRY $p l $2 $3 -> $($b readlink "$p")" ;;
    -*)
      case $p in
        etc/.ignition-result.json) h="(run-specific)" ;;
        etc/shadow | etc/shadow-) h=$($b awk -F: -v OFS=: '{ $3 = "DAY" } 1' "$p" | $b sha256sum | $b cut -c1-16) ;;
        etc/crypttab) h=$($b sed 's/UUID=[^ ]*/UUID=U/' "$p" | $b sha256sum | $b cut -c1-16) ;;
        *) h=$($b sha256sum <"$p" | $b cut -c1-16) ;;
      esac
      echo "ROOT-ENTRY $p f $2 $3 $h" ;;
    d*) echo "ROOT-ENTRY $p d $2 $3" ;;
    *) echo "ROOT-ENTRY $p ${1%"${1#?}"} $2 $3" ;;
  esac
done
$b sync
$b poweroff -f
EOF
}

# fcl_config IN OUT: IN with the encrypted root and its /sbin/init. The volume's key
# derivation is cheap (PBKDF2, 1000 iterations, as Clevis's own keyslot has it): argon2id's
# defaults take minutes under TCG, for each of the opens the provisioning makes.
fcl_config() {
  jq -c --arg init "data:;base64,$(fcl_init | base64 -w0)" '
    .storage.luks = [{"name": "rootencrypted", "device": "/dev/disk/by-partlabel/ROOT",
                      "wipeVolume": true, "discard": true, "clevis": {"tpm2": true},
                      "options": ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]}]
    | .storage.filesystems += [{"device": "/dev/mapper/rootencrypted", "format": "ext4",
                                "label": "ROOT", "wipeFilesystem": true}]
    | .storage.files += [{"path": "/sbin/init", "mode": 493, "contents": {"source": $init}}]' "$1" >"$2"
}

# jtime NAME REGEX: the guest's clock (s) at the first journal line on the console (Flatcar's
# 99journald-conf forwards the journal there) matching REGEX.
jtime() {
  grep -a -m1 -E "^\[ *[0-9]+\.[0-9]+\] .*$2" "$WORK/$1.log" | sed -E 's/^\[ *([0-9]+\.[0-9]+)\].*/\1/'
}
# jspan NAME FROM TO: seconds from the journal line matching FROM to the one matching TO.
jspan() {
  local a b
  a=$(jtime "$1" "$2") b=$(jtime "$1" "$3")
  if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }'; else echo "?"; fi
}

# fcl_root_manifest NAME: the root's manifest its init printed in boot NAME.
fcl_root_manifest() { sed -n 's/^ROOT-ENTRY //p' "$WORK/$1.log" | LC_ALL=C sort; }

# fcl_luks_shape IMG OUT: the LUKS header of partition 9 as the comparison sees it, one
# "item: value" line each, without UUIDs, salts or digests (luksDump's JSON metadata, from
# a read-only loop device). OUT.txt keeps luksDump's report, OUT.uuid the volume's UUID.
fcl_luks_shape() {
  local off i
  off=$(part_offset "$1" 9) || return 1
  _vm_loop "$1" "$off" || return 1
  cryptsetup luksDump "$VM_LAST_LOOP" >"$2.txt" 2>&1 || true
  cryptsetup luksDump --dump-json-metadata "$VM_LAST_LOOP" >"$2.json" 2>"$2.err" || true
  cryptsetup luksUUID "$VM_LAST_LOOP" >"$2.uuid" 2>>"$2.err" || true
  losetup -d "$VM_LAST_LOOP"
  for i in "${!VM_LOOPS[@]}"; do [ "${VM_LOOPS[i]}" = "$VM_LAST_LOOP" ] && unset 'VM_LOOPS[i]'; done
  VM_LOOPS=("${VM_LOOPS[@]}")
  {
    echo "version: $(awk '/^Version:/ { print $2 }' "$2.txt")"
    jq -r '
      def b64u: gsub("-"; "+") | gsub("_"; "/") | . + ("==="[0:((4 - (length % 4)) % 4)]) | @base64d;
      def pins: .clevis as $c | $c.pin
        + if $c.pin == "sss" then "(t=\($c.sss.t): "
            + ([$c.sss.jwe[] | split(".")[0] | b64u | fromjson | pins] | join(", ")) + ")"
          elif $c.pin == "tpm2" then "(key=\($c.tpm2.key), hash=\($c.tpm2.hash), pcr_ids=\($c.tpm2.pcr_ids // "none"))"
          else "" end;
      "keyslots: \(.keyslots | length)",
      "keyslot kdf: \([.keyslots[] | .kdf.type + (if .kdf.iterations then "/\(.kdf.iterations)" else "" end)] | join(" "))",
      "keyslot key size: \([.keyslots[] | .key_size | tostring] | join(" "))",
      "tokens: \([.tokens[] | .type] | join(" "))",
      "every keyslot has a token: \(. as $h | [$h.tokens[] | .keyslots[]] | unique == ($h.keyslots | keys))",
      "clevis binding: \([.tokens[] | select(.type == "clevis") | .jwe.protected | b64u | fromjson | pins] | join(" "))",
      "flags: \(.config.flags // [] | join(" "))",
      "segments: \([.segments[] | "\(.encryption)/\(.sector_size)"] | join(" "))"' "$2.json"
    echo "label: $(sed -n 's/^Label:[[:space:]]*//p' "$2.txt")"
  } >"$2" 2>>"$2.err"
  grep -q '^version: 2$' "$2"
}

# fcl_provisioned NAME WHO DISK: the checks of the provisioning boot NAME for the root on
# LUKS (after fc_provision_boot's): the header as configured, the root mounted from the
# open volume, the crypttab line.
fcl_provisioned() {
  local name=$1 who=$2 disk=$3 why="" shape=$WORK/fc-$2.luks u dm dev mnt
  [ "$(blkid_at "$disk" "$(part_offset "$disk" 9)" TYPE)" = crypto_LUKS ] || why+=" ROOT is not LUKS;"
  if fcl_luks_shape "$disk" "$shape"; then
    grep -qx 'keyslots: 1' "$shape" || why+=" $(grep '^keyslots:' "$shape") (the generated key's slot kept?);"
    grep -qx 'tokens: clevis' "$shape" || why+=" $(grep '^tokens:' "$shape");"
    grep -qx 'every keyslot has a token: true' "$shape" || why+=" a keyslot without a token;"
    grep -qx 'clevis binding: sss(t=1: tpm2(.*))' "$shape" || why+=" $(grep '^clevis binding:' "$shape");"
    grep -qE '^flags: (.* )?allow-discards( |$)' "$shape" || why+=" no allow-discards flag;"
  else
    why+=" no LUKS2 header ($(head -c 200 "$shape.err" | tr '\n' ' '));"
  fi
  u=$(cat "$shape.uuid" 2>/dev/null)
  [ "$(sed -n 's/^ROOT-CRYPTTAB //p' "$WORK/$name.log")" = "rootencrypted UUID=$u none luks" ] \
    || why+=" crypttab: $(sed -n 's/^ROOT-CRYPTTAB //p' "$WORK/$name.log" | tr '\n' '|');"
  dm=$(grep -a -m1 '^ROOT-DM ' "$WORK/$name.log")
  read -r _ dev _ <<<"$dm"
  [[ $dm == "ROOT-DM $dev rootencrypted CRYPT-LUKS2-${u//-/}-rootencrypted" ]] || why+=" no open volume rootencrypted ($dm);"
  mnt=$(grep -a -m1 '^ROOT-MOUNT ' "$WORK/$name.log")
  [[ " $mnt " == *" $dev / / "*" - ext4 "* ]] || why+=" / is not the open volume ($mnt);"
  verdict "flatcar-$who-luks-root-bound-to-tpm (disks stage $(jspan "$name" 'systemd\[1\]: Starting ignition-disks' 'systemd\[1\]: Finished ignition-disks') s)" "$why"
}

# fcl_unlocked NAME WHO: the checks of a later boot NAME for the root on LUKS: opened by
# Flatcar's decrypt-root through systemd-cryptsetup, the password given by Clevis's agent.
fcl_unlocked() {
  local name=$1 who=$2 why="" dm dev mnt
  has_line "$name" "Finished decrypt-root.service" || why+=" decrypt-root did not finish;"
  has_line "$name" "Finished systemd-cryptsetup@rootencrypted.service" || why+=" systemd-cryptsetup@rootencrypted did not finish;"
  has_line "$name" "clevis-luks-askpass.*Unlocked /dev/disk/by-uuid/.* successfully" \
    || why+=" Clevis's agent did not answer;"
  dm=$(grep -a -m1 '^ROOT-DM ' "$WORK/$name.log")
  read -r _ dev _ <<<"$dm"
  [[ $dm == "ROOT-DM $dev rootencrypted CRYPT-LUKS2-"*"-rootencrypted" ]] || why+=" no open volume rootencrypted ($dm);"
  mnt=$(grep -a -m1 '^ROOT-MOUNT ' "$WORK/$name.log")
  [[ " $mnt " == *" $dev / / "*" - ext4 "* ]] || why+=" / is not the open volume ($mnt);"
  verdict "flatcar-$who-next-boot-opens-luks-root (unlock $(jspan "$name" 'systemd\[1\]: Starting decrypt-root' 'systemd\[1\]: Finished systemd-cryptsetup@rootencrypted') s)" "$why"
}

# fcl_dump_shape DUMP: luksDump's report without what differs between any two volumes
# (UUIDs, salts, digests and their hex continuation lines).
fcl_dump_shape() {
  grep -vE '^(UUID|Label):|^[[:space:]]*(Salt|Digest):|^[[:space:]]+([0-9a-f]{2} )+[0-9a-f]{2}[[:space:]]*$' "$1" || true
}

# fcl_compare: the headers and crypttabs flint and the reference made, item by item (one
# FAIL reason per item that differs).
fcl_compare() {
  local f=$WORK/fc-flint.luks r=$WORK/fc-reference.luks why="" item a b items=""
  if [ -s "$f" ] && [ -s "$r" ]; then
    while IFS= read -r a; do
      item=${a%%: *}
      items+="${items:+, }$item"
      b=$(grep -m1 "^$item: " "$r" || true)
      [ "$a" = "$b" ] || why+=" $item: flint \"${a#*: }\", reference \"${b#*: }\";"
    done <"$f"
    a=$(grep -vFf <(sed 's/: .*/: /' "$f") "$r" || true) # items only the reference has
    [ -z "$a" ] || why+=" only the reference: $(tr '\n' '|' <<<"$a");"
    # And luksDump's whole report: keyslot and token numbers, areas, offsets, priorities.
    a=$(diff <(fcl_dump_shape "$f.txt") <(fcl_dump_shape "$r.txt") | grep '^[<>]' | head -n 4 | tr '\n' '|' || true)
    items+=", the rest of luksDump's report"
    [ -z "$a" ] || why+=" luksDump (< flint, > reference): $a;"
  else
    why+=" a header is missing;"
  fi
  verdict "flatcar-luks-header-flint-equals-reference ($items)" "$why"
  why=""
  a=$(sed -n 's/^ROOT-CRYPTTAB //p' "$WORK/fc-flint-2.log" | sed 's/UUID=[^ ]*/UUID=U/')
  b=$(sed -n 's/^ROOT-CRYPTTAB //p' "$WORK/fc-ref-2.log" | sed 's/UUID=[^ ]*/UUID=U/')
  [ "$a" = "$b" ] || why+=" crypttab line: flint \"$a\", reference \"$b\";"
  local fa ra
  fa=$( (grep -E '^etc/(crypttab|luks)( |/)' "$WORK/fc-flint.manifest" || echo "no etc/crypttab") | cut -d' ' -f1-4 | tr '\n' '|')
  ra=$( (grep -E '^etc/(crypttab|luks)( |/)' "$WORK/fc-reference.manifest" || echo "no etc/crypttab") | cut -d' ' -f1-4 | tr '\n' '|')
  [ "$fa" = "$ra" ] || why+=" entries: flint \"$fa\", reference \"$ra\";"
  [[ $fa == *"etc/luks "* ]] || fa+=" no etc/luks"
  verdict "flatcar-crypttab-flint-equals-reference (\"$a\", ${fa//|/ })" "$why"
}
