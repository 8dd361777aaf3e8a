//! The preload allocator; built out in its own issue.
