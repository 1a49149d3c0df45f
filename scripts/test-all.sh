#!/usr/bin/env bash
# Runs every tier of flint's tests on a fresh Debian bookworm machine (as root), installing
# what the tests need when it is missing. CI calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# The Debian packages the tests use (storage tools, QEMU, a kernel), when missing.
./scripts/install-deps.sh
command -v cargo >/dev/null || { echo "cargo (the Rust toolchain) is required" >&2; exit 1; }

echo "== format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings

echo "== unit, integration and conformance tests"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --release 2>&1 | tee "$log"

echo "== VM tests (QEMU, TCG)"
vmlog=$(mktemp)
trap 'rm -f "$log" "$vmlog"' EXIT
set +e
./initramfs/run-vm-tests 2>&1 | tee "$vmlog"
vm_rc=${PIPESTATUS[0]}
echo "== dracut module (initramfs built with dracut, units checked, booted)"
./initramfs/test-dracut-module 2>&1 | tee -a "$vmlog"
dracut_rc=${PIPESTATUS[0]}
[ "$dracut_rc" = 0 ] || vm_rc=$dracut_rc
echo "== fuzz targets, short runs (the long runs are in fuzz/README.md)"
./fuzz/run-short.sh "${FUZZ_SECONDS:-20}" 2>&1 | tee -a "$vmlog"
fuzz_rc=${PIPESTATUS[0]}
[ "$fuzz_rc" = 0 ] || vm_rc=$fuzz_rc
set -e

# One closing line for the whole run: cargo's tiers plus the VM scenarios.
awk -v vmrc="$vm_rc" '
  /^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
  /^[0-9]+ passed, [0-9]+ failed$/ { vp += $1; vf += $3; seen = 1 }
  /^fuzz [a-z_]+: ok/ { vp++ }
  /^fuzz [a-z_]+: CRASH/ { vf++ }
  /^run-short: .*(failed|could not)/ { vf++ }
  END {
    if (!seen && vmrc != 0) vf = 1
    printf "all tiers: %d passed, %d failed\n", p + vp, f + vf
    exit (f + vf > 0)
  }' "$log" "$vmlog"
