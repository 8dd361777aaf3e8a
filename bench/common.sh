# Helpers the bench/ scripts share (sourced, not run).

# need_jars USAGE JAR...: stops with "usage: USAGE" when a JAR is not given (an empty argument),
# or naming the first JAR that is not a file; plain sh, for the sh scripts too
need_jars() {
  local usage="$1" jar
  shift
  for jar in "$@"; do
    [ -n "$jar" ] || { echo "usage: $usage" >&2; exit 2; }
    [ -f "$jar" ] || { echo "$jar is missing" >&2; exit 1; }
  done
}

# ratio A B: A / B to three places, n/a when either is missing
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "n/a"; else printf "%.3f", a / b }'; }
# mib BYTES
mib() { awk -v b="$1" 'BEGIN { if (b == "-") print "n/a"; else printf "%.1f", b / 1048576 }'; }
# median of the numbers on stdin ("-" entries are failed runs, skipped)
median() { tr ' ' '\n' | grep -v '^-\?$' | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }

# cpu_cgroup_v1: the mount point of the cgroup v1 cpu controller, or nothing
cpu_cgroup_v1() {
  awk '{ split($0, h, " - "); split(h[2], a, " "); if (a[1] == "cgroup" && ("," a[3] ",") ~ /,cpu,/) { split(h[1], b, " "); print b[5]; exit } }' /proc/self/mountinfo
}

# cpu_wall OUT ERR COMMAND...: runs COMMAND, its stdout to OUT and stderr to ERR, and prints
# "cpu wall": its CPU seconds (user + system of all its threads and children) and wall seconds;
# "- -" when it failed
cpu_wall() {
  local out="$1" err="$2" rc=0 timing
  shift 2
  timing="$(mktemp)"
  /usr/bin/time -f '%U %S %e' -o "$timing" "$@" >"$out" 2>"$err" || rc=$?
  if [[ $rc -ne 0 ]]; then echo "- -"; else awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$timing"; fi
  rm -f "$timing"
}

# rocksdb_jar: the path of the rocksdbjni jar (linux64) of the project's version in ~/.m2,
# fetched there first if it is missing
rocksdb_jar() {
  local version jar
  version=$(sed -n 's:.*<rocksdbjni.version>\(.*\)</rocksdbjni.version>.*:\1:p' pom.xml)
  jar="$HOME/.m2/repository/org/rocksdb/rocksdbjni/$version/rocksdbjni-$version-linux64.jar"
  [[ -f "$jar" ]] || mvn -B -q dependency:get -Dartifact="org.rocksdb:rocksdbjni:$version:jar:linux64" >/dev/null
  echo "$jar"
}

# bundled_allocator JAR DIR: extracts the bundled jemalloc of the nativemem JAR into DIR and
# prints its path (for LD_PRELOAD)
bundled_allocator() {
  unzip -q -o -j "$1" dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so -d "$2"
  echo "$2/libnativemem_jemalloc.so"
}
