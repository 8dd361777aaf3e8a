#!/usr/bin/env bash
# CycloneDX SBOMs of the two shipped native libraries (libnativemem.so, libnativemem_jemalloc.so):
# the crates compiled into each, for the jar's platform, without build dependencies. Needs
# cargo-cyclonedx (`cargo install cargo-cyclonedx --locked`, minutes to compile, so CI does not run
# this; a release does). Writes target/sbom/<library>.cdx.json.
#   build/crates-sbom.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo cyclonedx --version >/dev/null 2>&1; then
  echo "crates-sbom.sh: cargo-cyclonedx is missing: cargo install cargo-cyclonedx --locked" >&2
  exit 1
fi
mkdir -p target/sbom
for crate in nativemem nativemem-jemalloc; do
  cargo cyclonedx --manifest-path "rust/$crate/Cargo.toml" --describe binaries --no-build-deps \
    --target x86_64-unknown-linux-gnu --spec-version 1.5 --format json --quiet
done
# cargo-cyclonedx writes beside each workspace member's Cargo.toml.
for sbom in rust/*/*.cdx.json; do
  mv "$sbom" target/sbom/
done
ls target/sbom
