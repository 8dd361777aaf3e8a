//! Generates the pprof types from the published `profile.proto` (prost; needs `protoc`).

fn main() -> std::io::Result<()> {
    println!("cargo:rerun-if-changed=proto/profile.proto");
    prost_build::compile_protos(&["proto/profile.proto"], &["proto/"])
}
