#!/bin/bash
# shellcheck disable=SC2154 # dracut sets initdir, moddir, systemdsystemunitdir and SYSTEMCTL
# flatcar-standins: small stand-ins for the programs Flatcar's bootengine modules name that
# a Debian build host does not have, put where the modules call them, and the few host
# tools the modules' scripts run that their own install() leaves to Flatcar's image.
# Written for flint's tests (initramfs/test-reference-modules), not part of Flatcar:
#   /usr/sbin/flatcar-tmpfiles          Flatcar's baselayout tool (99setup-root): here it
#                                       copies the account databases from /usr/share/baselayout
#   /usr/bin/cgpt                       vboot's cgpt (30disk-uuid `cgpt repair`): a no-op
#   /usr/lib/udev/cloud_aws_ebs_nvme_id Flatcar's EBS NVMe udev helper (30ignition): a no-op

check() {
    return 255
}

depends() {
    return 0
}

install() {
    # Over any failed attempt of the modules' own install (dracut-install never overwrites;
    # `command`: this function is itself called install).
    mkdir -p "$initdir/usr/sbin" "$initdir/usr/bin" "$initdir/usr/lib/udev"
    command install -m 0755 "$moddir/flatcar-tmpfiles" "$initdir/usr/sbin/flatcar-tmpfiles"
    command install -m 0755 "$moddir/noop" "$initdir/usr/bin/cgpt"
    command install -m 0755 "$moddir/noop" "$initdir/usr/lib/udev/cloud_aws_ebs_nvme_id"
    # initrd-setup-root (stat), the emergency hook (journalctl, dmesg), and partx, which
    # Ignition runs after partitioning (upstream's 30ignition installs it; Flatcar's
    # module leaves it to the rest of Flatcar's image).
    inst_multiple stat cat cut date dmesg journalctl partx
}
