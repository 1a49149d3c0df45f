#!/usr/bin/env bash
# Installs the Debian packages flint's tests use, when missing: the storage tools the
# provisioner calls, QEMU and a Debian kernel for the VM tests. Idempotent; run as root on
# Debian bookworm.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600)

# Debian packages, by the file that shows they are there. The clevis family, tang and
# swtpm are for the VM tier's Clevis scenarios (a real software TPM and Tang server on the
# host, the real clevis scripts in the guest). Not clevis-dracut / clevis-systemd: they
# pull in dracut-network and hooks that would change how the host's dracut behaves (the
# refmods tier downloads them with apt-get download and unpacks them in its work
# directory). jq: the refmods tier reads LUKS headers (luksDump's JSON metadata).
# Neovim is the real editor of the language server's end-to-end test (tests/lsp).
need=()
for pair in \
  python3:python3 awk:gawk /usr/sbin/in.tftpd:tftpd-hpa \
  sgdisk:gdisk sfdisk:fdisk mke2fs:e2fsprogs mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs \
  mkfs.vfat:dosfstools mtype:mtools mdadm:mdadm cryptsetup:cryptsetup-bin \
  cpio:cpio modprobe:kmod /bin/busybox:busybox-static losetup:mount /usr/bin/time:time \
  /usr/bin/dracut:dracut-core /usr/bin/genisoimage:genisoimage \
  /usr/lib/dracut/modules.d/01systemd-networkd:dracut-network \
  curl:curl /usr/bin/clevis:clevis /usr/bin/clevis-luks-bind:clevis-luks \
  /usr/bin/clevis-encrypt-tpm2:clevis-tpm2 jose:jose luksmeta:luksmeta pwmake:libpwquality-tools \
  tpm2_createprimary:tpm2-tools /usr/libexec/tangd:tang swtpm:swtpm jq:jq nvim:neovim; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || [ -e "${pair%%:*}" ] || need+=("${pair#*:}")
done
ls /boot/vmlinuz-* >/dev/null 2>&1 || need+=(linux-image-amd64)
qemu_needed=0
command -v qemu-system-x86_64 >/dev/null 2>&1 || qemu_needed=1

if [ ${#need[@]} -gt 0 ] || [ $qemu_needed = 1 ]; then
  "${APT[@]}" update -qq
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing: ${need[*]}"
  # mdadm's postinst wants to write an initramfs; nothing here boots the host from it.
  "${APT[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ $qemu_needed = 1 ]; then
  echo "== installing: qemu-system-x86"
  # Some images carry qemu-utils from bookworm-backports, which breaks bookworm's
  # qemu-system-x86; take it from backports too, with a private apt lists directory so the
  # machine's own apt configuration is left alone.
  if dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null | grep -q bpo; then
    A=$(mktemp -d)
    chmod 755 "$A"   # apt downloads as _apt
    mkdir -p "$A/lists/partial"
    MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$MIRROR" ] || MIRROR=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
    {
      echo "deb $MIRROR bookworm main"
      echo "deb $MIRROR bookworm-backports main"
    } >"$A/sources.list"
    APTO=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$A/lists")
    "${APT[@]}" "${APTO[@]}" update -qq
    "${APT[@]}" "${APTO[@]}" install -y -qq --no-install-recommends -t bookworm-backports qemu-system-x86 >/dev/null
    rm -rf "$A"
  else
    "${APT[@]}" install -y -qq --no-install-recommends qemu-system-x86 >/dev/null
  fi
fi

# Emulators for the object-storage tests (tests/object_storage.rs): moto's S3 server,
# which verifies SigV4 signatures (PyPI), and Azurite, Microsoft's Azure Storage emulator
# (npm). Pinned; installed only when missing or at another version.
PY=$(command -v python3)
if ! "$PY" -c 'import moto, flask, sys; sys.exit(moto.__version__ != "5.2.5")' 2>/dev/null; then
  echo "== installing: moto[server]==5.2.5 (PyPI)"
  if ! "$PY" -m pip --version >/dev/null 2>&1; then
    "${APT[@]}" update -qq
    "${APT[@]}" install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  # Debian's own python3 refuses pip installs into it without this flag (PEP 668).
  flag=()
  "$PY" -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && flag=(--break-system-packages)
  "$PY" -m pip install -q "${flag[@]}" "moto[server]==5.2.5"
fi
# The language server's protocol tests (tests/lsp): pytest-lsp, an LSP client library on
# pygls. Pinned, as above.
if ! "$PY" -c 'import pytest_lsp, sys; from importlib.metadata import version; sys.exit(version("pytest-lsp") != "1.0.1")' 2>/dev/null; then
  echo "== installing: pytest-lsp==1.0.1 (PyPI)"
  flag=()
  "$PY" -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && flag=(--break-system-packages)
  "$PY" -m pip install -q "${flag[@]}" "pytest-lsp==1.0.1"
fi
if [ "$(azurite-blob --version 2>/dev/null)" != "3.35.0" ]; then
  echo "== installing: azurite@3.35.0 (npm)"
  if ! command -v npm >/dev/null; then
    "${APT[@]}" update -qq
    "${APT[@]}" install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  npm install -g --no-fund --no-audit azurite@3.35.0 >/dev/null
fi
