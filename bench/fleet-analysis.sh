#!/usr/bin/env bash
# Benchmark (not a test): heap profile analysis in bounded memory, one huge dump and many dumps.
#
# Makes dumps with the C workload of the Rust tests under Debian's jemalloc (lg_prof_sample:9),
# as bench/heap-profile-analysis.sh does, then measures wall seconds and peak RSS
# (/usr/bin/time; CPU seconds too, user + system: on a shared machine the wall time also counts
# waiting for a core) of the `profile_report` example:
#   1. one large dump (tree depth 19 by default: ~480k stacks, ~230 MB; the workload holds at
#      most 2^20 blocks, so 19 is its largest depth), text report:
#        before: the dump held whole, address by address (`--whole`, the previous analysis);
#        after:  streamed and merged by function names (what `report` runs now);
#      and the flame graph (svg) and pprof, streamed;
#   2. merges of 1, N/2 and N dumps of N separate processes (depth 14): memory should stay flat
#      as N grows (it grows with distinct stacks, and these processes share theirs).
# Prints Markdown tables.
#
# usage: bench/fleet-analysis.sh [depth=19] [processes=20]
set -euo pipefail
cd "$(dirname "$0")/.."
depth="${1:-19}"
processes="${2:-20}"
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nativemem/cargo-target}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -g -O1 -fno-omit-frame-pointer -o "$work/heap_workload" rust/nativemem/tests/workload/heap_workload.c
dump() { # path depth
  LD_PRELOAD="$jemalloc" MALLOC_CONF="prof:true,lg_prof_sample:9" "$work/heap_workload" "$1" "$2"
}
dump "$work/big.heap" "$depth"
mkdir "$work/fleet"
for ((i = 0; i < processes; i++)); do dump "$(printf '%s/fleet/p%03d.heap' "$work" "$i")" 14; done

cargo build -q --release -p nativemem --example profile_report
ours="$CARGO_TARGET_DIR/release/examples/profile_report"

measure() { # label command... → a table row: wall seconds, CPU seconds, peak RSS
  local label="$1"
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null
  read -r seconds user system kib <"$work/time"
  printf '| %s | %.2f | %.2f | %d MiB |\n' "$label" "$seconds" "$(echo "$user + $system" | bc -l)" \
    "$((kib / 1024))"
}

stacks="$(grep -c '^@' "$work/big.heap")"
size="$(du -h "$work/big.heap" | cut -f1)"
echo "1. one dump: $stacks stacks, $size, tree depth $depth; $(nproc) cores"
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| analysis | seconds | CPU s | peak RSS |"
echo "|---|---:|---:|---:|"
measure "before: text report, dump held whole (--whole)" "$ours" "$work/big.heap" --whole
measure "after: text report, streamed" "$ours" "$work/big.heap"
measure "after: flame graph (svg), streamed" "$ours" "$work/big.heap" --format svg -o "$work/big.svg"
measure "after: pprof, streamed" "$ours" "$work/big.heap" --format pprof -o "$work/big.pb.gz"
echo
per="$(du -h "$work/fleet/p000.heap" | cut -f1)"
echo "2. merged dumps of separate processes (depth 14, $(grep -c '^@' "$work/fleet/p000.heap") stacks and $per each)"
echo
echo "| dumps merged (text report) | seconds | CPU s | peak RSS |"
echo "|---|---:|---:|---:|"
half=$((processes / 2))
measure "1" "$ours" "$work/fleet/p000.heap"
measure "$half" "$ours" $(ls "$work"/fleet/*.heap | head -n "$half")
measure "$processes (the directory)" "$ours" "$work/fleet" --by-process
