#!/usr/bin/env bash
# Reproducible build check: builds the core module again from this checkout and compares its jars
# (the jar, -debug, -sources, -javadoc) byte for byte with the ones already in
# java/nativemem/target. Run after a full build (test.sh runs it after `mvn verify`).
#
# What is compared: every byte of the archives, so entry times (project.build.outputTimestamp),
# entry order, the manifest, the shaded and relocated classes, the module descriptor that the jar
# tool rewrites, and the native libraries as copied and split by build/split-debug-info.sh. Cargo's
# target directory (target/rust-maven-plugin) is kept: compiling the libraries again costs minutes.
# With it removed too, the jars were identical as well (same directory, same CARGO_HOME); a build
# in another directory gives different libraries (ARCHITECTURE.md, Building).
set -euo pipefail
cd "$(dirname "$0")/.."
target=java/nativemem/target
shopt -s nullglob
jars=("$target"/nativemem-*.jar)
((${#jars[@]})) || { echo "reproducible-jar.sh: no jars in $target; build first" >&2; exit 1; }

first=$(mktemp -d)
trap 'rm -rf "$first"' EXIT
cp "${jars[@]}" "$first/"
find "$target" -mindepth 1 -maxdepth 1 ! -name rust-maven-plugin -exec rm -rf {} +
mvn -B -q -pl java/nativemem package -DskipTests -Dspotless.check.skip=true

status=0
for jar in "$first"/*.jar; do
  name=${jar##*/}
  if ! cmp -s "$jar" "$target/$name"; then
    echo "reproducible-jar.sh: $name differs between two builds; entries that differ:" >&2
    diff <(unzip -lv "$jar" | awk 'NR>3 {print $1, $5, $6, $7, $8}') \
      <(unzip -lv "$target/$name" | awk 'NR>3 {print $1, $5, $6, $7, $8}') >&2 || true
    status=1
  fi
done
((status == 0)) && echo "reproducible-jar.sh: ${#jars[@]} jars identical across two builds"
exit "$status"
