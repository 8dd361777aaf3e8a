#!/usr/bin/env bash
# The continuous export's cost to the whole JVM (not a test): the allocator benchmark's RocksDB +
# zlib workload (bench/AllocatorWorkload.java, 2 threads) under the bundled jemalloc sampling every
# 512 KiB with Java frames, run in pairs side by side, alternating A B A B:
#   A: the agent exporting OTLP every <interval> s to a local sink (bench/ExportSink.java, its own
#      process, so its CPU is not counted);
#   B: the same agent, sampling and Java frames, export off;
#   C (with a third argument "c"): no nativemem at all (glibc, no agent), for scale.
# Each run measures the operations per CPU-second of the whole JVM (user + sys of every thread,
# getProcessCpuTime, as /proc/<pid>/stat counts it) over a window of <seconds>: CPU per operation
# A/B is the whole JVM's CPU with export against without, for the same work. The machine may be
# shared and noisy: the table gives the median and range of the per-pair ratios, not absolute times.
# At another interval the export's share scales with the exports per minute:
# (A/B - 1) x <interval> / 60 at the default 60 s.
#
#   bench/export-workload-cost.sh [pairs, default 5] [seconds per run, default 30] [c]
#
# Needs the core jar (java/nativemem/target/nativemem-0.1.0.jar) and rocksdbjni in ~/.m2 (a Maven
# build of the project fetches both). Default: about 7 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-5}"
seconds="${2:-30}"
baseline="${3:-}"
interval=10
threads=2
jar=$PWD/java/nativemem/target/nativemem-0.1.0.jar
rocks_version=$(sed -n 's:.*<rocksdbjni.version>\(.*\)</rocksdbjni.version>.*:\1:p' pom.xml)
rocks="$HOME/.m2/repository/org/rocksdb/rocksdbjni/$rocks_version/rocksdbjni-$rocks_version-linux64.jar"
[[ -f "$rocks" ]] || mvn -B -q dependency:get -Dartifact="org.rocksdb:rocksdbjni:$rocks_version:jar:linux64" >/dev/null
work=$(mktemp -d)
sink_pid=""
cleanup() { [[ -n "$sink_pid" ]] && kill "$sink_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

unzip -q -o -j "$jar" dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so -d "$work"
ours="$work/libnativemem_jemalloc.so"
javac -d "$work/classes" -cp "$jar:$rocks" bench/Measurement.java bench/ZlibRoundTrip.java bench/AllocatorWorkload.java

java bench/ExportSink.java >"$work/sink.port" 2>"$work/sink.err" &
sink_pid=$!
for _ in $(seq 100); do [[ -s "$work/sink.port" ]] && break; sleep 0.1; done
port=$(head -c 6 "$work/sink.port" | tr -cd 0-9)
[[ -n "$port" ]] || { echo "the sink did not start:" >&2; cat "$work/sink.err" >&2; exit 1; }

# shellcheck source=bench/common.sh
source bench/common.sh

sampling=(env "LD_PRELOAD=$ours" "MALLOC_CONF=prof_active:true,lg_prof_sample:19")
agent_a="-javaagent:$jar=level=off,export=otlp,export.endpoint=http://127.0.0.1:$port,export.interval=${interval}s"
agent_b="-javaagent:$jar=level=off,export=off"

# run <name> <command prefix...> -- <jvm args...>:
# prints "ops_per_cpu_s exports export_bytes export_threads_cpu_ns process_cpu_ns"
run() {
  local name=$1; shift
  local pre=() out
  while [[ $1 != -- ]]; do pre+=("$1"); shift; done
  shift
  out=$(env -u LD_PRELOAD -u MALLOC_CONF "${pre[@]}" java -Xmx1g "$@" \
    -cp "$work/classes:$jar:$rocks" AllocatorWorkload "$threads" "$seconds" 2>"$work/stderr") || {
    echo "failed: $name" >&2; cat "$work/stderr" >&2; echo "- - - - -"; return; }
  echo "$(awk '/^OPS_PER_CPU_SECOND/{print $2}' <<<"$out") $(awk '/^EXPORTS/{print $2}' <<<"$out") $(awk '/^EXPORT_BYTES/{print $2}' <<<"$out") $(awk '/^EXPORT_THREADS_CPU_NS/{print $2}' <<<"$out") $(awk '/^PROCESS_CPU_NS/{print $2}' <<<"$out")"
}

ratios_ab="" ratios_ac="" ratios_bc="" shares="" sent=0 bytes=0 export_ns=0
for pair in $(seq "$pairs"); do
  read -r ea n b tn pn <<<"$(run A "${sampling[@]}" -- "$agent_a" -Dbench.javaFrames=true -Dbench.export=true)"
  read -r eb _ _ <<<"$(run B "${sampling[@]}" -- "$agent_b" -Dbench.javaFrames=true)"
  # CPU per operation A/B = (ops per CPU-second of B) / (that of A)
  r=$(ratio "$eb" "$ea"); ratios_ab="$ratios_ab ${r/n\/a/-}"
  if [[ $n =~ ^[0-9]+$ && $n -gt 0 ]]; then
    sent=$((sent + n)); bytes=$((bytes + b)); export_ns=$((export_ns + tn))
    shares="$shares $(ratio "$tn" "$pn")"
  fi
  line="pair=$pair A: ops/cpu-s=$ea exports=$n bytes=$b export-threads/process CPU=$(ratio "$tn" "$pn")  B: ops/cpu-s=$eb  CPU A/B=$r"
  if [[ -n "$baseline" ]]; then
    read -r ec _ _ <<<"$(run C -- )"
    rc=$(ratio "$ec" "$ea"); ratios_ac="$ratios_ac ${rc/n\/a/-}"
    rb=$(ratio "$ec" "$eb"); ratios_bc="$ratios_bc ${rb/n\/a/-}"
    line="$line  C: ops/cpu-s=$ec  CPU A/C=$rc B/C=$rb"
  fi
  echo "$line" >&2
done

spread() { tr ' ' '\n' | grep -v '^-\?$' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo " to " hi }'; }
med=$(median <<<"$ratios_ab")
echo "Whole-JVM CPU per operation, $pairs pairs of $seconds s, $threads threads, 512 KiB sampling with Java frames:"
echo
echo "| comparison | median of pair ratios | range |"
echo "| --- | --- | --- |"
echo "| A (export OTLP every ${interval} s) / B (export off) | $med | $(spread <<<"$ratios_ab") |"
if [[ -n "$baseline" ]]; then
  echo "| A / C (no nativemem) | $(median <<<"$ratios_ac") | $(spread <<<"$ratios_ac") |"
  echo "| B / C (no nativemem) | $(median <<<"$ratios_bc") | $(spread <<<"$ratios_bc") |"
fi
echo
awk -v m="$med" -v i="$interval" -v s="$sent" -v b="$bytes" -v e="$export_ns" -v sh="$(median <<<"$shares")" \
  -v r="$(spread <<<"$shares")" 'BEGIN {
  if (m != "-") printf "export share of the JVM'"'"'s CPU: %+.2f%% at %d s, scaled to the default 60 s: %+.2f%%\n", (m - 1) * 100, i, (m - 1) * 100 * i / 60
  if (s > 0) printf "export threads (dump, analysis, send) in A: %.0f ms CPU per export, median %.2f%% of the JVM'"'"'s CPU (range %s)\n", e / s / 1e6, sh * 100, r
  if (s > 0) printf "bytes per export (OTLP request body): %.1f KiB over %d exports\n", b / s / 1024, s }'
