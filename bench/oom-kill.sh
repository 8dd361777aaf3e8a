#!/usr/bin/env bash
# The memory watch against the kernel's OOM killer (not a test): runs tests' OomKillTest N times
# (default 10) and prints how many runs left a complete bundle naming the planted leak before
# the kill, and for each run how long before the kill the bundle was complete and the size of the
# verdict block the JVM wrote to its log. Needs root (a child v1 memory cgroup) and a built tree:
#
#   mvn -B -q install -DskipTests && bench/oom-kill.sh [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
passed=0
for i in $(seq 1 "$runs"); do
  if mvn -B -q -o surefire:test -pl tests -Dtest=OomKillTest -Dsurefire.failIfNoSpecifiedTests=false \
      >"/tmp/oom-kill-run-$i.log" 2>&1; then
    passed=$((passed + 1))
    result=ok
  else
    result="FAILED (log: /tmp/oom-kill-run-$i.log)"
  fi
  report=tests/target/surefire-reports/dev.nativemem.tests.OomKillTest.txt
  if grep -q "Skipped: 1" "$report" 2>/dev/null; then
    echo "run $i: skipped (no writable cgroup v1 memory controller): see $report"
    exit 2
  fi
  # What OomKillTest printed: how long before the kill the bundle was complete, the log block's size.
  figures=$(grep -ho "bundle complete [0-9]* ms before the kill (capture [0-9]* ms)\|newest bundle captured [0-9]* ms before the kill\|verdict block in the log: [0-9]* bytes" \
    "/tmp/oom-kill-run-$i.log" | sort -u | paste -sd ";" - | sed "s/;/; /g")
  echo "run $i: $result${figures:+ ($figures)}"
done
echo "bundle written and naming the planted leak before the OOM kill: $passed/$runs"
