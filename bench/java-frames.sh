#!/usr/bin/env bash
# Java frames in heap profiles (not a test): (1) the cost per sampled allocation, every allocation
# sampled, frames off vs on, at two stack depths; (2) a stress run for crashes (threads starting and
# stopping, GC, deoptimization, class unloading, frames toggled, dumps meanwhile), then each dump
# analysed and read by jeprof. The allocator benchmark (bench/allocators.sh) has the throughput row.
#
#   mvn -B -q package -DskipTests && bench/java-frames.sh [stress seconds, default 120]
#
# Needs Debian's libjemalloc2 and libjemalloc-dev (jeprof).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
[[ -f $jar ]] || { echo "$jar is missing: run 'mvn -B -q package -DskipTests' first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" -cp "$jar" bench/ZlibRoundTrip.java bench/JavaFramesCost.java \
  bench/JavaFramesStress.java
jemalloc=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=prof:true,prof_active:false)

echo "Cost per sampled allocation (Debian jemalloc, every allocation sampled, 5 rounds each way):"
for depth in 0 100; do
  out=$("${jemalloc[@]}" java -cp "$work/classes:$jar" JavaFramesCost 5 20000 "$depth")
  echo "  $depth extra frames: $(awk '/^OFF_NS/{o=$2} /^EXTRA_NS/{e=$2} /^SAMPLES/{s=$2} END {printf "%d samples, %.2f us per sample without Java frames, +%.2f us with them", s, o/1000, e/1000}' <<<"$out")"
done

echo
echo "Stress, $seconds s:"
mkdir -m 700 "$work/dumps"
set +e
"${jemalloc[@]}" java -Xmx512m -cp "$work/classes:$jar" JavaFramesStress "$seconds" "$work/dumps" \
  >"$work/stress.out" 2>&1
status=$?
set -e
cat "$work/stress.out"
echo "exit status $status$( ((status == 0)) || echo ' (CRASH or failure)')"
ls "$work"/hs_err_pid*.log 2>/dev/null && exit 1
for dump in "$work"/dumps/*.heap; do
  frames=$(java -jar "$jar" analyze --format collapsed "$dump" | grep -c 'JavaFramesStress' || true)
  stale=$(grep -o '"unresolved"' "$dump.symbols/java-frames.json" | wc -l)
  jeprof_total=$(jeprof --text "$(command -v java)" "$dump" 2>/dev/null | awk '/^Total:/{print $2, $3}')
  echo "  $(basename "$dump"): $frames stacks through JavaFramesStress, $stale frames of unloaded classes, jeprof total $jeprof_total"
done
((status == 0))
