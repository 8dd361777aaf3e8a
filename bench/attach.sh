#!/bin/sh
# Wall time of `attach <pid> stats` from a jlink'ed runtime without jdk.attach (HotSpot's attach
# protocol spoken by the native core), side by side with another jar on the full JDK (e.g. a build
# that still used jdk.attach): runs interleaved, prints the median of each.
# The same jar on the full JDK is timed too: the runtime's share apart from the protocol's.
# Usage: bench/attach.sh NEW_JAR [OLD_JAR] [RUNS]
set -eu
. "$(dirname "$0")/common.sh"
need_jars "bench/attach.sh NEW_JAR [OLD_JAR] [RUNS]" "${1:-}" ${2:+"$2"}
new_jar=$1
old_jar=${2:-}
runs=${3:-11}
java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
runtime=${TMPDIR:-/tmp}/nativemem-bench-jre
[ -x "$runtime/bin/java" ] || "$java_home/bin/jlink" --add-modules java.base,java.management,java.instrument \
  --no-header-files --no-man-pages --strip-debug --output "$runtime"
src=$(mktemp -d)
trap 'kill $target $other 2>/dev/null; rm -rf "$src"' EXIT
printf 'public class Idle { public static void main(String[] a) throws Exception { Thread.sleep(3600000); } }\n' > "$src/Idle.java"
# One target each: a JVM keeps the agent class of the first jar loaded into it.
"$java_home/bin/java" "$src/Idle.java" & target=$!
"$java_home/bin/java" "$src/Idle.java" & other=$!
sleep 3
"$runtime/bin/java" -jar "$new_jar" attach "$target" stats > /dev/null   # listener started, library extracted
[ -z "$old_jar" ] || "$java_home/bin/java" -jar "$old_jar" attach "$other" stats > /dev/null
ms() { s=$(date +%s%N); "$@" > /dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: > "$src/new"; : > "$src/newjdk"; : > "$src/old"
i=0
while [ $i -lt "$runs" ]; do
  ms "$runtime/bin/java" -jar "$new_jar" attach "$target" stats >> "$src/new"
  ms "$java_home/bin/java" -jar "$new_jar" attach "$target" stats >> "$src/newjdk"
  [ -z "$old_jar" ] || ms "$java_home/bin/java" -jar "$old_jar" attach "$other" stats >> "$src/old"
  i=$((i + 1))
done
echo "attach stats, jlink runtime without jdk.attach: median $(median < "$src/new") ms of $runs"
echo "attach stats, same jar, full JDK: median $(median < "$src/newjdk") ms of $runs"
[ -z "$old_jar" ] || echo "attach stats, full JDK, $old_jar: median $(median < "$src/old") ms of $runs"
