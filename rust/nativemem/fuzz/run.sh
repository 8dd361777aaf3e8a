#!/usr/bin/env bash
# Fuzzes nativemem's parsers of untrusted input with cargo-fuzz (libFuzzer), each target from its
# committed seed corpus (corpus/<target>/) with its dictionary (dictionaries/).
#
#   rust/nativemem/fuzz/run.sh [--seconds N] [--runs N] [TARGET...]
#
#   --seconds N   fuzz each target for N seconds (default 20; 0: no time limit)
#   --runs N      stop a target after N executions (default: no limit)
#   TARGET...     heap_v2 maps_line symbols_json java_frames_json perf_map attach_reply object_file
#                 (default: all of them)
#   --help        this text
#
# A crash (a panic, an overflow: targets are built with debug assertions), a hang (one input
# running 5 s), a run of the process above 512 MiB resident, or an input for which a parser holds
# more heap than its bound (SECURITY.md, "Fuzzing") fails the run, with the input saved under
# artifacts/ and the command that replays it. Prints executions, rate and peak RSS per target.
# Installs nightly Rust (through rustup) and cargo-fuzz when they are missing.
# New corpus entries go to a temporary directory: the committed corpus is only read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

# Each a [[bin]] of Cargo.toml with a corpus/<target>/ directory.
all_targets=(heap_v2 maps_line symbols_json java_frames_json perf_map attach_reply object_file)
seconds=20
runs=0
targets=()
while (($#)); do
  case $1 in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    -*) echo "run.sh: unknown option $1; see --help" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "run.sh: no target '$t' (${all_targets[*]})" >&2; exit 2; }
done
[[ $seconds =~ ^[0-9]+$ && $runs =~ ^[0-9]+$ ]] || { echo "run.sh: --seconds and --runs take whole numbers" >&2; exit 2; }

if ! cargo +nightly --version >/dev/null 2>&1; then
  if command -v rustup >/dev/null; then
    echo "run.sh: installing nightly Rust (cargo-fuzz needs it)"
    rustup toolchain install nightly --profile minimal
  else
    echo "run.sh: fuzzing needs nightly Rust, and rustup is not on PATH to install it" >&2
    exit 1
  fi
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "run.sh: installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi

# Built once for all targets, optimized with debug assertions (overflow checks) and no sanitizer:
# the code under test is safe Rust, and without ASan a target runs about twice as often.
target_dir=${CARGO_TARGET_DIR:-$here/target}
cargo +nightly fuzz build --sanitizer none --target-dir "$target_dir"
bin_dir=$target_dir/x86_64-unknown-linux-gnu/release

# A target's dictionary: the JSON one, its own, or none (a new target needs no dictionary).
dictionary() {
  local file=dictionaries/$1.dict
  case $1 in symbols_json | java_frames_json) file=dictionaries/json.dict ;; esac
  if [[ -f $file ]]; then echo "-dict=$file"; else echo "-print_final_stats=1"; fi
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p artifacts
failed=()
printf '%-18s %12s %8s %8s %8s %s\n' target executions seconds exec/s "RSS MiB" result
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  log=$scratch/$t.log
  status=0
  start=$SECONDS
  # -timeout: an input running 5 s is a hang. -rss_limit_mb: the whole process (corpus, coverage
  # tables and every leak of earlier inputs) stays under 512 MiB. -max_len: 16 KiB inputs.
  "$bin_dir/$t" -max_total_time="$seconds" -runs="$((runs > 0 ? runs : -1))" -timeout=5 \
    -rss_limit_mb=512 -max_len=16384 "$(dictionary "$t")" -print_final_stats=1 \
    -artifact_prefix="artifacts/$t-" "$scratch/$t" "corpus/$t" >"$log" 2>&1 || status=$?
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  result=ok
  if ((status)); then
    result="FAILED (exit $status): $(grep -m1 -E 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" || true)"
    failed+=("$t")
  fi
  printf '%-18s %12s %8s %8s %8s %s\n' "$t" "$(stat number_of_executed_units)" \
    "$((SECONDS - start))" "$(stat average_exec_per_sec)" "$(stat peak_rss_mb)" "$result"
  if ((status)); then
    tail -40 "$log" >&2
    echo "replay: $bin_dir/$t $(ls -t artifacts/"$t"-* 2>/dev/null | head -1)" >&2
  fi
done
if ((${#failed[@]})); then
  echo "run.sh: fuzzing found problems in: ${failed[*]} (inputs in $here/artifacts/)" >&2
  exit 1
fi
