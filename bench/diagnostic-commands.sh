#!/usr/bin/env bash
# Benchmark (not a test): one diagnostic command run in-process three ways: through the JVM's
# management interface (what nativemem runs), the DiagnosticCommand MBean (java.management's route), and
# the JVM's own attach socket; with NMT on (VM.native_memory summary) and off (GC.heap_info). Median
# µs per call in one JVM each. Needs `mvn -B -q package -DskipTests` first.
#
# usage: bench/diagnostic-commands.sh [calls=200]
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-200}"
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
[[ -f $jar ]] || { echo "$jar is missing: run 'mvn -B -q package -DskipTests' first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
javac -cp "$jar" -d "$work" bench/DiagnosticCommandRoutes.java
for nmt in summary off; do
  (cd "$work" && java -XX:NativeMemoryTracking=$nmt -cp "$work:$jar" DiagnosticCommandRoutes "$calls")
done
