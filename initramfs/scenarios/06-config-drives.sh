# shellcheck shell=bash
# VM_APPEND is read by run-vm-tests:
# shellcheck disable=SC2034
# config-drives: real ISO9660, vfat and UDF images made with the usual tools, mounted by the
# guest kernel as the platforms do. A second disk (vdc, an ISO labelled FLINTCFG) holds the
# config named by ignition.config.device= and ignition.config.path= on the kernel command
# line (upstream after v2.26). A third (vdb, ext4) carries one image per platform, each put
# on a read-only loop device in turn while `flint apply --platform P` runs (its command
# line then read from a plain file, FLINT_CMDLINE): openstack (ISO config-2), nutanix
# (ISO config-2), cloudstack (ISO config-2, its own path), kubevirt (vfat cidata, NoCloud),
# proxmoxve (ISO cidata whose user-data is a #cloud-config: the vendor-data is used),
# ibmcloud (ISO cidata), azurestack (the UDF provisioning disc: ovf-env.xml and
# CustomData.bin). Each config writes /etc/from-PLATFORM, checked from the host.

VM_APPEND="ignition.config.device=FLINTCFG ignition.config.path=/flint/config.ign"
DRIVES="openstack nutanix cloudstack kubevirt proxmoxve ibmcloud azurestack"

# marker_config NAME: a config writing /etc/from-NAME with "NAME".
marker_config() {
  printf '{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/from-%s","mode":420,"contents":{"source":"data:,%s"}}]}}\n' "$1" "$1"
}

scenario_disks() {
  local dir=$1 t=$1/tree d
  truncate -s 256M "$dir/vda.img"
  rm -rf "$t" && mkdir -p "$t/img"
  # One source tree per image.
  for d in openstack nutanix; do
    mkdir -p "$t/$d/openstack/latest"
    marker_config "$d" >"$t/$d/openstack/latest/user_data"
  done
  mkdir -p "$t/cloudstack/cloudstack/userdata"
  marker_config cloudstack >"$t/cloudstack/cloudstack/userdata/user_data.txt"
  mkdir -p "$t/proxmoxve" "$t/ibmcloud" "$t/azurestack" "$t/kubevirt" "$t/device/flint"
  printf '#cloud-config\nhostname: not-for-ignition\n' >"$t/proxmoxve/user-data"
  marker_config proxmoxve >"$t/proxmoxve/vendor-data"
  marker_config ibmcloud >"$t/ibmcloud/user-data"
  marker_config kubevirt >"$t/kubevirt/user-data"
  printf '<?xml version="1.0"?><Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"/>\n' >"$t/azurestack/ovf-env.xml"
  marker_config azurestack >"$t/azurestack/CustomData.bin"
  marker_config device >"$t/device/flint/config.ign"
  for d in openstack nutanix cloudstack; do
    genisoimage -quiet -R -J -V config-2 -o "$t/img/$d.img" "$t/$d"
  done
  genisoimage -quiet -R -J -V cidata -o "$t/img/proxmoxve.img" "$t/proxmoxve"
  genisoimage -quiet -R -J -V cidata -o "$t/img/ibmcloud.img" "$t/ibmcloud"
  genisoimage -quiet -udf -R -J -V rd_rdfe_stable -o "$t/img/azurestack.img" "$t/azurestack"
  mkfs.vfat -n cidata -C "$t/img/kubevirt.img" 1024 >/dev/null
  MTOOLS_SKIP_CHECK=1 mcopy -i "$t/img/kubevirt.img" "$t/kubevirt/user-data" ::user-data
  mke2fs -q -t ext4 -d "$t/img" "$dir/vdb.img" 64M
  genisoimage -quiet -R -J -V FLINTCFG -o "$dir/vdc.img" "$t/device"
}

scenario_config() { :; }

scenario_guest() {
  cat >"$1" <<GUEST
step "mkfs.ext4 /dev/vda"
mkfs.ext4 -q -F -L root /dev/vda
mount -t ext4 /dev/vda /sysroot
seed-root /sysroot
step "config from the labelled device on the kernel command line"
flint apply --config-source auto --root /sysroot --stage files 2>/run/err || { cat /run/err; exit 1; }
cat /run/err
grep -q 'on the device labelled FLINTCFG' /run/err
echo quiet >/run/plain-cmdline
export FLINT_CMDLINE=/run/plain-cmdline
mkdir -p /drives
mount -t ext4 -o ro /dev/vdb /drives
for p in $DRIVES; do
  step "config drive: \$p"
  dev=\$(/sbin/losetup -f --show -r /drives/\$p.img)
  flint apply --platform \$p --fetch-timeout 30 --root /sysroot --stage files 2>/run/err || { cat /run/err; /sbin/losetup -d \$dev; exit 1; }
  cat /run/err
  /sbin/losetup -d \$dev
done
grep -q 'is a #cloud-config' /run/err || true
# The kernel lets go of a detached loop device's backing file a moment after losetup -d.
# Held longer, something still has a drive: say what (a mount of flint's left behind was
# one such cause) and fail.
n=0
until umount /drives; do
  n=\$((n + 1))
  if [ \$n -ge 10 ]; then
    /sbin/losetup -a; grep loop /proc/mounts
    exit 1
  fi
  sleep 1
done
umount /sysroot
GUEST
}

scenario_verify() {
  local dir=$1 m=$1/mnt p
  check "mount the ext4 image" ro_mount "$dir/vda.img" 0 "$m" || return 1
  check "/etc/from-device (ignition.config.device)" [ "$(cat "$m/etc/from-device" 2>/dev/null)" = device ]
  for p in $DRIVES; do
    check "/etc/from-$p" [ "$(cat "$m/etc/from-$p" 2>/dev/null)" = "$p" ]
  done
  checks_ok
}
