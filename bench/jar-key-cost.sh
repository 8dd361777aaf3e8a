#!/usr/bin/env bash
# Benchmark (not a test): what naming the agent's kept JDK classes by the jar's content costs an
# agent's start, side by side with the size and modification time it replaced and with a SHA-256 of
# the jar's bytes. Each figure is the CPU time of the one call in a fresh JVM (cold: what a start
# pays), median, min and max of N JVMs. Needs `mvn -B -q package -DskipTests` first.
#
# usage: bench/jar-key-cost.sh [runs=15]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-15}"
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
[[ -f $jar ]] || { echo "$jar is missing: run 'mvn -B -q package -DskipTests' first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
javac -XDstringConcat=inline -d "$work" bench/JarKeyCost.java
for key in size-mtime content sha256; do
  for ((i = 0; i < runs; i++)); do
    java -cp "$work:$jar" JarKeyCost "$jar" "$key" | cut -d' ' -f1
  done | sort -n | awk -v key="$key" '{ms[NR] = $1}
    END {printf "%-10s median %.3f ms CPU (min %.3f, max %.3f) over %d JVMs\n", key, ms[int((NR + 1) / 2)], ms[1], ms[NR], NR}'
done
