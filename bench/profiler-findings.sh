#!/usr/bin/env bash
# What nativemem's heap profile and async-profiler's nativemem mode each cost and each FIND on the
# same planted workload (not a test): bench/PlantedWorkload.java plants native memory of known size,
# count and line (64 x 1 MiB and 100,000 x 512 B direct buffers kept, 400 MiB in 64 KiB blocks
# allocated and freed at once), then runs the allocator benchmark's RocksDB + zlib workload
# (2 threads, <seconds> measured after 2 s of warm-up). Per round, in turn:
#   glibc: no profiler (the cost baseline);
#   nativemem: the bundled jemalloc sampling every 512 KiB with Java frames; at the end a heap dump,
#     read by `nativemem analyze --format collapsed` and by the library's own analysis (objects);
#   nativemem import-rewriting: plain glibc, no LD_PRELOAD, profiling started through the API at
#     512 KiB with Java frames before anything is planted; its dump read the same way, and its
#     status at the end (its tables' resident and reserved memory);
#   async-profiler 4.2: -agentpath:...=start,nativemem=524288,file=<jfr> (malloc and free events),
#     read by its converter: `jfrconv --nativemem --leak --total --lines -o collapsed` (live bytes:
#     allocations without a matching free, the last 10% of the recording ignored as it does by
#     default) and the same without --total (sampled allocations, a count).
# Bytes per planted method are summed from each collapsed file by bench/CollapsedSites.java.
#
#   mvn -B -q install -DskipTests -pl java/nativemem -am && bench/profiler-findings.sh [rounds, default 3] [seconds, default 20] [dir]
#
# With a third argument, the last round's collapsed files are copied into that directory (it must
# not exist): nativemem.collapsed, nativemem-import-rewriting.collapsed,
# async-profiler-leak.collapsed, async-profiler-leak-samples.collapsed.
#
# Needs the core jar and rocksdbjni in the local Maven repository (~/.m2/repository, or
# $NATIVEMEM_BENCH_M2); async-profiler and its converter (tools.profiler:async-profiler,
# tools.profiler:jfr-converter) are fetched there with Maven if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
rounds="${1:-3}"
seconds="${2:-20}"
keep="${3:-}"
[[ -z "$keep" || ! -e "$keep" ]] || { echo "$keep exists: name a new directory" >&2; exit 2; }
threads=2
jar=$PWD/java/nativemem/target/nativemem-0.1.0.jar
rocks=$(rocksdb_jar)
ap_version=4.2
m2="${NATIVEMEM_BENCH_M2:-$HOME/.m2/repository}"
ap_jar="$m2/tools/profiler/async-profiler/$ap_version/async-profiler-$ap_version.jar"
conv_jar="$m2/tools/profiler/jfr-converter/$ap_version/jfr-converter-$ap_version.jar"
[[ -f "$ap_jar" ]] || mvn -B -q dependency:get "-Dmaven.repo.local=$m2" -Dartifact="tools.profiler:async-profiler:$ap_version" >/dev/null
[[ -f "$conv_jar" ]] || mvn -B -q dependency:get "-Dmaven.repo.local=$m2" -Dartifact="tools.profiler:jfr-converter:$ap_version" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bundled_allocator "$jar" "$work" >/dev/null
unzip -q -o -j "$ap_jar" linux-x64/libasyncProfiler.so -d "$work"
javac -nowarn -d "$work/classes" -cp "$jar:$rocks" bench/Measurement.java bench/ZlibRoundTrip.java \
  bench/AllocatorWorkload.java bench/PlantedWorkload.java 2>/dev/null
sites=(PlantedWorkload.plantLarge PlantedWorkload.plantSmall PlantedWorkload.churn)
# the planted lines, read from the source: the truth each profiler's line is compared with
line_large=$(grep -n 'allocateDirect(LARGE_SIZE)' bench/PlantedWorkload.java | cut -d: -f1)
line_small=$(grep -n 'allocateDirect(SMALL_SIZE)' bench/PlantedWorkload.java | cut -d: -f1)
line_churn=$(grep -n 'allocateMemory(CHURN_SIZE)' bench/PlantedWorkload.java | cut -d: -f1)


# run <name> <env assignments...> -- <jvm args...>: the workload's output in $work/<name>.out
run() {
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env -u LD_PRELOAD -u MALLOC_CONF "${envs[@]}" java -Xmx1g "$@" -cp "$work/classes:$jar:$rocks" \
    PlantedWorkload "$threads" "$seconds" >"$work/$name.out" 2>"$work/stderr" || {
    echo "failed: $name" >&2; cat "$work/stderr" >&2; : >"$work/$name.out"; }
}
val() { awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? "-" : v) }' "$work/$1.out"; }
# site <collapsed file> <n>: bytes of site n (0-based) and the lines seen for it
site() { java bench/CollapsedSites.java "$1" "${sites[@]}" | awk -v n=$(($2 + 1)) 'NR == n { print $3, $5 }'; }

