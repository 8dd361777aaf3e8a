//! One module per job the Java side asks for in one native call: a request's JSON in, one answer
//! out, every file step on the file layer's descriptors ([`crate::files`]).
//!
//! - [`heap_dump`]: a heap profile dumped with its sidecar, then old default-named dumps pruned.

pub mod heap_dump;
