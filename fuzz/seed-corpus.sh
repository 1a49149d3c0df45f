#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seed inputs from the repository (its own cases and the
# conformance corpora): Butane documents, Ignition configs, data URLs. Existing corpus files are kept.
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz")"
corpus="$fuzz/corpus"
mkdir -p "$corpus"/{butane_translate,ignition_config,data_url,partition_planner}

# Seed files are named after their path so that re-seeding does not duplicate them.
seed() { # target, files...
    local t="$1"; shift
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        cp -f "$f" "$corpus/$t/seed-$(printf '%s' "${f#"$root"/}" | tr '/' '_')"
    done
}

mapfile -t bu < <(find "$root/translate-tests" "$root/conformance/butane" -name '*.bu' 2>/dev/null)
seed butane_translate "${bu[@]}"
mapfile -t ign < <(find "$root/fixtures" "$root/conformance/ignition" \
    \( -name '*.ign' -o -name '*.json' \) 2>/dev/null)
seed ignition_config "${ign[@]}"

# Data URLs and gzip streams, by hand.
d="$corpus/data_url"
printf 'data:,Hello%%2C%%20world!' >"$d/seed-plain"
printf 'data:;base64,aGk=' >"$d/seed-base64"
printf 'data:text/plain;charset=utf-8;base64,aGk' >"$d/seed-base64-nopad"
printf 'data:;base64,a-_k' >"$d/seed-base64-url"
printf 'data:;base64,%%61%%47k%%3D' >"$d/seed-base64-percent"
printf 'data:,%%zz%%4%%' >"$d/seed-bad-percent"
printf 'data:text/plain' >"$d/seed-no-comma"
printf 'http://example.com/x' >"$d/seed-not-data"
printf 'hello\n' | gzip -9 >"$d/seed-gzip"
{ printf 'a\n' | gzip; printf 'b\n' | gzip; } >"$d/seed-gzip-multi"
head -c 65536 /dev/zero | gzip -9 >"$d/seed-gzip-zeros"

# The planner's input is structured (arbitrary); a few byte strings get it started.
p="$corpus/partition_planner"
printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' >"$p/seed-zeros"
printf '\1\3\5\7\2\4\6\10\1\3\5\7\2\4\6\10\1\3\5\7\2\4\6\10\1\3\5\7\2\4\6\10' >"$p/seed-small"
head -c 256 /dev/zero | tr '\0' '\2' >"$p/seed-twos"
