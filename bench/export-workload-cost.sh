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
# The first export of a run falls in the warm-up of both A and B (its one-time class loading and
# symbol tables are reported apart); the export threads' own CPU in A's window (ThreadMXBean) is
# the finer, in-run figure. Needs the core jar (java/nativemem/target/nativemem-0.1.0.jar) and
# rocksdbjni in ~/.m2 (a Maven build of the project fetches both). Default: about 8 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
pairs="${1:-5}"
seconds="${2:-30}"
baseline="${3:-}"
interval=10
threads=2
warmup=$((interval + 3)) # the first export (class loading, JIT, symbol tables) falls in the warm-up
jar=$PWD/java/nativemem/target/nativemem-0.1.0.jar
rocks=$(rocksdb_jar)
work=$(mktemp -d)
sink_pid=""
cleanup() { [[ -n "$sink_pid" ]] && kill "$sink_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

ours=$(bundled_allocator "$jar" "$work")
javac -d "$work/classes" -cp "$jar:$rocks" bench/Measurement.java bench/ZlibRoundTrip.java bench/AllocatorWorkload.java

java bench/ExportSink.java >"$work/sink.port" 2>"$work/sink.err" &
sink_pid=$!
for _ in $(seq 100); do [[ -s "$work/sink.port" ]] && break; sleep 0.1; done
port=$(head -c 6 "$work/sink.port" | tr -cd 0-9)
[[ -n "$port" ]] || { echo "the sink did not start:" >&2; cat "$work/sink.err" >&2; exit 1; }


sampling=(env "LD_PRELOAD=$ours" "MALLOC_CONF=prof_active:true,lg_prof_sample:19")
agent_a="-javaagent:$jar=level=off,export=otlp,export.endpoint=http://127.0.0.1:$port,export.interval=${interval}s"
agent_b="-javaagent:$jar=level=off,export=off"

# run <name> <command prefix...> -- <jvm args...>: the workload's output in $work/<name>.out
# (OPS_PER_CPU_SECOND, and in A the export's counters at the window's start and end)
run() {
  local name=$1; shift
  local pre=()
  while [[ $1 != -- ]]; do pre+=("$1"); shift; done
  shift
  env -u LD_PRELOAD -u MALLOC_CONF "${pre[@]}" java -Xmx1g -Dbench.warmupMillis=$((warmup * 1000)) "$@" \
    -cp "$work/classes:$jar:$rocks" AllocatorWorkload "$threads" "$seconds" >"$work/$name.out" 2>"$work/stderr" || {
    echo "failed: $name" >&2; cat "$work/stderr" >&2; : >"$work/$name.out"; }
}
# val <name> <KEY>: the value the run printed for KEY, or "-"
val() { awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? "-" : v) }' "$work/$1.out"; }

ratios_ab="" ratios_ac="" ratios_bc="" shares="" sent=0 bytes=0 export_ns=0 first_ns="" exports_window=0
for pair in $(seq "$pairs"); do
  run A "${sampling[@]}" -- "$agent_a" -Dbench.javaFrames=true -Dbench.export=true
  run B "${sampling[@]}" -- "$agent_b" -Dbench.javaFrames=true
  ea=$(val A OPS_PER_CPU_SECOND) eb=$(val B OPS_PER_CPU_SECOND)
  # CPU per operation A/B = (operations per CPU-second of B) / (those of A)
  r=$(ratio "$eb" "$ea"); ratios_ab="$ratios_ab ${r/n\/a/-}"
  n0=$(val A EXPORTS_AT_START) n=$(val A EXPORTS) b=$(val A EXPORT_BYTES)
  t0=$(val A EXPORT_THREADS_CPU_NS_AT_START) t=$(val A EXPORT_THREADS_CPU_NS)
  p0=$(val A PROCESS_CPU_NS_AT_START) p=$(val A PROCESS_CPU_NS)
  share="-"
  if [[ $n =~ ^[0-9]+$ && $n0 =~ ^[0-9]+$ && $n -gt $n0 ]]; then
    sent=$((sent + n)); bytes=$((bytes + b))
    export_ns=$((export_ns + t - t0)); exports_window=$((exports_window + n - n0))
    share=$(awk -v a=$((t - t0)) -v b=$((p - p0)) 'BEGIN { printf "%.2f%%", 100 * a / b }')
    shares="$shares ${share%\%}"
    [[ $n0 -eq 1 ]] && first_ns="$first_ns $t0"
  fi
  line="pair=$pair A: ops/cpu-s=$ea exports=$n0+$((n - n0)) bytes=$b export threads/JVM CPU in window=$share"
  line="$line  B: ops/cpu-s=$eb  CPU A/B=$r"
  if [[ -n "$baseline" ]]; then
    run C --
    ec=$(val C OPS_PER_CPU_SECOND)
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
awk -v m="$med" -v i="$interval" -v s="$sent" -v b="$bytes" -v e="$export_ns" -v w="$exports_window" \
  -v sh="$(median <<<"$shares")" -v r="$(spread <<<"$shares")" -v f="$(median <<<"$first_ns")" 'BEGIN {
  if (m != "-") printf "whole JVM, export against none: %+.2f%% CPU at one export per %d s; at the default 60 s: %+.2f%%\n", (m - 1) * 100, i, (m - 1) * 100 * i / 60
  if (w > 0) printf "export threads (dump, analysis, send) in the window: %.0f ms CPU per export, median %.2f%% of the JVM'"'"'s CPU (range %s%%)\n", e / w / 1e6, sh, r
  if (f != "-") printf "the first export (in the warm-up; loads classes, symbol tables): %.0f ms CPU (median)\n", f / 1e6
  if (s > 0) printf "bytes per export (OTLP request body): %.1f KiB over %d exports\n", b / s / 1024, s }'
# The sink's own count of what arrived, to check the exporter's.
kill "$sink_pid" && wait "$sink_pid" 2>/dev/null || true
sink_pid=""
awk '$1 == "RECEIVED" && $2 > 0 { printf "the sink received %d bodies, %.1f KiB each\n", $2, $3 / $2 / 1024 }' "$work/sink.port"
