#!/usr/bin/env bash
# Benchmark (not a test): a cold metrics reading and a heap-profile dump through two jars side by
# side in one run (bench/BoundaryCost.java, the public API only): the jar before a change of the
# Java↔Rust boundary and the jar after it, alternating JVMs so that the host's load falls on both.
# Prints each jar's median µs per round and the ratio after/before of the medians over the rounds.
# Needs `mvn -B -q package -DskipTests` first for the "after" jar.
#
# usage: bench/boundary.sh BEFORE.jar [AFTER.jar=java/nativemem/target/nativemem-0.1.0.jar] [jvms=3] [rounds=30]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
before="${1:-}"
after="${2:-$PWD/java/nativemem/target/nativemem-0.1.0.jar}"
jvms="${3:-3}"
rounds="${4:-30}"
need_jars "bench/boundary.sh BEFORE.jar [AFTER.jar] [jvms=3] [rounds=30]" "$before" "$after"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
declare -A scrape dump
for ((i = 0; i < jvms; i++)); do
  for side in before after; do
    jar="$before"; [[ $side == after ]] && jar="$after"
    out="$(java -cp "$jar" bench/BoundaryCost.java "$rounds")"
    scrape[$side]+="$(awk '/^metrics reading/ { print $5 }' <<<"$out") "
    dump[$side]+="$(awk '/^heap-profile dump/ { print $4 }' <<<"$out") "
  done
done
for side in before after; do
  printf '%-6s metrics reading, cold: %s µs   heap-profile dump: %s µs   (medians of %d JVMs: %s| %s)\n' \
    "$side" "$(median <<<"${scrape[$side]}")" "$(median <<<"${dump[$side]}")" "$jvms" "${scrape[$side]}" "${dump[$side]}"
done
echo "after/before: metrics reading $(ratio "$(median <<<"${scrape[after]}")" "$(median <<<"${scrape[before]}")"), dump $(ratio "$(median <<<"${dump[after]}")" "$(median <<<"${dump[before]}")")"
