#!/usr/bin/env bash
# Benchmark (not a test): analyze() + writeFlameGraph() + writePprof() as three calls (three
# analyses of the dump) against one ProfileRequest asking for the same three outputs (one analysis),
# side by side in one JMH run, on a real dump of about 100k stacks.
#
# Makes the dump with the C workload of the Rust tests (tree depth 17: 2^17 leaf stacks) under
# Debian's jemalloc with lg_prof_sample:9, then runs ProfileRequestBenchmark. Needs
# `mvn -B -q install -DskipTests` first (the jar, benchmarks/target/benchmark.classpath).
#
# usage: bench/profile-request.sh [depth=17] [extra JMH options...]
set -euo pipefail
cd "$(dirname "$0")/.."
depth="${1:-17}"
shift || true
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -g -O1 -fno-omit-frame-pointer -o "$work/heap_workload" rust/nativemem/tests/workload/heap_workload.c
LD_PRELOAD="$jemalloc" MALLOC_CONF="prof:true,lg_prof_sample:9" \
  "$work/heap_workload" "$work/big.heap" "$depth"
echo "dump: $(grep -c '^@' "$work/big.heap") stacks, $(du -h "$work/big.heap" | cut -f1); $(nproc) cores"

# This worktree's jar first: the class path file names the copy in ~/.m2, which another build
# may have replaced.
java -cp "java/nativemem/target/nativemem-0.1.0.jar:$(cat benchmarks/target/benchmark.classpath):benchmarks/target/classes" \
  org.openjdk.jmh.Main ProfileRequestBenchmark -p dump="$work/big.heap" "$@"
