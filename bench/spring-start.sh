#!/usr/bin/env bash
# Benchmark (not a test): what the agent adds to a real application's start. The Spring Boot 3.5
# Actuator test application (tests-apps/spring-actuator) runs to context refresh and exits
# (-Dspring.context.exit=onRefresh), extracted as Spring Boot recommends for CDS, without and with
# the CDS archive of a training run (-XX:ArchiveClassesAtExit, no agent), each time without the
# agent and with each agent jar given, in turn (alternating pairs), CPU seconds (user + system of
# all the JVM's threads) and wall seconds. Prints the medians, each agent's overhead as the median
# of its per-pair ratios, and the range of those ratios (how noisy the host was). A run that prints
# anything on standard error is shown.
#
# usage: bench/spring-start.sh [pairs=9] [agent jar...]
#   default agent jar: java/nativemem/target/nativemem-0.1.0.jar (this build)
# Needs: mvn -B -q install -DskipTests -pl java/nativemem -am, then
#        mvn -B -q package -DskipTests -pl tests-apps/spring-actuator -am
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
pairs="${1:-9}"
shift || true
agents=("$@")
[[ ${#agents[@]} -gt 0 ]] || agents=("$PWD/java/nativemem/target/nativemem-0.1.0.jar")
app="${APP_JAR:-$PWD/tests-apps/spring-actuator/target/nativemem-tests-apps-spring-actuator-0.1.0.jar}"
for f in "$app" "${agents[@]}"; do
  [[ -f $f ]] || { echo "$f is missing: build it first (see the header of $0)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# One extracted copy per agent jar: the application bundles nativemem (nativemem-micrometer), and
# the system class loader finds an agent's classes in the application's copy first, so that copy
# is the agent jar measured. Each copy has its own CDS archive (a training run without the agent).
for a in "${!agents[@]}"; do
  java -Djarmode=tools -jar "$app" extract --destination "$work/app$a" >/dev/null
  for bundled in "$work/app$a"/lib/nativemem-[0-9]*.jar; do
    [[ -f $bundled ]] && cp "${agents[$a]}" "$bundled"
  done
  java -XX:ArchiveClassesAtExit="$work/app$a.jsa" -Dspring.context.exit=onRefresh -Dserver.port=0 \
    -jar "$work/app$a/$(basename "$app")" >/dev/null 2>&1
  # The agent's extraction of its library and of its JDK classes happens once per jar build.
  java -javaagent:"${agents[$a]}" -Dspring.context.exit=onRefresh -Dserver.port=0 \
    -jar "$work/app$a/$(basename "$app")" >/dev/null 2>&1
done

measure() { # → "cpu wall" of one run; shows what the JVM printed on standard error, if anything
  cpu_wall "$work/out" "$work/err" "$@"
  if [[ -s $work/err ]]; then
    echo "unexpected output on standard error of: $*" >&2
    cat "$work/err" >&2
  fi
}

echo "Spring Boot Actuator app to context refresh; $pairs alternating pairs; $(nproc) cores;" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); $(java -version 2>&1 | head -1)"
echo
echo "| CDS archive | agent | CPU s without | CPU s with | wall s with | CPU vs without (median of pair ratios, range) | wall vs without |"
echo "|---|---|---:|---:|---:|---:|---:|"
for cds in off on; do
  for a in "${!agents[@]}"; do
    run=(-Dspring.context.exit=onRefresh -Dserver.port=0 -jar "$work/app$a/$(basename "$app")")
    opts=()
    [[ $cds == on ]] && opts=(-XX:SharedArchiveFile="$work/app$a.jsa")
    : >"$work/none"
    : >"$work/agent"
    : >"$work/ratio"
    for ((i = 0; i < pairs; i++)); do
      read -r c0 w0 < <(measure java "${opts[@]}" "${run[@]}")
      read -r c w < <(measure java "${opts[@]}" -javaagent:"${agents[$a]}" "${run[@]}")
      echo "$c0 $w0" >>"$work/none"
      echo "$c $w" >>"$work/agent"
      echo "$(echo "$c / $c0" | bc -l) $(echo "$w / $w0" | bc -l)" >>"$work/ratio"
    done
    cr=$(cut -d' ' -f1 "$work/ratio" | median)
    wr=$(cut -d' ' -f2 "$work/ratio" | median)
    lo=$(cut -d' ' -f1 "$work/ratio" | sort -n | head -1)
    hi=$(cut -d' ' -f1 "$work/ratio" | sort -n | tail -1)
    printf '| %s | %s | %.3f | %.3f | %.3f | %+.1f%% (%+.1f%% … %+.1f%%) | %+.1f%% |\n' "$cds" \
      "$(basename "${agents[$a]}")" \
      "$(cut -d' ' -f1 "$work/none" | median)" \
      "$(cut -d' ' -f1 "$work/agent" | median)" "$(cut -d' ' -f2 "$work/agent" | median)" \
      "$(echo "($cr - 1) * 100" | bc -l)" "$(echo "($lo - 1) * 100" | bc -l)" \
      "$(echo "($hi - 1) * 100" | bc -l)" "$(echo "($wr - 1) * 100" | bc -l)"
  done
done
