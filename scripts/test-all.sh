#!/usr/bin/env bash
# Runs every tier of flint's tests on a fresh Debian bookworm machine (as root), installing
# what the tests need when it is missing. CI calls exactly this script.
#
# Every tier runs even when an earlier one fails; each tier's time is printed, and the run
# always ends with one line, `all tiers: N passed, M failed` (exit 1 when M > 0).
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
times=()
failed_tiers=()

# tier NAME COMMAND...: runs the command with its output shown and kept in the tier's log;
# a tier whose command fails is counted as failed, whatever its log says.
tier() {
  local name=$1
  shift
  echo "== $name"
  local start=$SECONDS
  "$@" 2>&1 | tee "$logs/$name.log"
  local rc=${PIPESTATUS[0]}
  times+=("$name $((SECONDS - start)) s")
  if [ "$rc" != 0 ]; then
    failed_tiers+=("$name")
    echo "== $name: FAILED (exit $rc)"
  fi
}

# The Debian packages the tests use (storage tools, QEMU, a kernel), when missing.
tier deps ./scripts/install-deps.sh
if ! command -v cargo >/dev/null; then
  echo "cargo (the Rust toolchain) is required" >&2
  echo "all tiers: 0 passed, 1 failed"
  exit 1
fi

tier format cargo fmt --all --check
tier lints cargo clippy --workspace --all-targets --release -- -D warnings
tier cargo-tests cargo test --workspace --release
tier lsp ./tests/lsp/run
tier vm ./initramfs/run-vm-tests
tier dracut ./initramfs/test-dracut-module
tier refmods ./initramfs/test-reference-modules
tier fuzz ./fuzz/run-short.sh "${FUZZ_SECONDS:-20}"

echo "== tier times: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"
[ ${#failed_tiers[@]} = 0 ] || echo "== failed tiers: ${failed_tiers[*]}"

# One closing line for the whole run: cargo's test results, the VM scenarios, the fuzz
# targets, and one failure for each failed tier whose log counts none of its own.
awk -v failed="${failed_tiers[*]}" '
  FNR == 1 { tier = FILENAME; sub(/.*\//, "", tier); sub(/\.log$/, "", tier) }
  /^test result:/ {
    for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) { f += $i; own[tier] += $i } }
  }
  /^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3; own[tier] += $3 }
  /^fuzz [a-z_]+: ok/ { p++ }
  /^fuzz [a-z_]+: CRASH/ { f++; own[tier]++ }
  /^run-short: .*(failed|could not)/ { f++; own[tier]++ }
  END {
    n = split(failed, names, " ")
    for (i = 1; i <= n; i++) if (!own[names[i]]) f++
    printf "all tiers: %d passed, %d failed\n", p, f
    exit (f > 0)
  }' "$logs"/*.log
