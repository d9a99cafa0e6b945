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
#
# For `lifecycle` and `elicit` it also prints the server's instructions per task (per in-task
# elicitation round trip for `elicit`: create, poll to input_required, tasks/update, poll to
# completed), free of start-up: the scenario runs twice, with PROFILE_TASKS_LOW (default 1000)
# and PROFILE_TASKS (default 3000) tasks at 64 callers, each on a fresh server, and the figure is
# the difference of the two servers' instruction totals divided by the difference in tasks. Only
# the 64-caller server's profile counts (the 1-caller phase runs on a server of its own). The
# round trips per task of both runs are printed too: a poll more per task would show up as cost.
#
# PROFILE_SERVER=mcp-metrics or mcp-otel profiles that server instead (built with `--features
# telemetry`; mcp-otel's export thread counts too, its sink is the bench's), and
# PROFILE_TRACEPARENT=1 puts a `traceparent` in every request's `_meta` (`--traceparent`).
# PROFILE_BIN=DIR profiles the binaries in DIR (a copy of target/profiling/release made before a
# change, say) and builds nothing: the before and after of one change on the same inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scenarios=("${@:-lifecycle elicit}")
low=${PROFILE_TASKS_LOW:-1000}
high=${PROFILE_TASKS:-3000}
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
export CARGO_TARGET_DIR=target/profiling
server=${PROFILE_SERVER:-mcp-tasks}
features=()
[ "$server" = mcp-tasks ] || features=(--features telemetry)
traceparent=()
[ "${PROFILE_TRACEPARENT:-0}" = 1 ] && traceparent=(--traceparent)
bin=${PROFILE_BIN:-target/profiling/release}
[ -n "${PROFILE_BIN:-}" ] || cargo build --release --quiet -p mcp-tasks-bench --bins "${features[@]}"
out=target/bench/profile
mkdir -p "$out"

# run SCENARIO TASKS TAG: profiles one run; leaves its (last) server profile in $out/callgrind.TAG.
run() {
  local scenario=$1 tasks=$2 tag=$3
  rm -f "$out"/callgrind."$tag".*
  "$bin"/mcp-tasks-bench --quick --only "$scenario" --transport stdio \
    --servers "$server" --tasks "$tasks" --stored 20000 --out "$out/$tag.json" "${traceparent[@]}" \
    --wrap "valgrind --tool=callgrind --quiet --callgrind-out-file=$out/callgrind.$tag.%p" \
    > "$out/$tag.txt"
  # The phase at 64 callers runs last, on its own server: the newest profile.
  ls -t "$out"/callgrind."$tag".* | head -1
}

# totals FILE: the instructions the profile counted.
totals() { sed -n 's/^totals: *//p' "$1"; }

# trips TAG SCENARIO: round trips per task at 64 callers in that run.
trips() {
  jq -r --arg s "$2" --arg k "$server" '.raw | to_entries[] | select(.key == ($s + "/stdio/c64"))
    | .value[$k] | (.trips // .trips_per_task)' "$out/$1.json"
}

for scenario in ${scenarios[*]}; do
  file=$(run "$scenario" "$high" "$scenario")
  case $scenario in
    lifecycle | elicit)
      low_file=$(run "$scenario" "$low" "$scenario-low")
      a=$(totals "$low_file")
      b=$(totals "$file")
      per=$(((b - a) / (high - low)))
      unit=$([ "$scenario" = elicit ] && echo "elicitation round trip" || echo "task")
      echo "== $scenario: $per instructions per $unit (server totals $a at $low tasks, $b at $high; round trips per task $(trips "$scenario-low" "$scenario") and $(trips "$scenario" "$scenario"))"
      ;;
  esac
  echo "== $scenario: top functions by inclusive instructions ($file)"
  callgrind_annotate --inclusive=yes --threshold=99 "$file" 2>/dev/null \
    | sed -n '/^Ir/,$p' | sed -n 1,60p
done
