#!/usr/bin/env bash
# Splits the DWARF of each shipped native library into a separate file found by build id.
#
#   split-debug-info.sh NATIVE_ROOT DEBUG_ROOT
#
# Each NATIVE_ROOT/<platform>/*.so keeps its symbol table (frames in profiles keep their function
# names) and loses its debug sections; the sections go to DEBUG_ROOT/.build-id/<xx>/<rest>.debug,
# the layout gdb, binutils and nativemem's symbolizer search (/usr/lib/debug, or
# NATIVEMEM_DEBUG_DIR). objcopy and readelf come with binutils, which every C compiler on Linux
# brings; aarch64 libraries are rewritten by the cross binutils (aarch64-linux-gnu-objcopy, with
# gcc-aarch64-linux-gnu), which build/cross-aarch64.sh needs anyway.
set -euo pipefail
shopt -s nullglob
native_root=$1
debug_root=$2
for lib in "$native_root"/*/*.so; do
  case $(readelf --file-header "$lib" | sed -n 's/^ *Machine: *//p') in
    AArch64) tools=aarch64-linux-gnu- ;;
    *) tools= ;;
  esac
  # Each tool's whole output captured, never cut short by a reader that stops early: with
  # pipefail, `readelf | grep -q` fails when grep exits before readelf's last write (SIGPIPE),
  # which left a library with many sections unsplit.
  notes=$("${tools}readelf" --notes "$lib")
  id=$(sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' <<< "$notes")
  id=${id%%$'\n'*}
  if [[ ${#id} -lt 4 ]]; then
    echo "split-debug-info: $lib has no GNU build id; cannot name its debug file" >&2
    exit 1
  fi
  sections=$("${tools}readelf" --section-headers "$lib")
  if [[ $sections != *.debug_info* ]]; then
    continue # already split (an incremental build that did not relink)
  fi
  debug_file="$debug_root/.build-id/${id:0:2}/${id:2}.debug"
  mkdir -p "$(dirname "$debug_file")"
  "${tools}objcopy" --only-keep-debug "$lib" "$debug_file"
  "${tools}objcopy" --strip-debug --add-gnu-debuglink="$debug_file" "$lib"
  chmod 0644 "$debug_file"
done
