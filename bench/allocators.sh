#!/usr/bin/env bash
# Allocator benchmark (not a test): the same RocksDB + zlib workload under each allocator setting,
# throughput and peak RSS as ratios to glibc, on 2 and 16 threads; then peak RSS with
# container-aware narenas vs host-sized narenas under a 1-CPU cgroup quota.
#
#   mvn -B -q package -DskipTests && bench/allocators.sh [seconds per run, default 8] [rounds, default 3]
#
# Each round runs every setting once, in turn, so background load spreads over all settings;
# the table shows the median of the rounds.
# Needs: the demo jar (rocksdbjni inside), Debian's libjemalloc2, root for the cgroup part.
# async-profiler (tools.profiler:async-profiler) is fetched with Maven if it is not in ~/.m2.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
seconds="${1:-8}"
rounds="${2:-3}"
jar=java/nativemem-demo/target/nativemem-demo-0.1.0.jar
debian=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ours=$(bundled_allocator "$jar" "$work")
javac -d "$work/classes" -cp "$jar" bench/Measurement.java bench/ZlibRoundTrip.java bench/AllocatorWorkload.java

ap_version=4.2
ap_jar="$HOME/.m2/repository/tools/profiler/async-profiler/$ap_version/async-profiler-$ap_version.jar"
[[ -f "$ap_jar" ]] || mvn -B -q dependency:get -Dartifact="tools.profiler:async-profiler:$ap_version" >/dev/null 2>&1 || true
asprof=""
if [[ -f "$ap_jar" ]]; then
  unzip -q -o -j "$ap_jar" linux-x64/libasyncProfiler.so -d "$work"
  asprof="$work/libasyncProfiler.so"
fi

# run <threads> <env assignments...> -- <extra jvm args...>: prints "ops peak_rss ops_per_cpu_s"
run() {
  local threads=$1; shift
  local envs=() jvm=()
  while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  jvm=("$@")
  local out
  out=$(env -u LD_PRELOAD -u MALLOC_CONF "${envs[@]}" java -Xmx1g "${jvm[@]}" \
    -cp "$work/classes:$jar" AllocatorWorkload "$threads" "$seconds" 2>"$work/stderr") || {
    echo "failed: ${envs[*]} ${jvm[*]}" >&2; cat "$work/stderr" >&2; echo "- - -"; return; }
  echo "$(awk '/^OPS /{print $2}' <<<"$out") $(awk '/^PEAK_RSS/{print $2}' <<<"$out") $(awk '/^OPS_PER_CPU_SECOND/{print $2}' <<<"$out")"
}

names=("glibc" "Debian jemalloc" "ours, prof:false" "ours, ready (default)" "ours, active 512 KiB"
  "ours, active 512 KiB + Java frames")
configs=(
  ""
  "LD_PRELOAD=$debian"
  "LD_PRELOAD=$ours MALLOC_CONF=prof:false"
  "LD_PRELOAD=$ours"
  "LD_PRELOAD=$ours MALLOC_CONF=prof_active:true"
  "LD_PRELOAD=$ours MALLOC_CONF=prof_active:true -- -Dbench.javaFrames=true"
)
if [[ -n "$asprof" ]]; then
  names+=("async-profiler nativemem=512 KiB")
  configs+=("-- -agentpath:$asprof=start,nativemem=524288,file=$work/ap.jfr")
fi


declare -A ops rss eff
for round in $(seq "$rounds"); do
  for threads in 2 16; do
    for i in "${!configs[@]}"; do
      # shellcheck disable=SC2086
      read -r o r e <<<"$(run "$threads" ${configs[$i]})"
      ops[$threads,$i]="${ops[$threads,$i]:-} $o"; rss[$threads,$i]="${rss[$threads,$i]:-} $r"
      eff[$threads,$i]="${eff[$threads,$i]:-} $e"
      echo "round=$round threads=$threads ${names[$i]}: ops/s=$o ops/cpu-s=$e peak_rss=$(mib "$r") MiB" >&2
    done
  done
done
for key in "${!ops[@]}"; do
  ops[$key]=$(median <<<"${ops[$key]}"); rss[$key]=$(median <<<"${rss[$key]}")
  eff[$key]=$(median <<<"${eff[$key]}")
done

echo "Median of $rounds rounds of ${seconds} s each, ratios to glibc:"
echo
echo "| setting | ops/s, 2 thr | ops/s, 16 thr | ops per CPU-s, 2 thr | ops per CPU-s, 16 thr | peak RSS, 2 thr | peak RSS, 16 thr |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for i in "${!configs[@]}"; do
  echo "| ${names[$i]} | $(ratio "${ops[2,$i]}" "${ops[2,0]}") | $(ratio "${ops[16,$i]}" "${ops[16,0]}") | $(ratio "${eff[2,$i]}" "${eff[2,0]}") | $(ratio "${eff[16,$i]}" "${eff[16,0]}") | $(ratio "${rss[2,$i]}" "${rss[2,0]}") | $(ratio "${rss[16,$i]}" "${rss[16,0]}") |"
done
echo
echo "glibc absolute: 2 threads $(printf '%.0f' "${ops[2,0]}") ops/s, $(mib "${rss[2,0]}") MiB; 16 threads $(printf '%.0f' "${ops[16,0]}") ops/s, $(mib "${rss[16,0]}") MiB"

# Container-aware narenas: a 1-CPU quota on a child cgroup (v1 cpu controller), 16 threads.
controller=$(cpu_cgroup_v1)
if [[ -z "$controller" ]] || ! mkdir "$controller/nativemem-bench-$$" 2>/dev/null; then
  echo; echo "narenas comparison skipped: cannot create a cgroup v1 cpu group (needs root)"; exit 0
fi
group="$controller/nativemem-bench-$$"
trap 'rmdir "$group" 2>/dev/null; rm -rf "$work"' EXIT
echo 100000 >"$group/cpu.cfs_period_us"
echo 100000 >"$group/cpu.cfs_quota_us"
echo $$ >"$group/cgroup.procs"
host=$(( $(nproc --all) * 4 ))
echo
echo "Under a 1-CPU quota, 16 threads (this host: $(nproc --all) CPUs), median of $rounds:"
echo "| narenas | peak RSS | ratio to container-aware | throughput ratio |"
echo "| --- | --- | --- | --- |"
declare -A qo qr
for round in $(seq "$rounds"); do
  for n in aware "$host" 256; do
    conf=(); [[ $n == aware ]] || conf=("MALLOC_CONF=narenas:$n")
    read -r o r _ <<<"$(run 16 "LD_PRELOAD=$ours" "${conf[@]}")"
    qo[$n]="${qo[$n]:-} $o"; qr[$n]="${qr[$n]:-} $r"
    echo "round=$round quota=1cpu narenas=$n: ops/s=$o peak_rss=$(mib "$r") MiB" >&2
  done
done
o1=$(median <<<"${qo[aware]}"); r1=$(median <<<"${qr[aware]}")
o2=$(median <<<"${qo[$host]}"); r2=$(median <<<"${qr[$host]}")
o3=$(median <<<"${qo[256]}"); r3=$(median <<<"${qr[256]}")
echo "| container-aware (1 CPU: 1) | $(mib "$r1") MiB | 1.000 | 1.000 |"
echo "| host-sized, this host ($host) | $(mib "$r2") MiB | $(ratio "$r2" "$r1") | $(ratio "$o2" "$o1") |"
echo "| host-sized, a 64-CPU host (256) | $(mib "$r3") MiB | $(ratio "$r3" "$r1") | $(ratio "$o3" "$o1") |"
echo $$ >"$controller/cgroup.procs"
