//! The symbol sidecar's layout, declared once for its writer (`sampling`) and its reader
//! (`profile`): `<dump file name>.symbols/` beside a dump, holding `symbols.json`, the saved
//! objects in `objects/`, the JVM's perf map and the names of Java frames.

use std::path::{Path, PathBuf};

/// What the sidecar directory's name adds to the dump's file name.
pub const DIR_SUFFIX: &str = ".symbols";
/// The mapped objects, with build-ids and saved copies, the process, host and time.
pub const SYMBOLS_FILE: &str = "symbols.json";
/// The format tag of [`SYMBOLS_FILE`].
pub const SYMBOLS_FORMAT: &str = "nativemem-symbols/1";
/// The directory of saved copies of objects that will not be on disk later.
pub const OBJECTS_DIR: &str = "objects";
/// A copy of the JVM's perf map, which names JIT frames.
pub const PERF_MAP_FILE: &str = "perf.map";
/// The names of the synthetic Java frames a dump holds.
pub const JAVA_FRAMES_FILE: &str = "java-frames.json";
/// The format tag of [`JAVA_FRAMES_FILE`].
pub const JAVA_FRAMES_FORMAT: &str = "nativemem-java-frames/1";

/// `<dump file name>.symbols` next to the dump.
pub fn dir_beside(dump: &Path) -> PathBuf {
    let mut name = dump.file_name().unwrap_or_default().to_os_string();
    name.push(DIR_SUFFIX);
    dump.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecar_sits_beside_its_dump() {
        assert_eq!(
            dir_beside(Path::new("/data/app.heap")),
            Path::new("/data/app.heap.symbols")
        );
    }
}
