#!/usr/bin/env bash
# Shows that two builds of the agent instrument the same classes to the same bytes: the SHA-256 of
# each class the transformer instruments (RocksDB, its forks, Spring Boot's loader, given as jars,
# and the JDK's zip classes of `java` on PATH), one build after the other, then their diff.
# Each run has a fresh private cache directory, so no instrumented JDK class is read from a cache.
#
# usage: build/transformed-classes.sh BEFORE.jar AFTER.jar CLASS-JAR...
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 3 ]] || { echo "usage: build/transformed-classes.sh BEFORE.jar AFTER.jar CLASS-JAR..." >&2; exit 2; }
before="$1" after="$2"
shift 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for side in before after; do
  jar="$before"; [[ $side == after ]] && jar="$after"
  mkdir -m 700 "$work/$side" "$work/$side-home"
  javac -nowarn -cp "$jar" -d "$work/$side" build/TransformedClasses.java
  HOME="$work/$side-home" XDG_CACHE_HOME="$work/$side-home" \
    java -Djava.io.tmpdir="$work/$side-home" -cp "$jar:$work/$side" \
      dev.nativemem.agent.TransformedClasses "$@" 2>/dev/null >"$work/$side.txt"
done
echo "$(wc -l <"$work/after.txt") classes instrumented; not-instrumented: $(grep -c not-instrumented "$work/after.txt" || true)"
if diff "$work/before.txt" "$work/after.txt"; then
  echo "the same bytes in both builds"
else
  echo "the builds instrument differently (lines above: < before, > after)"
  exit 1
fi
