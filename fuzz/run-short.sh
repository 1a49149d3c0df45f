#!/usr/bin/env bash
# Smoke fuzz: runs every fuzz target for N seconds (default 30), one after the other, and
# prints one line per target: executions, coverage, and whether it crashed.
#
#   fuzz/run-short.sh [SECONDS] [TARGET...]
#
# Uses cargo-fuzz (installed with `cargo install` when missing). libFuzzer needs -Z flags,
# which the stable toolchain accepts with RUSTC_BOOTSTRAP=1 (set here, for cargo fuzz only).
# Seeds come from seed-corpus.sh. A crash leaves its input in fuzz/artifacts/<target>/ and
# the log in fuzz/artifacts/<target>.log; the exit status is 1 when any target crashed, 2
# when the fuzzers could not be built.
set -uo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
secs="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(butane_translate ignition_config data_url partition_planner)
export RUSTC_BOOTSTRAP=1
cd "$fuzz"
if ! cargo fuzz --version >/dev/null 2>&1; then
    # crates.io is reachable here and on CI; a fresh machine gets the tool on first use.
    echo "run-short: installing cargo-fuzz" >&2
    if ! cargo install --locked cargo-fuzz >"$fuzz/build.log" 2>&1; then
        tail -n 20 "$fuzz/build.log" >&2
        echo "run-short: cargo-fuzz is not installed and could not be (cargo install cargo-fuzz)" >&2
        exit 2
    fi
fi
bash "$fuzz/seed-corpus.sh"
# -a: debug assertions (and with them overflow checks) in flint, as in the long runs.
if ! cargo fuzz build -a >"$fuzz/build.log" 2>&1; then
    tail -n 30 "$fuzz/build.log" >&2
    echo "run-short: build failed" >&2
    exit 2
fi
status=0
for t in "${targets[@]}"; do
    log="$fuzz/artifacts/$t.log"
    mkdir -p "$fuzz/artifacts/$t"
    cargo fuzz run -a "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -Eo '(#[0-9]+|DONE).*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | grep -Eo 'cov: [0-9]+ ft: [0-9]+')
    if [ $rc -eq 0 ]; then
        echo "fuzz $t: ok, ${secs}s, ${execs:-?} execs, ${cov:-cov ?}"
    else
        status=1
        crash=$(grep -Eo 'Test unit written to [^ ]+' "$log" | tail -1)
        echo "fuzz $t: CRASH (exit $rc), ${execs:-?} execs, ${cov:-cov ?}; ${crash:-see $log}"
    fi
done
exit $status
