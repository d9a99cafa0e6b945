#!/usr/bin/env bash
# Instruction-level profile of mcp-tasks's task paths, the slowest ones in the benchmark.
# callgrind counts instructions, so the noise of a shared machine does not matter.
#
#   bench/profile.sh [lifecycle|elicit|store|inline ...]     (default: lifecycle elicit)
#
# It builds the benchmark with line tables in its own target dir (so inlined frames have names
# and the normal release build is left alone), runs the stdio mcp-tasks server under callgrind
# with the same driver the benchmark uses, and prints the top functions by inclusive cost.
# Output: target/bench/profile/callgrind.<scenario>.<pid> (open with kcachegrind or
# callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
scenarios=("${@:-lifecycle elicit}")
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
export CARGO_TARGET_DIR=target/profiling
cargo build --release --quiet -p mcp-tasks-bench --bins
out=target/bench/profile
mkdir -p "$out"
for scenario in ${scenarios[*]}; do
  rm -f "$out"/callgrind."$scenario".*
  target/profiling/release/mcp-tasks-bench --quick --only "$scenario" --transport stdio \
    --servers mcp-tasks --tasks 3000 --stored 20000 --out "$out/$scenario.json" \
    --wrap "valgrind --tool=callgrind --quiet --callgrind-out-file=$out/callgrind.$scenario.%p" \
    > "$out/$scenario.txt"
  file=$(ls -t "$out"/callgrind."$scenario".* | head -1)
  echo "== $scenario: top functions by inclusive instructions ($file)"
  callgrind_annotate --inclusive=yes --threshold=99 "$file" 2>/dev/null \
    | sed -n '/^Ir/,$p' | head -60
done
