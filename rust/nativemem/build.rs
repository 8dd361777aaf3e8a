//! Generates the pprof types from the published `profile.proto` and the OTLP profiles types from
//! opentelemetry-proto's `v1development` files (commit ac2c4b5, the version the Collector v0.165.0
//! accepts): protox parses them in Rust (no system `protoc`, so a fresh machine builds with cargo
//! alone), prost-build writes the types.

const PROTOS: [&str; 2] = [
    "proto/profile.proto",
    "proto/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    // `import_rewriting`: where the import-rewriting engine (sampling::glibc) is built, Linux on
    // x86-64 and aarch64 (its relocation types, register capture and unwinder are per architecture).
    println!("cargo::rustc-check-cfg=cfg(import_rewriting)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os == "linux" && (arch == "x86_64" || arch == "aarch64") {
        println!("cargo:rustc-cfg=import_rewriting");
    }
    let descriptors = protox::compile(PROTOS, ["proto/"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
