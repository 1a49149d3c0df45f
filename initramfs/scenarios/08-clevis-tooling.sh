# shellcheck shell=bash
# VM_* are read by run-vm-tests and vm-lib.sh:
# shellcheck disable=SC2034
# clevis-tooling: a check of the test tier's Clevis parts, with no flint involved: a real
# TPM 2.0 (swtpm behind QEMU's tpm-tis), a real Tang server on the host (tangd, reached as
# 10.0.2.2) and Debian's clevis in the guest. flint's Clevis scenarios are meant to replace
# the direct `clevis luks bind` of boot 1 with flint's disks stage.
#
# vda: 1 root ext4 (holds /etc/crypttab and a key file), then one LUKS2 volume per binding:
#   2 tpm2 '{}'   3 tang   4 sss t=2 of tang+tpm2   5 sss t=1 of tang+tpm2   6 a key file
# Boot 1 formats, puts a marker file in each, binds, removes the temporary passphrase,
# shows that a wrong Tang thumbprint makes the bind fail, writes crypttab, then unlocks
# everything with unlock-crypttab (Tang up). Between the boots the Tang server is stopped;
# boot 2, on a new swtpm process over the same TPM state, unlocks what needs no Tang (tpm2,
# sss t=1 through its tpm2 pin, the key file) and must fail on tang and sss t=2.

VM_NET=1
VM_CLEVIS=1
VM_TIMEOUT=600
CLEVIS_VOLS="data-tpm data-tang data-sss2 data-sss1 data-key"

scenario_setup() {
  local dir=$1 t
  for t in swtpm jose python3 /usr/libexec/tangd; do
    command -v "$t" >/dev/null || { echo "clevis-tooling: missing $t (scripts/install-deps.sh)" >&2; return 1; }
  done
  VM_TPM=$dir/tpm
  tang_start "$dir/tang"
  # A well-formed thumbprint of a key the server does not have.
  WRONG_THP=$(jose jwk gen -i '{"alg":"ES512"}' | jose jwk thp -i- -a S256)
}

scenario_disks() {
  truncate -s 192M "$1/vda.img"
  sfdisk -q "$1/vda.img" <<'EOF'
label: gpt
size=16MiB, name=root
size=32MiB, name=tpm
size=32MiB, name=tang
size=32MiB, name=sss2
size=32MiB, name=sss1
size=32MiB, name=key
EOF
}

scenario_config() { :; }

# The shell helpers both guest scripts start with.
_clevis_guest_lib() {
  cat <<'EOF'
command -v clevis >/dev/null || { echo "no clevis in the image (VM_CLEVIS=1 not honoured?)"; exit 1; }
[ -c /dev/tpmrm0 ] || { echo "no /dev/tpmrm0: the guest sees no TPM"; ls -l /dev/tpm* || true; exit 1; }
now() { cut -d' ' -f1 /proc/uptime; }
# timed LABEL CMD...: run CMD, print "TIME LABEL SECONDS" (collected into figures).
timed() {
  label=$1; shift
  a=$(now) st=0
  "$@" || st=$?
  echo "TIME $label $(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')"
  return $st
}
check_markers() {  # check_markers NAME...: each /dev/mapper/NAME holds its marker
  for n in "$@"; do
    mount -t ext4 -o ro "/dev/mapper/$n" /mnt
    grep -qx "marker of $n" /mnt/marker || { echo "$n: wrong marker: $(cat /mnt/marker)"; exit 1; }
    umount /mnt
    echo "$n: marker ok"
  done
}
close_all() { for n in $CLEVIS_VOLS; do [ ! -e "/dev/mapper/$n" ] || cryptsetup close "$n"; done; }
EOF
  echo "CLEVIS_VOLS=\"$CLEVIS_VOLS\""
}

