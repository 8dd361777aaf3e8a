//! Tests only: see `tests/block_cache.rs`.
