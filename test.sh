#!/usr/bin/env bash
# Runs every test of nativemem, installing first what the tests need and a fresh machine lacks.
#
#   ./test.sh            the whole suite (what CI runs)
#   ./test.sh --help     this text
#
# Needs JDK 17+, Rust stable (cargo with rustfmt and clippy), Maven 3.8+ and a C compiler, as the
# build does. The tests also use Debian packages: a second jemalloc to bind to and jeprof (the truth
# test of our analysis), libc debug symbols (jeprof and we name the same libc frames), libclang
# (bindgen), librocksdb (the block-cache truth test links it), and for Linux aarch64 Debian's Rust
# with its arm64 standard library, the cross C toolchain and qemu-user (build/cross-aarch64.sh).
# Run as root, the script installs the missing ones with apt-get (adding the arm64 architecture to
# dpkg); otherwise it prints the command to run and stops.
#
# Steps: Rust format and lints; `mvn verify` (Rust unit and integration tests, Java format, Java unit
# and end-to-end tests, the dependencies' licenses; the jar carries the linux-aarch64 libraries too,
# and the runtime matrix runs them in Debian's arm64 JRE under qemu-user); the Rust unit tests of the
# three crates built for aarch64 and run under qemu-user; the core jar built again and compared; the
# RocksDB block-cache truth test; each fuzz target of the parsers of untrusted input for 10 s on its
# committed corpus (rust/nativemem/fuzz/run.sh, which installs nightly Rust and cargo-fuzz when
# missing); the library's modules and end-to-end tests again on JDK 25 when
# /usr/lib/jvm/temurin-25-jdk-amd64 (or $JDK25_HOME) exists.
set -euo pipefail
cd "$(dirname "$0")"

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
if (($#)); then
  echo "test.sh: no arguments expected (got: $*); see ./test.sh --help" >&2
  exit 2
fi

packages=(libjemalloc2 libjemalloc-dev libc6-dbg libclang-dev librocksdb-dev chromium openjdk-17-jre-headless
  rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if ((EUID == 0)) && command -v apt-get >/dev/null; then
    echo "test.sh: installing the Debian packages the tests use: ${missing[*]}"
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "test.sh: the tests need these Debian packages, which are missing: ${missing[*]}" >&2
    echo "Install them, then run ./test.sh again:" >&2
    echo "  sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
for tool in cargo mvn java cc; do
  if ! command -v "$tool" >/dev/null; then
    echo "test.sh: '$tool' is not on PATH; the build needs JDK 17+, Rust stable, Maven 3.8+ and a C compiler" >&2
    exit 1
  fi
done
for component in fmt clippy; do
  if ! cargo "$component" --version >/dev/null 2>&1; then
    echo "test.sh: 'cargo $component' is missing: rustup component add $([[ $component == fmt ]] && echo rustfmt || echo clippy)" >&2
    exit 1
  fi
done

# Cargo's own builds (lints, the truth test) share one target directory per machine, not per clone.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nativemem/cargo-target}"

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
mvn -B verify -Dnativemem.aarch64=required
# The three crates' unit tests for aarch64, under qemu-user (the Maven build's aarch64 target dir).
build/cross-aarch64.sh test java/nativemem/target/rust-maven-plugin/aarch64
# The core module built again gives the same jars, byte for byte.
build/reproducible-jar.sh

# Heap profile analysis against RocksDB's own block-cache accounting (its own workspace, linked
# against Debian's librocksdb through its .cargo/config.toml, so cargo runs from that directory).
(cd tests/rust-rocksdb-truth && cargo test)

# Every parser of untrusted input (dumps, maps lines, sidecar files, perf maps, attach replies) fuzzed for a bounded
# time: a crash, a hang or memory beyond a parser's bound fails the run (SECURITY.md, "Fuzzing").
rust/nativemem/fuzz/run.sh --seconds 10

# The library's modules and end-to-end tests again on the newest JDK (format checked once, above);
# the real-application tests (tests-apps) run once, above: their frameworks are tested on JDK 17.
jdk25="${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
if [[ -x $jdk25/bin/java ]]; then
  JAVA_HOME=$jdk25 mvn -B verify -Dspotless.check.skip=true \
    -pl java/nativemem-bom,java/nativemem,java/nativemem-junit,java/nativemem-flink,java/nativemem-micrometer,java/nativemem-demo,tests,benchmarks
else
  echo "test.sh: no JDK 25 at $jdk25 (set JDK25_HOME): the JDK 25 run is skipped"
fi
