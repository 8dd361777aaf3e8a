#!/usr/bin/env bash
# The continuous export's cost per export (not a test): bench/ExportCost.java under Debian's
# jemalloc, OTLP and Pyroscope bodies to a local stub. Needs a built jar:
#
#   mvn -B -q install -DskipTests && bench/export-cost.sh [exports, default 10] [interval s, default 2]
set -euo pipefail
cd "$(dirname "$0")/.."
exports="${1:-10}"
interval="${2:-2}"
jar=java/nativemem/target/nativemem-0.1.0.jar
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
for protocol in otlp pyroscope; do
  LD_PRELOAD=$jemalloc MALLOC_CONF=prof:true,prof_active:false \
    java -cp "$jar" bench/ExportCost.java "$protocol" "$exports" "$interval" 2>/dev/null
done
