#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) on the corpus kept in fuzz/corpus/<target>.
#
#   fuzz/run.sh [SECONDS] [--update-corpus]
#
# Needs rustup's nightly toolchain. Installs cargo-fuzz (pinned) into target/fuzz-tools on first
# use and builds into target/fuzz; new inputs found during the run go to target/fuzz-corpus, and
# crashes to target/fuzz-artifacts/<target>/ (the script then fails, naming the input). With
# --update-corpus, the new inputs are merged into fuzz/corpus (libFuzzer keeps only those that
# add coverage), to commit. FUZZ_SANITIZER picks the sanitizer (default: none; the runtime has
# no unsafe code, so the targets look for panics and broken properties); FUZZ_DEV=1 builds
# unoptimised (about a third of the compile time, for short runs such as the test suite's).
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
secs="${1:-60}"
update="${2:-}"
cargo_fuzz_version="0.13.2"

tools="$root/target/fuzz-tools"
if ! "$tools/bin/cargo-fuzz" --version 2>/dev/null | grep -qF "$cargo_fuzz_version"; then
    cargo install cargo-fuzz --version "=$cargo_fuzz_version" --locked --root "$tools"
fi
export PATH="$tools/bin:$PATH"
export CARGO_TARGET_DIR="$root/target/fuzz"
flags=(--sanitizer "${FUZZ_SANITIZER:-none}")
if [ "${FUZZ_DEV:-}" = 1 ]; then
    flags+=(--dev)
fi

targets=$(cd fuzz_targets && ls -- *.rs | sed 's/\.rs$//')
build_start=$(date +%s)
cargo +nightly fuzz build "${flags[@]}" 2>&1 | tail -n 3
echo "fuzz: built in $(( $(date +%s) - build_start )) s"

for t in $targets; do
    corpus="corpus/$t"
    found="$root/target/fuzz-corpus/$t"
    artifacts="$root/target/fuzz-artifacts/$t/"
    mkdir -p "$corpus" "$found" "$artifacts"
    start=$(date +%s)
    log="$root/target/fuzz-artifacts/$t.log"
    if ! cargo +nightly fuzz run "${flags[@]}" "$t" "$found" "$corpus" -- \
        -max_total_time="$secs" -artifact_prefix="$artifacts" -print_final_stats=1 \
        >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz: $t FAILED after $(( $(date +%s) - start )) s; inputs in $artifacts"
        exit 1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo "?")
    echo "fuzz: $t ran $(( $(date +%s) - start )) s, $runs inputs, coverage $cov, no crash"
    if [ "$update" = "--update-corpus" ]; then
        # The smallest set of inputs that covers every edge the old corpus and the new inputs
        # reach (edges only: hit counts and comparisons would keep hundreds more).
        merged="$root/target/fuzz-merged/$t"
        rm -rf "$merged" && mkdir -p "$merged"
        cargo +nightly fuzz run "${flags[@]}" "$t" "$merged" "$corpus" "$found" -- \
            -set_cover_merge=1 -use_counters=0 -use_value_profile=0 -use_cmp=0 \
            >"$log.merge" 2>&1
        find "$corpus" -type f -delete
        cp "$merged"/* "$corpus"/
        echo "fuzz: $t corpus now $(ls "$corpus" | wc -l) inputs"
    fi
done
