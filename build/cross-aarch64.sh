#!/usr/bin/env bash
# Cross-builds the two native libraries for Linux aarch64 and puts them beside the x86-64 ones.
#
#   cross-aarch64.sh MODE NATIVE_ROOT TARGET_DIR
#   cross-aarch64.sh test TARGET_DIR       the unit tests of the three crates, under qemu-user
#
# MODE is the Maven property nativemem.aarch64: `auto` builds when the cross toolchain is installed
# and otherwise says that the jar carries linux-x86_64 alone; `required` fails without the
# toolchain (test.sh, hence CI and releases); `skip` builds nothing. NATIVE_ROOT is the jar's
# dev/nativemem/native directory (the libraries go to NATIVE_ROOT/linux-aarch64/), TARGET_DIR
# cargo's target directory for this build.
#
# The toolchain is Debian's (bookworm): rustc-web and cargo-web (at /usr/bin, called by path:
# rustup's cargo comes first on PATH and has no aarch64 standard library), libstd-rust-web-dev:arm64
# (after `dpkg --add-architecture arm64`), gcc-aarch64-linux-gnu and libc6-dev-arm64-cross.
# jemalloc is built for 64 KiB pages: configure cannot probe the page size when cross-compiling
# and would assume 4 KiB, and a jemalloc built for 4 KiB pages refuses to start on the 16 KiB and
# 64 KiB kernels of some aarch64 distributions; one built for 64 KiB runs on all three.
set -euo pipefail
mode=$1
native_root=${2:-}
target_dir=${3:-}
triple=aarch64-unknown-linux-gnu
packages="rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross"

case $mode in
  test)
    target_dir=$2
    command -v qemu-aarch64-static >/dev/null \
      || { echo "cross-aarch64: qemu-aarch64-static is missing: apt-get install qemu-user-static" >&2; exit 1; }
    ;;
  skip)
    echo "nativemem: aarch64 build skipped (-Dnativemem.aarch64=skip): this jar carries linux-x86_64 only"
    exit 0
    ;;
  auto | required) ;;
  *)
    echo "cross-aarch64: nativemem.aarch64 is '$mode'; expected auto, required or skip" >&2
    exit 2
    ;;
esac

missing=()
[[ -x /usr/bin/cargo && -x /usr/bin/rustc ]] || missing+=("Debian's cargo and rustc at /usr/bin")
if [[ -x /usr/bin/rustc ]]; then
  libdir=$(/usr/bin/rustc --print target-libdir --target "$triple" 2>/dev/null || true)
  compgen -G "$libdir/libstd-*.rlib" >/dev/null || missing+=("the aarch64 standard library")
fi
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=("aarch64-linux-gnu-gcc")
if ((${#missing[@]})); then
  listed=$(printf '%s, ' "${missing[@]}")
  why="no aarch64 cross toolchain (missing: ${listed%, })"
  fix="dpkg --add-architecture arm64 && apt-get update && apt-get install $packages"
  if [[ $mode != auto ]]; then
    echo "cross-aarch64: $why; install it ($fix) or build with -Dnativemem.aarch64=auto" >&2
    exit 1
  fi
  echo "nativemem: $why: this jar carries linux-x86_64 only. For linux-aarch64 too: $fix"
  exit 0
fi

cd "$(dirname "$0")/.."
echo "nativemem: building the linux-aarch64 libraries (cargo-web, cross; minutes when cold)"
export CARGO_TARGET_DIR=$target_dir
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export AARCH64_UNKNOWN_LINUX_GNU_JEMALLOC_SYS_WITH_LG_PAGE=16
if [[ $mode == test ]]; then
  # No binfmt_misc registration is needed (or made): cargo runs each test binary through qemu,
  # and the tests that start their own binary again do so through NATIVEMEM_TEST_RUNNER; the
  # import-rewriting tests compile their planted C libraries with NATIVEMEM_TEST_CC.
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64-static
  export NATIVEMEM_TEST_RUNNER=qemu-aarch64-static
  export NATIVEMEM_TEST_CC=aarch64-linux-gnu-gcc
  exec /usr/bin/cargo test --quiet --release --target "$triple" --workspace --no-fail-fast
fi
/usr/bin/cargo build --quiet --release --target "$triple" -p nativemem -p nativemem-jemalloc
out=$native_root/linux-aarch64
mkdir -p "$out"
for lib in libnativemem.so libnativemem_jemalloc.so; do
  cp "$target_dir/$triple/release/$lib" "$out/$lib"
done
echo "nativemem: built linux-aarch64 libraries into $out"
