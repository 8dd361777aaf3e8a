#!/usr/bin/env bash
# Arena benchmark (not a test): what jemalloc arenas sized for the host cost against arenas sized
# for the container, on a workload shaped like a Flink TaskManager on RocksDB state
# (bench/ArenaWorkload.java: 4 RocksDB instances sharing a block cache, 64 or 256 task threads that
# come and go, memtable inserts, cached reads, zlib streams, RocksDB's own background threads).
#
#   mvn -B -q package -DskipTests && bench/arenas.sh [seconds per run, default 6] [rounds, default 3]
#
# Under a 1-CPU and a 2-CPU quota (a cgroup v1 cpu group: needs root), the bundled allocator with
#   aware        narenas from the quota (1 CPU: 1; 2 CPUs: 8) and its decay settings
#                (dirty_decay_ms:1000, muzzy_decay_ms:0, background_thread:true)
#   64, 256      narenas as jemalloc sizes them on a 16- and a 64-CPU host, same decay settings
#   256 stock    narenas 256 with jemalloc's own decay defaults (dirty_decay_ms:10000,
#                background_thread:false): a stock jemalloc on a 64-CPU host
# Each round runs every setting once, in turn; tables show the median of the rounds. Peak RSS is
# the kernel's VmHWM, with the 512 MiB Java heap pre-touched so that differences are native
# memory; peak allocator resident and fragmentation (jemalloc's resident minus allocated bytes) are
# peaks of 250 ms samples; dirty, retained and arenas holding memory are jemalloc's statistics at
# the end of the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
seconds="${1:-6}"
rounds="${2:-3}"
jar=java/nativemem-demo/target/nativemem-demo-0.1.0.jar
[[ -f $jar ]] || { echo "$jar is missing: run 'mvn -B -q package -DskipTests' first" >&2; exit 1; }
controller=$(cpu_cgroup_v1)
if [[ -z "$controller" ]] || ! mkdir "$controller/nativemem-arenas-$$" 2>/dev/null; then
  echo "cannot create a cgroup v1 cpu group under '${controller:-no cpu controller}' (needs root)" >&2
  exit 1
fi
group="$controller/nativemem-arenas-$$"
work=$(mktemp -d)
trap 'echo $$ >"$controller/cgroup.procs"; rmdir "$group" 2>/dev/null; rm -rf "$work"' EXIT
ours=$(bundled_allocator "$jar" "$work")
# Compiled once: the source launcher would compile the workload in every measured JVM.
javac -d "$work/classes" -cp "$jar" bench/Measurement.java bench/ZlibRoundTrip.java bench/ArenaWorkload.java

settings=(aware 64 256 "256 stock")
conf_of() {
  case "$1" in
    aware) echo "" ;;
    "256 stock") echo "narenas:256,dirty_decay_ms:10000,background_thread:false" ;;
    *) echo "narenas:$1" ;;
  esac
}

fields=(ops eff rss resident frag dirty retained used)
# run <threads> <malloc_conf>: the values of $fields, "-" for each when the run failed
run() {
  local out
  out=$(env -u MALLOC_CONF LD_PRELOAD="$ours" ${2:+MALLOC_CONF=$2} \
    java -Xms512m -Xmx512m -XX:+AlwaysPreTouch \
    -cp "$work/classes:$jar" ArenaWorkload "$1" "$seconds" 2>"$work/stderr") || {
    echo "failed: $1 threads, MALLOC_CONF=$2" >&2; tail -5 "$work/stderr" >&2; echo "- - - - - - - -"; return; }
  echo "$out" >"$work/last.out"
  awk '/^OPS /{o=$2} /^OPS_PER_CPU_SECOND/{e=$2} /^PEAK_RSS/{r=$2} /^PEAK_RESIDENT/{p=$2}
       /^PEAK_FRAGMENTATION/{f=$2} /^END /{d=$7; t=$9} /^ARENAS /{u=$5}
       END {print o, e, r, p, f, d, t, u}' <<<"$out"
}

declare -A res
for round in $(seq "$rounds"); do
  for cpus in 1 2; do
    echo 100000 >"$group/cpu.cfs_period_us"
    echo $((cpus * 100000)) >"$group/cpu.cfs_quota_us"
    echo $$ >"$group/cgroup.procs"
    for threads in 64 256; do
      for s in "${settings[@]}"; do
        read -r -a v <<<"$(run "$threads" "$(conf_of "$s")")"
        for i in "${!fields[@]}"; do
          res[$cpus,$threads,$s,${fields[$i]}]="${res[$cpus,$threads,$s,${fields[$i]}]:-} ${v[$i]}"
        done
        echo "round=$round cpus=$cpus threads=$threads narenas=$s: ops/s=${v[0]}" \
          "peak_rss=$(mib "${v[2]}") MiB peak_resident=$(mib "${v[3]}") MiB" \
          "frag=$(mib "${v[4]}") MiB arenas_used=${v[7]}" >&2
        if [[ $round == "$rounds" && -f "$work/last.out" ]]; then
          { echo "== cpus=$cpus threads=$threads narenas=$s"
            grep '^ARENA ' "$work/last.out" | sort -k8 -n -r | awk 'NR <= 5'; } >>"$work/arenas.txt"
        fi
      done
    done
    echo $$ >"$controller/cgroup.procs"
  done
done

echo "Median of $rounds rounds of $seconds s each (after 3 s of warm-up);" \
  "$(nproc --all) CPUs on the host; $(java -version 2>&1 | head -1)"
for cpus in 1 2; do
  for threads in 64 256; do
    echo
    echo "$cpus-CPU quota, $threads task threads:"
    echo
    echo "| narenas | peak RSS MiB | vs aware | peak allocator resident MiB | vs aware |" \
      "peak resident − allocated MiB | dirty MiB (end) | retained MiB (end) |" \
      "arenas holding memory | ops/s vs aware | ops per CPU-s vs aware |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    declare -A m=()
    for s in "${settings[@]}"; do
      for f in "${fields[@]}"; do m[$s,$f]=$(median <<<"${res[$cpus,$threads,$s,$f]}"); done
    done
    for s in "${settings[@]}"; do
      label=$s
      [[ $s == aware ]] && label="aware ($([[ $cpus == 1 ]] && echo 1 || echo 8))"
      echo "| $label | $(mib "${m[$s,rss]}") | $(ratio "${m[$s,rss]}" "${m[aware,rss]}")" \
        "| $(mib "${m[$s,resident]}") | $(ratio "${m[$s,resident]}" "${m[aware,resident]}")" \
        "| $(mib "${m[$s,frag]}") | $(mib "${m[$s,dirty]}") | $(mib "${m[$s,retained]}")" \
        "| ${m[$s,used]} | $(ratio "${m[$s,ops]}" "${m[aware,ops]}")" \
        "| $(ratio "${m[$s,eff]}" "${m[aware,eff]}") |"
    done
  done
done
echo
echo "The five arenas holding the most memory at the end of the last round"
echo "(index, threads bound, allocated, resident, dirty, retained bytes):"
cat "$work/arenas.txt"
