#!/usr/bin/env bash
# Benchmark (not a test): `report` on a dump of millions of distinct stacks, through the CLI
# (`java -jar nativemem.jar analyze`, JVM start included): wall seconds, CPU seconds (user +
# system) and peak RSS (/usr/bin/time).
#
# The C workload of bench/fleet-analysis.sh holds at most 2^20 blocks (~480k stacks), so this
# writes jemalloc's dump format itself (heap_v2, 512 KiB interval, one 512-byte sample a stack,
# no mapped libraries: the addresses stay unnamed, each its own "function"), in two shapes:
#   reused:  N distinct stacks built from ~4,100 return addresses, as a program's stacks are
#            (distinct paths through a limited amount of code);
#   unique:  every stack with a leaf address of its own: N distinct addresses to name, the
#            worst case for the symbolizer's per-address cache.
# Prints a Markdown table.
#
# usage: bench/many-stacks.sh [stacks=4000000]
set -euo pipefail
cd "$(dirname "$0")/.."
stacks="${1:-4000000}"
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
[[ -f $jar ]] || { echo "build first: mvn -B install -DskipTests" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

write_dump() { # shape path
  python3 - "$stacks" "$1" "$2" <<'PY'
import sys
n, shape, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(out, "w", buffering=1 << 20) as f:
    f.write("heap_v2/524288\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n" % (n, n * 512, n, n * 512))
    for i in range(n):
        leaf = i if shape == "unique" else i % 2000
        f.write("@ 0x%x 0x%x 0x%x 0x%x\n  t*: 1: 512 [0: 0]\n  t0: 1: 512 [0: 0]\n" % (
            0x10000000 + leaf * 16, 0x20000000 + ((i // 2000) % 2000) * 16,
            0x30000000 + (i % 97) * 16, 0x40000000 + (i % 13) * 16))
    f.write("\nMAPPED_LIBRARIES:\n")
PY
}

echo "| dump ($stacks distinct stacks) | size | wall s | CPU s | peak RSS |"
echo "|---|---:|---:|---:|---:|"
for shape in reused unique; do
  write_dump "$shape" "$work/$shape.heap"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" java -jar "$jar" analyze "$work/$shape.heap" --top 20 >/dev/null
  read -r wall user sys rss <"$work/time"
  size="$(du -m "$work/$shape.heap" | cut -f1)"
  awk -v s="$shape" -v z="$size" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss" \
    'BEGIN { printf "| %s | %d MB | %.2f | %.2f | %d MiB |\n", s, z, w, u + y, r / 1024 }'
  rm -f "$work/$shape.heap"
done
