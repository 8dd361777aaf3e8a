//! Generates the pprof types from the published `profile.proto`: protox parses it in Rust (no
//! system `protoc`, so a fresh machine builds with cargo alone), prost-build writes the types.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/profile.proto");
    let descriptors = protox::compile(["proto/profile.proto"], ["proto/"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
