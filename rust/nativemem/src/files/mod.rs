//! The one file layer: directories opened once, every later step on their descriptors
//! (SECURITY.md). It serves dumps and their sidecars, profile outputs, the agent's report, the
//! memory watch's bundles and the incident page's reads.
//!
//! - [`walk`]: a directory path opened component by component, no link of another user followed;
//! - [`dir`]: the directory handle: children made 0700 and checked on their descriptors, files
//!   made `O_EXCL|O_NOFOLLOW` 0600 under a temporary name and renamed with `RENAME_NOREPLACE`;
//! - [`new_file`]: a new file for the user at a path (the directory checked once);
//! - [`listing`]: entries of a handle with their owner and type, links not followed;
//! - [`tree`]: removing and measuring trees of ours, never following a link or touching another
//!   user's entry;
//! - [`space`]: free bytes of a handle's file system;
//! - [`error`]: [`FileError`], which every step above returns;
//! - [`checked`]: reading files others may have planted (no FIFO, device or link; capped).

pub mod checked;
pub mod dir;
pub mod error;
pub mod listing;
pub mod new_file;
pub mod space;
pub mod tree;
pub mod walk;

pub use checked::{
    fd_path, open_regular, open_regular_at, read_capped, read_capped_at, read_capped_in_root,
    Links, MAX_PERF_MAP_BYTES,
};
pub use dir::Dir;
pub use error::FileError;
pub use new_file::{create_private, parent_of, write_new, Purpose};
pub use tree::remove_tree;

#[cfg(test)]
mod tests;
