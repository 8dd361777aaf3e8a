//! One module per job the Java side asks for in one native call: a request's JSON in, one answer
//! out, every file step on the file layer's descriptors ([`crate::files`]).
//!
//! - [`heap_dump`]: a heap profile dumped with its sidecar, then old default-named dumps pruned;
//! - [`watch_directory`]: the memory watch's directory opened once, made ready before each
//!   capture (room on the volume) and pruned after it;
//! - [`incident_bundle`]: a bundle begun under a temporary name and published under its own;
//! - [`directory`]: steps on a directory descriptor a job answered: a file replaced, a tree of
//!   ours removed, a child opened, the descriptor closed;
//! - [`bundle_files`]: the files of an incident bundle read at once for its page and verdict.

pub mod bundle_files;
pub mod directory;
pub mod heap_dump;
pub mod incident_bundle;
pub mod watch_directory;
