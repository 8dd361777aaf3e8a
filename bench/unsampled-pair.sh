#!/usr/bin/env bash
# What the import-rewriting engine adds to each malloc+free pair it does not sample (not a test):
# bench/UnsampledPairCost.java times a C loop of pairs (bench/unsampled_pair.c, a JNI library
# built here with cc) in thread CPU time, engine stopped and started in turn, on plain glibc.
#
#   mvn -B -q package -DskipTests -pl java/nativemem -am && bench/unsampled-pair.sh [rounds, default 21] [pairs per round, default 20000000] [bytes, default 64]
#
# Needs a C compiler (cc) and a JDK (javac, jni.h).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-21}"
pairs="${2:-20000000}"
bytes="${3:-64}"
jar=$PWD/java/nativemem/target/nativemem-0.1.0.jar
java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -I"$java_home/include" -I"$java_home/include/linux" -o "$work/libpair.so" bench/unsampled_pair.c
javac -nowarn -d "$work/classes" -cp "$jar" bench/UnsampledPairCost.java
env -u LD_PRELOAD -u MALLOC_CONF java -cp "$jar:$work/classes" UnsampledPairCost "$work/libpair.so" "$rounds" "$pairs" "$bytes"
