#!/usr/bin/env bash
# Benchmark (not a test): what the agent adds to a Flink job's start and run. The Flink 2.2 test
# job (tests-apps/flink-2.2, RestartingKeyedJob with no restart: a MiniCluster, which starts a
# JobManager and one TaskManager in the JVM, then a keyed job on the embedded RocksDB state backend
# over 120,000 records, manual compaction on) runs to its end, without the agent and with each agent
# jar given at its default level, in turn (alternating pairs): CPU seconds (user + system of all the
# JVM's threads) and wall seconds. Prints the medians, each agent's overhead as the median of its
# per-pair ratios, and the range of those ratios (how noisy the host was). A run that fails (Flink's
# own compaction race can abort RocksDB at close: see tests-apps/flink-2.2) is left out of its pair.
#
# usage: bench/flink-start.sh [pairs=9] [agent jar...]
#   default agent jar: java/nativemem/target/nativemem-0.1.0.jar (this build)
# Needs: mvn -B -q install -DskipTests -pl java/nativemem,java/nativemem-junit,tests-apps,tests-apps/harness -am,
#        then mvn -B -q package -DskipTests -pl tests-apps/flink-2.2
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
pairs="${1:-9}"
shift || true
agents=("$@")
[[ ${#agents[@]} -gt 0 ]] || agents=("$PWD/java/nativemem/target/nativemem-0.1.0.jar")
app=tests-apps/flink-2.2/target
for f in "$app/nativemem-tests-apps-flink-2.2-0.1.0.jar" "$app/job.classpath" "${agents[@]}"; do
  [[ -f $f ]] || { echo "$f is missing: build it first (see the header of $0)" >&2; exit 1; }
done
# The job's own class path without any nativemem jar, so the agent jar given is the one measured.
cp="$app/nativemem-tests-apps-flink-2.2-0.1.0.jar:$(tr ':' '\n' <"$app/job.classpath" | grep -v '/nativemem' | paste -sd:)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run=(-Xmx512m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" dev.nativemem.apps.flink.RestartingKeyedJob 0)
# The agent's extraction of its library and of its JDK classes happens once per jar build.
for a in "${agents[@]}"; do java -javaagent:"$a" "${run[@]}" >/dev/null 2>&1 || true; done

echo "Flink 2.2 MiniCluster job (JobManager + one TaskManager, RocksDB state) to its end;" \
  "$pairs alternating pairs; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "$(java -version 2>&1 | head -1)"
echo
echo "| agent | CPU s without | CPU s with | wall s without | wall s with | CPU vs without (median of pair ratios, range) | wall vs without | failed runs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for a in "${agents[@]}"; do
  : >"$work/none"
  : >"$work/agent"
  : >"$work/ratio"
  failed=0
  for ((i = 0; i < pairs; i++)); do
    read -r c0 w0 < <(cpu_wall "$work/out" "$work/err" java "${run[@]}")
    read -r c w < <(cpu_wall "$work/out" "$work/err" java -javaagent:"$a" "${run[@]}")
    if [[ $c0 == - || $c == - ]]; then
      failed=$((failed + 1))
      continue
    fi
    echo "$c0 $w0" >>"$work/none"
    echo "$c $w" >>"$work/agent"
    awk -v c="$c" -v c0="$c0" -v w="$w" -v w0="$w0" 'BEGIN { printf "%.4f %.4f\n", c / c0, w / w0 }' >>"$work/ratio"
  done
  cr=$(cut -d' ' -f1 "$work/ratio" | median)
  wr=$(cut -d' ' -f2 "$work/ratio" | median)
  lo=$(cut -d' ' -f1 "$work/ratio" | sort -n | head -1)
  hi=$(cut -d' ' -f1 "$work/ratio" | sort -n | tail -1)
  awk -v n="$(basename "$a")" -v c0="$(cut -d' ' -f1 "$work/none" | median)" \
    -v c="$(cut -d' ' -f1 "$work/agent" | median)" -v w0="$(cut -d' ' -f2 "$work/none" | median)" \
    -v w="$(cut -d' ' -f2 "$work/agent" | median)" -v cr="$cr" -v lo="$lo" -v hi="$hi" -v wr="$wr" -v f="$failed" \
    'BEGIN { printf "| %s | %.3f | %.3f | %.3f | %.3f | %+.1f%% (%+.1f%% … %+.1f%%) | %+.1f%% | %d |\n", n, c0, c, w0, w, (cr - 1) * 100, (lo - 1) * 100, (hi - 1) * 100, (wr - 1) * 100, f }'
done
