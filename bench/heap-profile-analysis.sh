#!/usr/bin/env bash
# Benchmark (not a test): analysing a large heap profile with nativemem vs `jeprof --text`.
#
# Makes a dump with >= 10k distinct stacks (the C workload of the Rust tests, tree depth 14,
# under Debian's jemalloc with lg_prof_sample:9), then times on the same file, same run:
#   jeprof --text --show_bytes      (one run; Perl + addr2line + nm)
#   nativemem text / svg / pprof     (mean of several runs; parse, symbolize, render)
# and, as users run them, the CPU seconds (user + system) of `jeprof --text` and of
# `java -jar nativemem.jar analyze` (JVM start and library extraction included; medians);
# and checks that both name the same top 10 sites. Prints Markdown tables.
# The CLI needs `mvn -B -q package -DskipTests` first.
#
# usage: bench/heap-profile-analysis.sh [depth=14] [repeat=5]
set -euo pipefail
cd "$(dirname "$0")/.."
depth="${1:-14}"
repeat="${2:-5}"
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nativemem/cargo-target}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -g -O1 -fno-omit-frame-pointer -o "$work/heap_workload" rust/nativemem/tests/workload/heap_workload.c
LD_PRELOAD="$jemalloc" MALLOC_CONF="prof:true,lg_prof_sample:9" \
  "$work/heap_workload" "$work/big.heap" "$depth"
stacks="$(grep -c '^@' "$work/big.heap")"
size="$(du -h "$work/big.heap" | cut -f1)"

cargo build -q --release -p nativemem --example profile_report
ours="$CARGO_TARGET_DIR/release/examples/profile_report"

seconds() { # command... → wall seconds of one run
  local start end
  start="$(date +%s.%N)"
  "$@" >/dev/null 2>&1
  end="$(date +%s.%N)"
  echo "$end - $start" | bc -l
}

cpu() { # command... → CPU seconds (user + system, children included) of one run
  local TIMEFORMAT='%U %S'
  { time "$@" >/dev/null 2>&1; } 2>"$work/time"
  awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
jeprof_cpu="" cli_cpu=""
for ((i = 0; i < repeat; i++)); do
  jeprof_cpu+="$(cpu jeprof --text --show_bytes "$work/heap_workload" "$work/big.heap") "
  [[ -f $jar ]] && cli_cpu+="$(cpu java -jar "$jar" analyze "$work/big.heap" --top 20) "
done

jeprof_s="$(seconds jeprof --text --show_bytes "$work/heap_workload" "$work/big.heap")"
text_s="$("$ours" "$work/big.heap" --format text --repeat "$repeat")"
svg_s="$("$ours" "$work/big.heap" --format svg --repeat "$repeat")"
pprof_s="$("$ours" "$work/big.heap" --format pprof --repeat "$repeat")"

# Same top 10 (flat): names in order, from both tools. Code without a symbol of its own differs
# by design: jeprof names it after the nearest symbol before it (another function), we show
# `module+0xoffset (called from caller)`; the workload's own sites are all named.
jeprof --text --show_bytes "$work/heap_workload" "$work/big.heap" 2>/dev/null |
  awk 'NR>1 && NF>=6 {sub(/@@.*/, "", $6); print $6}' | head -10 >"$work/jeprof.top"
"$ours" "$work/big.heap" --top 10 | awk '/^Top sites by own/ {on=1; next} on && /site$/ {next}
  on && NF==0 {exit} on {print $8}' >"$work/ours.top"
if diff -q "$work/jeprof.top" "$work/ours.top" >/dev/null; then same="yes"; else same="NO"; fi

ratio() { echo "scale=1; $1 / $2" | bc -l; }
echo "dump: $stacks stacks, $size, tree depth $depth; $(nproc) cores; nativemem times are means of $repeat runs"
echo
echo "| analysis of the same dump | seconds | vs jeprof --text |"
echo "|---|---:|---:|"
printf '| jeprof --text --show_bytes | %.2f | 1× |\n' "$jeprof_s"
printf '| nativemem analyze (text, top sites) | %.3f | %s× faster |\n' "$text_s" "$(ratio "$jeprof_s" "$text_s")"
printf '| nativemem flame graph (svg) | %.3f | %s× faster |\n' "$svg_s" "$(ratio "$jeprof_s" "$svg_s")"
printf '| nativemem pprof (gzipped) | %.3f | %s× faster |\n' "$pprof_s" "$(ratio "$jeprof_s" "$pprof_s")"
echo
echo "same top 10 flat sites as jeprof: $same"
[[ $same == yes ]] || paste "$work/jeprof.top" "$work/ours.top" | sed 's/^/  jeprof | ours: /'
echo
echo "As users run them, CPU seconds (user + system), median of $repeat runs:"
echo
echo "| command | CPU s | vs jeprof --text |"
echo "|---|---:|---:|"
jc="$(median "$jeprof_cpu")"
printf '| jeprof --text --show_bytes | %.2f | 1× |\n' "$jc"
if [[ -n $cli_cpu ]]; then
  cc="$(median "$cli_cpu")"
  printf '| java -jar nativemem.jar analyze (JVM start included) | %.2f | %s× less |\n' "$cc" "$(ratio "$jc" "$cc")"
else
  echo "| java -jar nativemem.jar analyze | (not built: mvn -B -q package -DskipTests) | |"
fi
