#!/usr/bin/env bash
# Benchmark (not a test): the cost of level=full per tracked creation, two agent jars side by
# side (before and after a change to the stack capture) against no agent. JMH's
# HandleTrackingBenchmark, one fork per cell, in alternating rounds (no agent, jar A, jar B);
# prints each round's ns per create+close and ratios to no agent, then the medians.
#
# usage: bench/stack-capture.sh <jar A> <jar B> [rounds=3]
#   (build the benchmarks first: mvn -B -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
need_jars "bench/stack-capture.sh <jar A> <jar B> [rounds=3]" "${1:-}" "${2:-}"
a="$(realpath "$1")" b="$(realpath "$2")" rounds="${3:-3}"
cp="$(cat benchmarks/target/benchmark.classpath):benchmarks/target/classes"

score() { # benchmark agent-argument...
  java -Djmh.ignoreLock=true -cp "$cp" org.openjdk.jmh.Main "HandleTrackingBenchmark.$1" \
    -f 1 -wi 2 -w 1s -i 3 -r 1s ${2:+-jvmArgsAppend "$2"} -rf csv -rff "$work/r.csv" >/dev/null
  python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1])))[1]; print("%.1f" % float(r[4]))' \
    "$work/r.csv"
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| benchmark | round | no agent ns | A full ns | B full ns | A ratio | B ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for bench in inflater columnFamilyOptions; do
  ra=() rb=()
  for round in $(seq 1 "$rounds"); do
    none="$(score "$bench" "")"
    sa="$(score "$bench" "-javaagent:$a=level=full")"
    sb="$(score "$bench" "-javaagent:$b=level=full")"
    ra+=("$(python3 -c "print('%.2f' % ($sa / $none))")")
    rb+=("$(python3 -c "print('%.2f' % ($sb / $none))")")
    echo "| $bench | $round | $none | $sa | $sb | ${ra[-1]} | ${rb[-1]} |"
  done
  median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
  echo "| $bench | median | | | | $(median "${ra[@]}") | $(median "${rb[@]}") |"
done
