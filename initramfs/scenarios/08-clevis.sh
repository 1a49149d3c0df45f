# shellcheck shell=bash
# VM_* are read by run-vm-tests and vm-lib.sh:
# shellcheck disable=SC2034
# clevis: encrypted disks that unlock themselves. A Fedora CoreOS-style Butane config
# (`boot_device.luks.tpm2`, translated by flint) whose root is LUKS bound to the TPM, plus
# data volumes bound with Clevis: `tpm` (TPM2), `tang` (a Tang server), `both2` (Tang and
# TPM2, 2 of 2), `both1` (TPM2 and a second Tang server, 1 of 2). Real parts: a TPM 2.0
# (swtpm behind QEMU's tpm-tis), two tangd servers on the host (10.0.2.2 from the guest),
# Debian's clevis, cryptsetup and tpm2-tools in the guest.
#
# Boot 1: the same config with a wrong Tang thumbprint fails before any disk is touched,
# naming the volume; then the stages run one by one as an initramfs runs them
# (fetch-offline must ask for the network, for Tang), the root is mounted as the
# distribution mounts its sysroot, and every volume ends with one keyslot (Clevis') and
# a crypttab line. Between the boots the second Tang server is stopped. Boot 2: the root
# is unlocked through its TPM binding as an initramfs does, the crypttab volumes as the
# booted system does (unlock-crypttab: no passphrase, `both1` through its TPM pin alone),
# the files are intact; then flint applies the data volumes' config again: every volume is
# opened through its binding and reused, nothing is formatted, the data stays.

VM_NET=1
VM_CLEVIS=1
VM_TIMEOUT=900
VM_MEM=1536
DATA_VOLS="tpm tang both2 both1"

scenario_setup() {
  local dir=$1 t
  for t in swtpm jose python3 /usr/libexec/tangd; do
    command -v "$t" >/dev/null || { echo "clevis: missing $t (scripts/install-deps.sh)" >&2; return 1; }
  done
  VM_TPM=$dir/tpm
  tang_start "$dir/tang-b"
  TANG_B_URL=$TANG_URL TANG_B_THP=$TANG_THP TANG_B_PID=$TANG_PID
  # tang_start's variables name the last server started: A, which stays up.
  tang_start "$dir/tang-a"
  # A well-formed thumbprint of a key server A does not have.
  WRONG_THP=$(jose jwk gen -i '{"alg":"ES512"}' | jose jwk thp -i- -a S256)
}

scenario_disks() {
  truncate -s 320M "$1/vda.img"
}

# The Butane config (fcos 1.5.0: Ignition 3.4.0). Partition 4 is the root, as in Fedora
# CoreOS' layout; the root is ext4 (the config overrides Butane's xfs: small disk) and
# every volume uses a cheap PBKDF (TCG).
_butane() {
  local fast='options: [--pbkdf, pbkdf2, --pbkdf-force-iterations, "1000"]'
  cat <<EOF
variant: fcos
version: 1.5.0
boot_device:
  luks:
    tpm2: true
storage:
  disks:
    - device: /dev/vda
      partitions:
        - {number: 4, label: root, size_mib: 64}
        - {number: 5, label: tpm, size_mib: 48}
        - {number: 6, label: tang, size_mib: 48}
        - {number: 7, label: both2, size_mib: 48}
        - {number: 8, label: both1, size_mib: 0}
  luks:
    - name: root
      $fast
    - name: tpm
      device: /dev/disk/by-partlabel/tpm
      $fast
      clevis: {tpm2: true}
    - name: tang
      device: /dev/disk/by-partlabel/tang
      $fast
      clevis:
        tang: [{url: "$TANG_URL", thumbprint: "$TANG_THP"}]
    - name: both2
      device: /dev/disk/by-partlabel/both2
      $fast
      clevis:
        tpm2: true
        tang: [{url: "$TANG_URL", thumbprint: "$TANG_THP"}]
        threshold: 2
    - name: both1
      device: /dev/disk/by-partlabel/both1
      $fast
      clevis:
        tpm2: true
        tang: [{url: "$TANG_B_URL", thumbprint: "$TANG_B_THP"}]
        threshold: 1
  filesystems:
    - {device: /dev/mapper/root, format: ext4}
    - {device: /dev/mapper/tpm, format: ext4, label: tpm, path: /srv/tpm}
    - {device: /dev/mapper/tang, format: ext4, label: tang, path: /srv/tang}
    - {device: /dev/mapper/both2, format: ext4, label: both2, path: /srv/both2}
    - {device: /dev/mapper/both1, format: ext4, label: both1, path: /srv/both1}
  files:
    - {path: /etc/hostname, mode: 0644, overwrite: true, contents: {inline: clevis-vm}}
    - {path: /srv/tpm/marker, contents: {inline: "marker of tpm\n"}}
    - {path: /srv/tang/marker, contents: {inline: "marker of tang\n"}}
    - {path: /srv/both2/marker, contents: {inline: "marker of both2\n"}}
    - {path: /srv/both1/marker, contents: {inline: "marker of both1\n"}}
EOF
}

