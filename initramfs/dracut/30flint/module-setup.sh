#!/bin/bash
# shellcheck disable=SC2154 # initdir, moddir, systemd*dir: set by dracut
# dracut module "flint": runs flint's provisioning stages in the initramfs on first boot.
# See ../README.md. Install this directory as /usr/lib/dracut/modules.d/30flint and ask
# for it explicitly (dracut --add flint); it is never picked on its own.

# called by dracut
check() {
    # 255: only when asked for (-m/--modules, -a/--add) or required by another module.
    return 255
}

# called by dracut
depends() {
    # systemd-initrd: systemd and the initrd targets the units order against
    # (initrd-root-device.target, initrd-root-fs.target, initrd.target).
    # dracut-systemd: emergency.service. A failed stage isolates emergency.target; without
    # the service that job fails, and initrd-cleanup.service would go on to switch root
    # into a half-provisioned system.
    echo systemd-initrd dracut-systemd
    return 0
}

# called by dracut
installkernel() {
    # The config may come from QEMU fw_cfg (--config-source auto reads
    # /sys/firmware/qemu_fw_cfg); built in on some kernels, a module on others.
    hostonly='' instmods qemu_fw_cfg
    # The ESP (vfat) holds the first-boot flag; the OEM partition is btrfs on current
    # Flatcar images, ext4 on older ones.
    hostonly='' instmods vfat nls_cp437 nls_ascii nls_iso8859_1 nls_utf8 btrfs ext4
    return 0
}

# called by dracut
install() {
    local bin=${flint_bin:-/usr/bin/flint}
    if [[ ! -x $bin ]]; then
        derror "flint: no flint binary at $bin (set flint_bin=PATH)"
        return 1
    fi
    inst_binary "$bin" /usr/bin/flint

    # What flint runs: the storage tools of the disks stage and the shadow tools of the
    # files stage. Filesystem and RAID/LUKS tools that the host lacks are left out (-o);
    # a config that needs one then fails in its stage with "not found".
    inst_multiple mkfs.ext4 mkswap wipefs blkid useradd usermod userdel groupadd groupdel
    inst_multiple -o mkfs.xfs mkfs.btrfs mkfs.vfat mdadm cryptsetup modprobe
    # What the helper scripts use.
    [[ -e $initdir/bin/sh ]] || inst_multiple sh
    inst_multiple cat date ln mkdir mv rm
    # What flint-firstboot uses.
    inst_multiple bash cp grep mount umount sync tail tr
    inst_multiple -o udevadm journalctl dmesg

    local u
    for u in flint-setup.service flint-fetch-offline.service flint-network.service \
        flint-quench.service flint-fetch.service flint-kargs.service flint-disks.service \
        flint-mount.service flint-files.service flint-umount.service \
        flint-rmcfg.service flint-complete.target; do
        inst_simple "$moddir/$u" "$systemdsystemunitdir/$u"
    done
    inst_script "$moddir/flint-generator" "$systemdutildir/system-generators/flint-generator"
    inst_script "$moddir/flint-stamp" /usr/lib/flint/flint-stamp
    inst_script "$moddir/flint-firstboot" /usr/lib/flint/flint-firstboot
    # The failure banner: before dracut's emergency shell (with Flatcar's reboot prompt),
    # and before the emergency action when there is no shell (rd.shell=0).
    inst_hook emergency 50 "$moddir/flint-emergency.sh"
    inst_hook shutdown-emergency 50 "$moddir/flint-banner.sh"
}
