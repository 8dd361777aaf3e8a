#!/usr/bin/env bash
# The memory watch's cost per sample (not a test): bench/WatchCost.java under glibc, under the
# bundled jemalloc, and with the agent tracking handles. Needs a built jar:
#
#   mvn -B -q install -DskipTests && bench/watch-cost.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
jar=java/nativemem/target/nativemem-0.1.0.jar
ours=java/nativemem/target/classes/dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so
run() { java "$@" -cp "$jar" bench/WatchCost.java "$seconds" 2>/dev/null; }
run
LD_PRELOAD="$PWD/$ours" run
run -javaagent:"$jar"=level=full
