#!/usr/bin/env bash
# Runs every tier of flint's tests on a fresh Debian bookworm machine (as root), installing
# what the tests need when it is missing. CI calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# Debian packages the tests use, by the command that shows they are there.
need=()
for pair in python3:python3 awk:gawk bash:bash /usr/sbin/in.tftpd:tftpd-hpa; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing: ${need[*]}"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}"
fi
command -v cargo >/dev/null || { echo "cargo (the Rust toolchain) is required" >&2; exit 1; }
[ -d ../shared ] || { echo "../shared (the conformance corpora) must sit beside the checkout" >&2; exit 1; }

echo "== format and lints"
cargo fmt --check
cargo clippy --all-targets --release -- -D warnings

echo "== unit, integration and conformance tests"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --release 2>&1 | tee "$log"

# One closing line for the whole run.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "all tiers: %d passed, %d failed\n", p, f }' "$log"
