#!/bin/bash
# shellcheck disable=SC2154 # dracut sets initdir, moddir, systemdsystemunitdir and SYSTEMCTL
# refdistro: a stand-in for what a distribution adds around upstream Ignition's 30ignition
# (as Fedora CoreOS's own module does): its ignition-kargs-helper, which keeps the kernel
# arguments in a boot-loader entry on the partition labelled "boot", and the unit that
# removes the first-boot stamp (/ignition.firstboot on that partition) once every stage
# has succeeded; and a drop-in ordering the kargs stage after that partition's device.
# Written for flint's tests (initramfs/test-reference-modules).

check() {
    # Only when asked for (--add/--modules), like 30ignition itself.
    return 255
}

depends() {
    echo ignition
}

install() {
    inst_multiple bash sed mount umount mkdir rm systemctl
    # Over the stock helper 30ignition installed (dracut-install never overwrites;
    # `command`: this function is itself called install).
    mkdir -p "$initdir/usr/sbin"
    command install -m 0755 "$moddir/refdistro-kargs-helper" "$initdir/usr/sbin/ignition-kargs-helper"
    inst_script "$moddir/refdistro-firstboot-done" /usr/lib/refdistro/firstboot-done
    inst_simple "$moddir/refdistro-firstboot-done.service" \
        "$systemdsystemunitdir/refdistro-firstboot-done.service"
    inst_simple "$moddir/ignition-kargs-refdistro.conf" \
        "$systemdsystemunitdir/ignition-kargs.service.d/10-refdistro.conf"
    # Runs only when ignition-complete.target does, i.e. on first boot.
    $SYSTEMCTL -q --root="$initdir" add-requires ignition-complete.target \
        refdistro-firstboot-done.service || exit 1
}

installkernel() {
    instmods ext4
}
