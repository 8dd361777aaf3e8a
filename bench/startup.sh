#!/usr/bin/env bash
# Benchmark (not a test): what nativemem adds to a JVM's start, in CPU seconds (user + system, the
# JVM's own threads included), side by side with a hello-world JVM in the same run.
#
#   java -cp . Hello                                  the baseline
#   java -jar nativemem.jar --help                    the CLI, no native library
#   java -jar nativemem.jar version                   the CLI, library extracted and loaded
#   java -javaagent:nativemem.jar -cp . Hello         the agent's cost on every JVM it starts with
#   ... with -Dnativemem.tmpdir=<empty directory>     the first start of a jar build: the library is
#                                                     extracted and the JDK classes instrumented once
#
# Medians of N runs, taken in turn. Needs `mvn -B -q package -DskipTests` first.
#
# usage: bench/startup.sh [runs=15]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-15}"
jar="$PWD/java/nativemem/target/nativemem-0.1.0.jar"
[[ -f $jar ]] || { echo "$jar is missing: run 'mvn -B -q package -DskipTests' first" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/Hello.java" <<'JAVA'
public class Hello { public static void main(String[] args) { System.out.println("hello"); } }
JAVA
javac -d "$work" "$work/Hello.java"

cpu() { # command... → CPU seconds of one run
  local TIMEFORMAT='%U %S'
  { time "$@" >/dev/null 2>&1; } 2>"$work/time"
  awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}
declare -A samples
names=(hello help version agent first)
for ((i = 0; i < runs; i++)); do
  samples[hello]+="$(cpu java -cp "$work" Hello) "
  samples[help]+="$(cpu java -jar "$jar" --help) "
  samples[version]+="$(cpu java -jar "$jar" version) "
  samples[agent]+="$(cpu java -javaagent:"$jar" -cp "$work" Hello) "
  samples[first]+="$(cpu java -Dnativemem.tmpdir="$work/fresh-$i" -javaagent:"$jar" -cp "$work" Hello) "
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
hello=$(median "${samples[hello]}")
echo "JVM start, CPU seconds (user + system), median of $runs runs; $(nproc) cores; $(java -version 2>&1 | head -1)"
echo
echo "| what | CPU s | vs hello world |"
echo "|---|---:|---:|"
labels=("hello world (java -cp . Hello)" "java -jar nativemem.jar --help" "java -jar nativemem.jar version"
  "hello world with -javaagent:nativemem.jar"
  "the same, first start of this jar build (empty -Dnativemem.tmpdir)")
for i in "${!names[@]}"; do
  m=$(median "${samples[${names[$i]}]}")
  printf '| %s | %.3f | %.1f× |\n' "${labels[$i]}" "$m" "$(echo "$m / $hello" | bc -l)"
done
agent=$(median "${samples[agent]}")
printf '\nthe agent adds %.3f CPU s to a JVM start\n' "$(echo "$agent - $hello" | bc -l)"
