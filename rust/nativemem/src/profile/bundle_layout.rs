//! The file names of an incident bundle that the analysis reads (a bundle named to `analyze`
//! stands for its heap profile). The memory watch writes bundles in Java, whose names are in
//! `dev.nativemem.incident.layout.BundleLayout`; `BundleLayoutTest` holds each name here equal to the
//! constant of the same name there.

/// What the bundle holds: its presence makes a directory a bundle.
pub const MANIFEST: &str = "manifest.json";

/// The heap profile inside a bundle; its sidecar is `profile.heap.symbols/`.
pub const PROFILE: &str = "profile.heap";