scenario_config() {
  local dir
  dir=$(dirname "$1")
  _butane >"$dir/config.bu"
  # Not --strict: Butane warns that a 64 MiB root is small, as it should.
  "$FLINT_BIN" translate "$dir/config.bu" >"$1" 2>"$dir/translate.log"
  # The wrong thumbprint; and, for boot 2's re-run, the data volumes alone (a re-run of
  # the root's `wipeVolume: true` would format it again, as upstream's would).
  python3 - "$1" "$WRONG_THP" "$TANG_THP" "$dir" <<'PY'
import json, sys
src, wrong, right, out = sys.argv[1:]
c = json.load(open(src))
bad = json.loads(json.dumps(c).replace(right, wrong))
json.dump(bad, open(out + "/bad.ign", "w"))
s = c["storage"]
s["luks"] = [l for l in s["luks"] if l["name"] != "root"]
s["filesystems"] = [f for f in s["filesystems"] if f["device"] != "/dev/mapper/root"]
json.dump(c, open(out + "/rerun.ign", "w"))
PY
}

# The shell helpers both guest scripts start with.
_clevis_guest_lib() {
  cat <<'EOF'
command -v clevis >/dev/null || { echo "no clevis in the image (VM_CLEVIS=1 not honoured?)"; exit 1; }
[ -c /dev/tpmrm0 ] || { echo "no /dev/tpmrm0: the guest sees no TPM"; exit 1; }
export FLINT_DEVICE_TIMEOUT=20
now() { cut -d' ' -f1 /proc/uptime; }
# timed LABEL CMD...: run CMD, print "TIME LABEL SECONDS" (collected into figures).
timed() {
  label=$1; shift
  a=$(now) st=0
  "$@" || st=$?
  echo "TIME $label $(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')"
  return $st
}
check_markers() {  # each /dev/mapper/NAME holds the file the config put there
  for n in $DATA_VOLS; do
    mount -t ext4 -o ro "/dev/mapper/$n" /mnt
    grep -qx "marker of $n" /mnt/marker || { echo "$n: wrong marker: $(cat /mnt/marker)"; exit 1; }
    grep -qx "written on boot 1" /mnt/user-data || { echo "$n: user data lost"; exit 1; }
    umount /mnt
    echo "$n: marker and user data ok"
  done
}
part() { blkid -t "PARTLABEL=$1" -o device; }
EOF
  echo "DATA_VOLS=\"$DATA_VOLS\""
}

# embed NAME FILE: a guest command writing FILE's text to /run/NAME.
_embed() {
  printf "cat >/run/%s <<'JSON'\n%s\nJSON\n" "$1" "$(cat "$2")"
}