declare -A found cost rss tables
for round in $(seq "$rounds"); do
  run glibc --
  run nm "LD_PRELOAD=$work/libnativemem_jemalloc.so" "MALLOC_CONF=prof_active:true,lg_prof_sample:19" -- \
    -Dbench.javaFrames=true "-Dbench.dump=$work/nm-$round.heap"
  run ir -- -Dbench.profile=524288 -Dbench.javaFrames=true "-Dbench.dump=$work/ir-$round.heap"
  run ap -- "-agentpath:$work/libasyncProfiler.so=start,nativemem=524288,file=$work/ap-$round.jfr"
  java -jar "$jar" analyze "$work/nm-$round.heap" --format collapsed -o "$work/nm-$round.collapsed" >/dev/null 2>&1
  java -jar "$jar" analyze "$work/ir-$round.heap" --format collapsed -o "$work/ir-$round.collapsed" >/dev/null 2>&1
  tables[ir]="${tables[ir]:-} $(sed -n 's/^PROFILER .*, tables \(.*\) resident of \(.*\) reserved.*/\1 of \2/p' "$work/ir.out" | tr ' ' '_')"
  java -jar "$conv_jar" --nativemem --leak --total --lines -o collapsed "$work/ap-$round.jfr" "$work/ap-$round.collapsed" >/dev/null
  java -jar "$conv_jar" --nativemem --leak --lines -o collapsed "$work/ap-$round.jfr" "$work/ap-$round.samples" >/dev/null
  e0=$(val glibc OPS_PER_CPU_SECOND) r0=$(val glibc PEAK_RSS)
  for tool in nm ir ap; do
    c=$(ratio "$e0" "$(val $tool OPS_PER_CPU_SECOND)"); r=$(ratio "$(val $tool PEAK_RSS)" "$r0")
    cost[$tool]="${cost[$tool]:-} ${c/n\/a/-}"; rss[$tool]="${rss[$tool]:-} ${r/n\/a/-}"
  done
  line="round=$round CPU/op vs glibc: nativemem $(ratio "$e0" "$(val nm OPS_PER_CPU_SECOND)") import-rewriting $(ratio "$e0" "$(val ir OPS_PER_CPU_SECOND)") async-profiler $(ratio "$e0" "$(val ap OPS_PER_CPU_SECOND)");"
  for n in 0 1 2; do
    nb=""
    for tool in nm ir; do
      read -r b l <<<"$(site "$work/$tool-$round.collapsed" $n)"
      nb="$nb $b"
      objects=$(awk -v s="${sites[$n]}(" 'index($2, s) == 1 { o += $4 } END { print o + 0 }' "$work/$tool.out")
      found[$tool,$n]="${found[$tool,$n]:-} $b"; found[$tool,$n,lines]=$l; found[$tool,$n,count]="${found[$tool,$n,count]:-} $objects"
    done
    read -r b l <<<"$(site "$work/ap-$round.collapsed" $n)"
    read -r samples _ <<<"$(site "$work/ap-$round.samples" $n)"
    found[ap,$n]="${found[ap,$n]:-} $b"; found[ap,$n,lines]=$l; found[ap,$n,count]="${found[ap,$n,count]:-} $samples"
    line="$line ${sites[$n]#PlantedWorkload.}: nativemem, import-rewriting${nb} bytes, async-profiler $b bytes $samples samples;"
  done
  echo "$line" >&2
done

if [[ -n "$keep" ]]; then
  mkdir -m 0700 "$keep"
  cp "$work/nm-$rounds.collapsed" "$keep/nativemem.collapsed"
  cp "$work/ir-$rounds.collapsed" "$keep/nativemem-import-rewriting.collapsed"
  cp "$work/ap-$rounds.collapsed" "$keep/async-profiler-leak.collapsed"
  cp "$work/ap-$rounds.samples" "$keep/async-profiler-leak-samples.collapsed"
fi
# size BYTES: MiB with one decimal, or KiB below 1 MiB
size() { awk -v b="$1" 'BEGIN { if (b == "-") print "n/a"; else if (b > 0 && b < 1048576) printf "%.1f KiB", b / 1024; else printf "%.1f MiB", b / 1048576 }'; }
truth_bytes=(67108864 51200000 0) truth_count=(64 100000 0) truth_line=("$line_large" "$line_small" "$line_churn")
echo "Median of $rounds rounds, each tool at one sample per 512 KiB on average; planted truth beside:"
echo
echo "| planted at (line) | truth: live bytes, blocks | nativemem: live bytes (error), objects, line | nativemem import-rewriting: the same | async-profiler --leak --total: bytes (error), samples, line |"
echo "| --- | --- | --- | --- | --- |"
for n in 0 1 2; do
  row="| \`${sites[$n]}\` (:${truth_line[$n]}) | $(size "${truth_bytes[$n]}"), ${truth_count[$n]} |"
  for tool in nm ir ap; do
    b=$(median <<<"${found[$tool,$n]}")
    err=$(awk -v b="$b" -v t="${truth_bytes[$n]}" 'BEGIN { if (t == 0) print "-"; else printf "%+.1f%%", 100 * (b - t) / t }')
    row="$row $(size "$b") ($err), $(median <<<"${found[$tool,$n,count]}"), :${found[$tool,$n,lines]} |"
  done
  echo "$row"
done
echo
echo "| tool | CPU per op vs glibc (median, range) | peak RSS vs glibc (median, range) |"
echo "| --- | --- | --- |"
spread() { tr ' ' '\n' | grep -v '^-\?$' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo " to " hi }'; }
declare -A labels=([nm]="nativemem (jemalloc 512 KiB + Java frames)"
  [ir]="nativemem import-rewriting (glibc, 512 KiB + Java frames)" [ap]="async-profiler nativemem=512 KiB")
for tool in nm ir ap; do
  label=${labels[$tool]}
  echo "| $label | $(median <<<"${cost[$tool]}"), $(spread <<<"${cost[$tool]}") | $(median <<<"${rss[$tool]}"), $(spread <<<"${rss[$tool]}") |"
done
echo
echo "The import-rewriting engine's tables at the end of each round (resident of reserved):${tables[ir]//_/ }"
