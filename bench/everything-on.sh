#!/usr/bin/env bash
# "Everything on" against no nativemem at all (not a test): the allocator benchmark's RocksDB + zlib
# workload (bench/AllocatorWorkload.java, 2 threads, run by bench/EverythingOn.java) with
#   everything: the agent at level=counts, the memory watch on, every nativemem MBean attribute
#     scraped through JMX every 15 s, the bundled jemalloc sampling every 512 KiB with Java frames,
#     and the continuous export every 60 s (OTLP to bench/ExportSink.java, its own process);
#   none: glibc, no agent, no scraping;
#   bundled allocator alone: the same jemalloc (LD_PRELOAD, profiling ready, not sampling), no
#     agent: what "everything" costs beyond switching the allocator is its ratio to this one;
#   and each part alone (after those, in every round):
#     counts (glibc, agent level=counts), watch (glibc, agent level=off,watch=on, watch.profile=false
#     so that it does not start sampling), scrape (glibc, agent level=off, -Dnativemem.jmx=true, the
#     15 s scrape), profiling (the bundled jemalloc sampling every 512 KiB with Java frames, agent
#     level=off), profiling + export (the same, exporting every 60 s: the export's share is its
#     difference from profiling).
# Each run: <seconds> measured after a 5 s warm-up; the run's whole-JVM CPU (user + sys of every
# thread, getProcessCpuTime) per operation over that window, and its peak RSS (VmHWM). The window
# holds one export, the run's first (its one-time class loading and symbol tables included: an
# upper bound of the steady cost), and 4 scrapes. Rounds run every setting in turn, so background
# load spreads over all; the table gives the median of the per-round ratios to none and their range.
# The last column is finer and immune to other load: the CPU time of nativemem's own threads (watch,
# export) and the scraper over the whole run, as a share of the JVM's CPU in that run (ThreadMXBean);
# it leaves out what runs on the application's threads (sampling in malloc, handle counting).
#
#   mvn -B -q install -DskipTests -pl java/nativemem -am && bench/everything-on.sh [rounds, default 3] [seconds, default 60] [pairs]
#
# With a third argument "pairs", each round runs only none, everything and the bundled allocator alone.
#
# Needs the core jar and rocksdbjni in ~/.m2 (a Maven build fetches both). About 9 minutes a round.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
rounds="${1:-3}"
seconds="${2:-60}"
only="${3:-}"
threads=2
jar=$PWD/java/nativemem/target/nativemem-0.1.0.jar
rocks=$(rocksdb_jar)
work=$(mktemp -d)
sink_pid=""
cleanup() { [[ -n "$sink_pid" ]] && kill "$sink_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

ours=$(bundled_allocator "$jar" "$work")
javac -d "$work/classes" -cp "$jar:$rocks" bench/Measurement.java bench/ZlibRoundTrip.java \
  bench/AllocatorWorkload.java bench/EverythingOn.java

java bench/ExportSink.java >"$work/sink.port" 2>"$work/sink.err" &
sink_pid=$!
for _ in $(seq 100); do [[ -s "$work/sink.port" ]] && break; sleep 0.1; done
port=$(head -c 6 "$work/sink.port" | tr -cd 0-9)
[[ -n "$port" ]] || { echo "the sink did not start:" >&2; cat "$work/sink.err" >&2; exit 1; }


sampling="LD_PRELOAD=$ours MALLOC_CONF=prof_active:true,lg_prof_sample:19"
frames="-Dbench.javaFrames=true"
export_on="export=otlp,export.endpoint=http://127.0.0.1:$port,export.interval=60s -Dbench.export=true"
watch_on="watch=on,watch.dir=$work/incidents"
scrape="-Dnativemem.jmx=true -Dbench.scrapeSeconds=15"
names=(none everything "bundled allocator alone" counts watch scrape profiling "profiling + export")
configs=(
  "--"
  "$sampling -- -javaagent:$jar=level=counts,$watch_on,$export_on $scrape $frames"
  "LD_PRELOAD=$ours --"
  "-- -javaagent:$jar=level=counts"
  "-- -javaagent:$jar=level=off,$watch_on,watch.profile=false"
  "-- -javaagent:$jar=level=off $scrape"
  "$sampling -- -javaagent:$jar=level=off $frames"
  "$sampling -- -javaagent:$jar=level=off,$export_on $frames"
)

# run <env assignments...> -- <jvm args...>: prints "ops_per_cpu_s peak_rss scrapes exports own_share"
run() {
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out
  out=$(env -u LD_PRELOAD -u MALLOC_CONF "${envs[@]}" java -Xmx1g -Dbench.warmupMillis=5000 "$@" \
    -cp "$work/classes:$jar:$rocks" EverythingOn "$threads" "$seconds" 2>"$work/stderr") || {
    echo "failed: ${envs[*]} $*" >&2; cat "$work/stderr" >&2; echo "- - - - -"; return; }
  awk '$1 == "OPS_PER_CPU_SECOND" { e = $2 } $1 == "PEAK_RSS" { r = $2 } $1 == "SCRAPES" { s = $2 }
    $1 == "EXPORTS" { x = $2 } $1 == "OWN_THREADS_CPU_SHARE" { o = $2 }
    END { print (e == "" ? "-" : e), (r == "" ? "-" : r), (s == "" ? 0 : s), (x == "" ? 0 : x), (o == "" ? "-" : o) }' <<<"$out"
}

[[ $only == pairs ]] && { names=("${names[@]:0:3}"); configs=("${configs[@]:0:3}"); }
declare -A eff rss cpu_ratio rss_ratio own
vs_allocator=""
for round in $(seq "$rounds"); do
  for i in "${!configs[@]}"; do
    # shellcheck disable=SC2086
    read -r e r s x o <<<"$(run ${configs[$i]})"
    eff[$i]=$e; rss[$i]=$r
    # CPU per operation against none = (none's operations per CPU-second) / (this run's)
    cr=$(ratio "${eff[0]}" "$e"); rr=$(ratio "$r" "${rss[0]}")
    cpu_ratio[$i]="${cpu_ratio[$i]:-} ${cr/n\/a/-}"; rss_ratio[$i]="${rss_ratio[$i]:-} ${rr/n\/a/-}"
    own[$i]="${own[$i]:-} $o"
    [[ $i -eq 2 ]] && vs_allocator="$vs_allocator $(ratio "$e" "${eff[1]}" | sed 's:n/a:-:')"
    echo "round=$round ${names[$i]}: ops/cpu-s=$e peak_rss=$(mib "$r") MiB scrapes=$s exports=$x CPU/op vs none=$cr RSS vs none=$rr own threads=$o" >&2
  done
done

spread() { tr ' ' '\n' | grep -v '^-\?$' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo " to " hi }'; }
echo "Whole-JVM CPU per operation and peak RSS against none (no nativemem), median of $rounds rounds of $seconds s, $threads threads:"
echo
echo "| setting | CPU per op vs none | range of rounds | peak RSS vs none | range of rounds | own threads' CPU share |"
echo "| --- | ---: | --- | ---: | --- | ---: |"
for i in "${!configs[@]}"; do
  [[ $i -eq 0 ]] && continue
  echo "| ${names[$i]} | $(median <<<"${cpu_ratio[$i]}") | $(spread <<<"${cpu_ratio[$i]}") | $(median <<<"${rss_ratio[$i]}") | $(spread <<<"${rss_ratio[$i]}") | $(awk -v m="$(median <<<"${own[$i]}")" 'BEGIN { if (m == "-") print "n/a"; else printf "%.2f%%", 100 * m }') |"
done
echo
echo "everything against the bundled allocator alone (the same jemalloc, profiling ready but not sampling, no agent), CPU per op: median $(median <<<"$vs_allocator"), range $(spread <<<"$vs_allocator")"
kill "$sink_pid" && wait "$sink_pid" 2>/dev/null || true
sink_pid=""
awk '$1 == "RECEIVED" { printf "\nthe sink received %d export bodies\n", $2 }' "$work/sink.port"