scenario_guest() {
  local dir
  dir=$(dirname "$1")
  {
    _clevis_guest_lib
    _embed bad.ign "$dir/bad.ign"
    cat <<'EOF'
run() { flint apply --config-source auto --config-cache /run/flint/config.json --root /sysroot "$@"; }
mkdir -p /run/flint

step "a wrong Tang thumbprint: refused before any disk is touched"
if out=$(flint apply --root /sysroot /run/bad.ign 2>&1); then
  echo "$out"; echo "flint applied a config with a wrong thumbprint"; exit 1
fi
echo "$out"
echo "$out" | grep -q 'disks stage failed at \$\.storage\.luks\.2\.clevis: LUKS volume "tang" cannot be bound with Clevis' \
  || { echo "the failure does not name the volume"; exit 1; }
[ -z "$(head -c 4194304 /dev/vda | tr -d '\000' | head -c 1)" ] || { echo "the disk was written"; exit 1; }
echo "disk untouched"

step "flint: fetch-offline asks for the network"
run --stage fetch-offline
[ -e /run/flint/neednet ] || { echo "no neednet flag"; exit 1; }
step "flint: fetch"; run --stage fetch
step "flint: disks (partitions, five LUKS volumes bound with Clevis)"
timed disks run --stage disks
step "the root mounted as the distribution's sysroot.mount does"
mount -t ext4 /dev/mapper/root /sysroot
seed-root /sysroot
step "flint: mount"; run --stage mount
step "flint: files"; run --stage files
for n in $DATA_VOLS; do echo "written on boot 1" >"/sysroot/srv/$n/user-data"; done
sync
step "flint: umount"; run --stage umount
echo "crypttab ($(stat -c %a /sysroot/etc/crypttab)):"; cat /sysroot/etc/crypttab
[ "$(stat -c %a /sysroot/etc/crypttab)" = 600 ] || { echo "crypttab is not 0600"; exit 1; }
[ ! -e /sysroot/etc/luks ] || { echo "a key file was written: $(ls /sysroot/etc/luks)"; exit 1; }
for n in root $DATA_VOLS; do
  grep -qE "^$n UUID=[0-9a-f-]+ none luks" /sysroot/etc/crypttab || { echo "no crypttab line for $n"; exit 1; }
done
grep -qE '^tang .* luks,_netdev$' /sysroot/etc/crypttab || { echo "tang is not _netdev"; exit 1; }
grep -qE '^tpm .* luks$' /sysroot/etc/crypttab || { echo "tpm is _netdev"; exit 1; }
umount /sysroot
step "each volume: one keyslot (Clevis'), one clevis token"
for n in root $DATA_VOLS; do
  dev=$(part "$n")
  slots=$(cryptsetup luksDump "$dev" | grep -cE '^  [0-9]+: luks2$')
  toks=$(cryptsetup luksDump "$dev" | grep -cE '^  [0-9]+: clevis$')
  echo "$n ($dev): $slots keyslot(s), $toks clevis token(s)"
  [ "$slots" = 1 ] && [ "$toks" = 1 ] || { cryptsetup luksDump "$dev"; exit 1; }
  cryptsetup close "$n"
done
EOF
  } >"$1"
}

scenario_guest2() {
  local dir
  dir=$(dirname "$1")
  # Between the boots: the second Tang server goes away; its keys stay.
  _vm_kill "$TANG_B_PID"
  {
    _clevis_guest_lib
    _embed rerun.ign "$dir/rerun.ign"
    cat <<'EOF'
step "initramfs: the root unlocked through its TPM binding, no passphrase"
timed unlock-root clevis luks unlock -d "$(part root)" -n root
mount -t ext4 /dev/mapper/root /sysroot
grep -qx clevis-vm /sysroot/etc/hostname || { echo "the root is not the provisioned one"; exit 1; }
step "later boot: the crypttab volumes (Tang A up, Tang B stopped)"
timed unlock-data unlock-crypttab /sysroot
check_markers

step "flint apply again on the bound volumes: reused, the data kept"
for n in $DATA_VOLS; do cryptsetup close "$n"; done
out=$(timed rerun flint apply --root /sysroot /run/rerun.ign 2>&1) || { echo "$out"; exit 1; }
echo "$out"
echo "$out" | grep -q 'format LUKS2' && { echo "the re-run formatted a volume"; exit 1; }
for n in $DATA_VOLS; do
  echo "$out" | grep -q "LUKS volume $n on .*: opened through its Clevis binding and reused" \
    || { echo "$n was not reused through Clevis"; exit 1; }
done
check_markers
for n in $DATA_VOLS; do cryptsetup close "$n"; done
umount /sysroot
cryptsetup close root
EOF
  } >"$1"
}

scenario_verify() {
  local dir=$1
  check "the wrong thumbprint was asked for and refused" grep -q "GET /adv/$WRONG_THP" "$dir/tang-a/tang.log"
  check "boot 2 recovered keys through Tang A" grep -q 'POST /rec/' "$dir/tang-a/tang.log"
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
