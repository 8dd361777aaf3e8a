#!/usr/bin/env bash
# How late the memory watch's capture starts under a full-GC storm (not a test): bench/WatchGcStorm
# in a child v1 memory cgroup of 1 GiB, a 256 MiB Parallel-GC heap 75% full of live data churned
# by two threads, against the same run without the churn. Needs root and a built jar:
#
#   mvn -B -q install -DskipTests && bench/watch-gc-storm.sh [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
jar=java/nativemem/target/nativemem-0.1.0.jar
limit=$((1 << 30))
own=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
cg="/sys/fs/cgroup/memory${own%/}/nativemem-gc-storm-$$"
mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo "$limit" > "$cg/memory.limit_in_bytes"
for i in $(seq 1 "$runs"); do
  for mode in calm storm; do
    sh -c "echo \$\$ > $cg/cgroup.procs && exec java -Xmx256m -XX:+UseParallelGC \
      -XX:MaxDirectMemorySize=2g -cp $jar bench/WatchGcStorm.java $limit $mode" 2>/tmp/watch-gc-storm-$mode.err \
      || echo "$mode: failed, see /tmp/watch-gc-storm-$mode.err"
  done
done
