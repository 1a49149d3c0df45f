# shellcheck shell=bash
# no-config: a boot with no config anywhere (no fw_cfg entry, nothing on the kernel command
# line, no user.ign) succeeds: flint picks the qemu platform (DMI says QEMU, as Flatcar's
# ignition-setup-pre decides), finds no config, applies nothing and records that no user
# config was provided; plan prints nothing; a second apply changes nothing.

scenario_disks() { :; }

scenario_config() { :; }

scenario_guest() {
  cat >"$1" <<'GUEST'
mkdir -p /run/root
seed-root /run/root
step "flint apply with no config at all"
flint apply --config-source auto --root /run/root 2>/run/err >/run/out || { cat /run/err; exit 1; }
cat /run/err /run/out
grep -q 'platform qemu' /run/err
grep -q 'no user config' /run/err
grep -q '"userConfigProvided": false' /run/root/etc/.ignition-result.json
[ -z "$(flint plan --config-source auto --root /run/root 2>/dev/null)" ]
flint apply --config-source auto --root /run/root 2>/dev/null | grep -qx 'apply: nothing to change'
echo "NO-CONFIG-OK"
GUEST
}

scenario_verify() {
  local dir=$1
  check "the guest saw the run succeed with no config" grep -q 'NO-CONFIG-OK' "$dir/serial.log"
  checks_ok
}