scenario_guest() {
  {
    _clevis_guest_lib
    echo "TANG='{\"url\":\"$TANG_URL\",\"thp\":\"$TANG_THP\"}'"
    echo "WRONG='{\"url\":\"$TANG_URL\",\"thp\":\"$WRONG_THP\"}'"
    cat <<'EOF'
step "clevis tooling: $(tpm2_createprimary -v | head -n 1), /dev/tpmrm0 there"
step "format the volumes (temporary passphrase)"
printf '%s' "temporary-passphrase" >/run/pass
i=2
for n in $CLEVIS_VOLS; do
  dev=/dev/vda$i
  cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file /run/pass "$dev"
  cryptsetup open --key-file /run/pass "$dev" "$n"
  mkfs.ext4 -q "/dev/mapper/$n"
  mount -t ext4 "/dev/mapper/$n" /mnt
  echo "marker of $n" >/mnt/marker
  umount /mnt
  cryptsetup close "$n"
  i=$((i + 1))
done

step "a wrong thumbprint: the bind must fail"
if out=$(clevis luks bind -f -k /run/pass -d /dev/vda3 tang "$WRONG" 2>&1); then
  echo "clevis luks bind with a wrong thp succeeded: $out"; exit 1
fi
echo "wrong thp refused: $out"
cryptsetup luksDump /dev/vda3 | grep -q clevis && { echo "a failed bind left a token"; exit 1; }

step "clevis luks bind"
timed bind-tpm2 clevis luks bind -f -k /run/pass -d /dev/vda2 tpm2 '{}'
timed bind-tang clevis luks bind -f -k /run/pass -d /dev/vda3 tang "$TANG"
timed bind-sss2 clevis luks bind -f -k /run/pass -d /dev/vda4 sss \
  "{\"t\":2,\"pins\":{\"tang\":[$TANG],\"tpm2\":{}}}"
timed bind-sss1 clevis luks bind -f -k /run/pass -d /dev/vda5 sss \
  "{\"t\":1,\"pins\":{\"tang\":[$TANG],\"tpm2\":{}}}"
for i in 2 3 4 5; do
  echo "vda$i: $(clevis luks list -d /dev/vda$i)"
  cryptsetup luksRemoveKey -q /dev/vda$i /run/pass
  if cryptsetup open --test-passphrase --key-file /run/pass /dev/vda$i 2>/dev/null; then
    echo "vda$i still opens with the temporary passphrase"; exit 1
  fi
done

step "root: crypttab and a key file"
mkfs.ext4 -q -L root /dev/vda1
mount -t ext4 /dev/vda1 /sysroot
mkdir -p /sysroot/etc/luks
cp /run/pass /sysroot/etc/luks/data-key
chmod 600 /sysroot/etc/luks/data-key
uuid() { cryptsetup luksUUID "$1"; }
cat >/sysroot/etc/crypttab <<TAB
# written by the clevis-tooling scenario
data-tpm UUID=$(uuid /dev/vda2) none luks
data-tang UUID=$(uuid /dev/vda3) none luks,_netdev
data-sss2 UUID=$(uuid /dev/vda4) none luks,_netdev
data-sss1 UUID=$(uuid /dev/vda5) none luks,_netdev
data-key UUID=$(uuid /dev/vda6) /etc/luks/data-key luks,discard
TAB
cat /sysroot/etc/crypttab

step "unlock-crypttab (Tang up)"
timed unlock-all-tang-up unlock-crypttab /sysroot
check_markers $CLEVIS_VOLS
close_all
umount /sysroot
EOF
  } >"$1"
}

scenario_guest2() {
  # Between the boots: the Tang server goes away; its keys stay.
  tang_stop
  {
    _clevis_guest_lib
    cat <<'EOF'
step "unlock-crypttab (Tang stopped; a new swtpm on the same state)"
mount -t ext4 -o ro /dev/vda1 /sysroot
set +e
timed unlock-all-tang-down unlock-crypttab /sysroot
rc=$?
set -e
[ "$rc" != 0 ] || { echo "unlock-crypttab succeeded although tang and sss t=2 need the stopped server"; exit 1; }
check_markers data-tpm data-sss1 data-key
for n in data-tang data-sss2; do
  [ ! -e "/dev/mapper/$n" ] || { echo "$n opened without its Tang server"; exit 1; }
done
close_all
umount /sysroot
EOF
  } >"$1"
}

scenario_verify() {
  local dir=$1
  check "boot 1 printed the clevis bind and unlock times" grep -q 'TIME unlock-all-tang-up' "$dir/serial.log"
  check "the guest fetched Tang's advertisement" grep -q "GET /adv/$TANG_THP" "$dir/tang/tang.log"
  check "the guest recovered keys through Tang" grep -q 'POST /rec/' "$dir/tang/tang.log"
  check "the wrong thumbprint was asked for and refused" grep -q "GET /adv/$WRONG_THP" "$dir/tang/tang.log"
  check "swtpm kept its state between the boots" test -s "$dir/tpm/tpm2-00.permall"
  # Figures: the guest's TIME lines and unlock-crypttab's per-volume times, by boot.
  local b log
  for b in 1 2; do
    log=$dir/serial.log
    [ "$b" = 1 ] || log=$dir/serial2.log
    awk -v b="$b" '
      / TIME / { printf "b%s:%s=%ss ", b, $(NF-1), $NF }
      /unlock-crypttab: .* opened with/ { v = $3; sub(/:$/, "", v); printf "b%s:open-%s=%s ", b, v, $NF }' "$log"
  done | sed 's/ $//' >"$dir/figures"
  checks_ok
}
