//! The symbol sidecar a dump writer leaves beside a dump: `<dump name>.symbols/symbols.json`,
//! with saved copies of deleted or extracted libraries and of the JVM's perf map.
//!
//! ```json
//! {"format":"nativemem-symbols/1","pid":1,"host":"web-1","time_ms":1,
//!  "objects":[{"path":"/abs/lib.so","build_id":"<hex or empty>","deleted":false,"copy":null}],
//!  "perf_map":"perf-1.map"}
//! ```
//! An object that should have been copied and was not has `"missing": "<why>"` (optional; a
//! reader of this format ignores keys it does not know).
//! A dump without a sidecar is analysed from the files named in its memory map.

use super::java_frames::JavaFrameNames;
use crate::files::{read_capped, Links, MAX_PERF_MAP_BYTES};
use crate::sidecar_layout::{dir_beside, SYMBOLS_FILE, SYMBOLS_FORMAT as FORMAT};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `symbols.json` lists one short entry per mapped object: a few hundred KiB at most.
pub const MAX_SYMBOLS_JSON_BYTES: u64 = 64 << 20;

#[derive(Debug, Deserialize)]
struct SymbolsFile {
    format: String,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    time_ms: Option<u64>,
    #[serde(default)]
    objects: Vec<SavedObject>,
    #[serde(default)]
    perf_map: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SavedObject {
    path: String,
    #[serde(default)]
    build_id: String,
    #[serde(default)]
    copy: Option<String>,
    #[serde(default)]
    missing: Option<String>,
}

/// What the sidecar says about one mapped object.
#[derive(Debug, Clone, Default)]
pub struct ObjectRecord {
    /// Lower-case hex build id at dump time; empty when unknown.
    pub build_id: String,
    /// A saved copy to read instead of the path in the maps.
    pub copy: Option<PathBuf>,
    /// Why no copy was saved of an object that needed one (deleted, or in the temp directory).
    pub missing: Option<String>,
}

/// The process a dump came from, as its sidecar tells (each part absent when not told).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub pid: Option<u32>,
    pub host: Option<String>,
    pub time_ms: Option<u64>,
}

/// A loaded sidecar (possibly empty).
#[derive(Debug, Default)]
pub struct Sidecar {
    pub origin: Origin,
    objects: HashMap<String, ObjectRecord>,
    perf_map: PerfMap,
    java_frames: JavaFrameNames,
    /// Why the sidecar was ignored or partly unusable.
    pub warnings: Vec<String>,
}

/// When the dump was taken, from its sidecar's `symbols.json` (read as `beside` reads it).
pub fn time_ms_beside(dump: &Path) -> Option<u64> {
    let json = dir_beside(dump).join(SYMBOLS_FILE);
    let bytes = read_capped(&json, Links::Refuse, MAX_SYMBOLS_JSON_BYTES).ok()?;
    let file: SymbolsFile = serde_json::from_slice(&bytes).ok()?;
    (file.format == FORMAT).then_some(file.time_ms).flatten()
}

impl Sidecar {
    /// Reads `<dump>.symbols/symbols.json`, or returns an empty sidecar if there is none.
    pub fn beside(dump: &Path) -> Sidecar {
        let dir = dir_beside(dump);
        let json = dir.join(SYMBOLS_FILE);
        let ignored = |reason: String| Sidecar {
            warnings: vec![format!(
                "ignored {}: {reason}; symbols come from the files named in the dump",
                json.display()
            )],
            ..Sidecar::default()
        };
        match read_capped(&json, Links::Refuse, MAX_SYMBOLS_JSON_BYTES) {
            Ok(bytes) => Sidecar::from_json(&dir, &bytes).unwrap_or_else(ignored),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Sidecar::default(),
            Err(e) => ignored(e.to_string()),
        }
    }

    pub(super) fn from_json(dir: &Path, bytes: &[u8]) -> Result<Sidecar, String> {
        let file: SymbolsFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if file.format != FORMAT {
            return Err(format!("format '{}' is not '{FORMAT}'", file.format));
        }
        let mut sidecar = Sidecar {
            origin: Origin {
                pid: file.pid,
                // A host name is at most 64 bytes (HOST_NAME_MAX); a longer one is not one.
                host: file.host.filter(|h| !h.is_empty() && h.len() <= 255),
                time_ms: file.time_ms,
            },
            ..Sidecar::default()
        };
        for object in file.objects {
            let copy = match object.copy {
                Some(relative) => Some(inside(dir, &relative)?),
                None => None,
            };
            let record = ObjectRecord {
                build_id: object.build_id.to_ascii_lowercase(),
                copy,
                missing: object.missing,
            };
            sidecar.objects.insert(object.path, record);
        }
        if let Some(relative) = file.perf_map {
            let path = inside(dir, &relative)?;
            match read_capped(&path, Links::Refuse, MAX_PERF_MAP_BYTES) {
                Ok(bytes) => sidecar.perf_map = PerfMap::parse(&bytes),
                Err(e) => sidecar.warnings.push(format!(
                    "skipped the perf map {}: it {e}; JIT-compiled Java frames stay unnamed",
                    path.display()
                )),
            }
        }
        match JavaFrameNames::read(dir) {
            Ok(names) => sidecar.java_frames = names,
            Err(warning) => sidecar.warnings.push(warning),
        }
        Ok(sidecar)
    }

    pub fn object(&self, path: &str) -> Option<&ObjectRecord> {
        self.objects.get(path)
    }

    pub fn perf_map(&self) -> &PerfMap {
        &self.perf_map
    }

    pub fn java_frames(&self) -> &JavaFrameNames {
        &self.java_frames
    }
}

/// Resolves a sidecar-relative path, refusing to leave the sidecar directory.
fn inside(dir: &Path, relative: &str) -> Result<PathBuf, String> {
    let relative = Path::new(relative);
    let escapes = relative.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    if escapes {
        return Err(format!(
            "'{}' leaves the sidecar directory",
            relative.display()
        ));
    }
    Ok(dir.join(relative))
}

/// The JVM's `/tmp/perf-<pid>.map`: `<hex start> <hex size> <name>` for each compiled method.
///
/// Held compactly, whatever the file: 24 bytes per entry and the names' bytes, with no spare
/// capacity and no second copy of the text, so a file of the shortest lines (`0 1 a`, 6 bytes)
/// takes about 4.2 times its size (at most 5: a name that is not UTF-8 grows as it is replaced
/// by U+FFFD) and a real one (about 60 bytes a line) well under its size.
#[derive(Debug, Default)]
pub struct PerfMap {
    /// (start, end, offset and length of the name in `names`), sorted by start, then by line.
    entries: Vec<(u64, u64, u32, u32)>,
    names: String,
}

impl PerfMap {
    /// Parses the bytes of a perf map; a name that is not UTF-8 is read lossily, a line that is
    /// not an entry is skipped.
    pub fn parse(bytes: &[u8]) -> PerfMap {
        // Counted first, so that each buffer is allocated once at its final size.
        let (mut count, mut name_bytes) = (0usize, 0usize);
        for (_, _, name) in perf_map_lines(bytes) {
            count += 1;
            name_bytes += String::from_utf8_lossy(name).len();
        }
        let mut map = PerfMap {
            entries: Vec::with_capacity(count),
            names: String::with_capacity(name_bytes),
        };
        for (start, size, name) in perf_map_lines(bytes) {
            let name = String::from_utf8_lossy(name);
            let (Ok(offset), Ok(length)) =
                (u32::try_from(map.names.len()), u32::try_from(name.len()))
            else {
                break; // 4 GiB of names: beyond any perf map read (MAX_PERF_MAP_BYTES)
            };
            map.names.push_str(&name);
            map.entries
                .push((start, start.saturating_add(size), offset, length));
        }
        // In place (no scratch buffer); equal starts keep file order by name offset.
        map.entries.sort_unstable_by_key(|e| (e.0, e.2));
        map
    }

    /// The method whose code contains `address`; a later entry wins over an overlapping older
    /// one (code cache space is reused).
    pub fn find(&self, address: u64) -> Option<&str> {
        let after = self.entries.partition_point(|e| e.0 <= address);
        self.entries[..after]
            .iter()
            .rev()
            .take(8)
            .find(|e| address < e.1)
            .map(|e| &self.names[e.2 as usize..(e.2 + e.3) as usize])
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The entries of a perf map's lines: start, size and the name (trimmed, not empty).
fn perf_map_lines(bytes: &[u8]) -> impl Iterator<Item = (u64, u64, &[u8])> {
    bytes.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut parts = line.splitn(3, |&b| b == b' ');
        let start = parse_hex(parts.next()?)?;
        let size = parse_hex(parts.next()?)?;
        let name = parts.next()?.trim_ascii();
        (!name.is_empty()).then_some((start, size, name))
    })
}

fn parse_hex(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    u64::from_str_radix(text.trim_start_matches("0x"), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_map_names_addresses_inside_methods() {
        let map = PerfMap::parse(
            b"7f0010 20 Interpreter\n7f0100 40 Ljava/util/HashMap;::resize\nbad line\n",
        );
        assert_eq!(map.find(0x7f0110), Some("Ljava/util/HashMap;::resize"));
        assert_eq!(map.find(0x7f0010), Some("Interpreter"));
        assert_eq!(map.find(0x7f0140), None);
        assert_eq!(map.find(0x10), None);
    }

    #[test]
    fn perf_map_keeps_the_later_of_overlapping_entries_and_reads_bad_names_lossily() {
        let map = PerfMap::parse(b"100 10 old\r\n100 10 new\n200 10 caf\xc3\xa9 \xff\n300 0 \n");
        assert_eq!(map.find(0x105), Some("new"));
        assert_eq!(map.find(0x200), Some("caf\u{e9} \u{fffd}"));
        assert_eq!(map.find(0x300), None);
    }

    /// Found while setting the perf_map fuzz target's heap bound (its counting allocator on a
    /// file of the shortest lines): 17 bytes of heap per byte of file (40-byte entries, a Vec
    /// grown by doubling, the whole text copied lossily), so the 512 MiB accepted could take
    /// 8.6 GiB. Now 4.2.
    #[test]
    fn perf_map_of_short_lines_takes_a_few_times_its_size() {
        let text = "0 1 a\n".repeat(100_000);
        let map = PerfMap::parse(text.as_bytes());
        let held = map.entries.capacity() * std::mem::size_of::<(u64, u64, u32, u32)>()
            + map.names.capacity();
        assert!(
            held <= text.len() * 9 / 2,
            "{held} bytes for {} of text",
            text.len()
        );
        assert_eq!(map.find(0), Some("a"));
    }

    #[test]
    fn reads_objects_and_perf_map_and_refuses_escapes() {
        let dir = std::env::temp_dir().join(format!("nativemem-sidecar-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("perf-1.map"), "1000 10 Lfoo;::bar\n").unwrap();
        let json = br#"{"format":"nativemem-symbols/1","pid":1,"time_ms":2,
            "objects":[{"path":"/x/lib.so","build_id":"ABCD","deleted":true,"copy":"objects/lib.so"}],
            "perf_map":"perf-1.map"}"#;
        let sidecar = Sidecar::from_json(&dir, json).unwrap();
        let record = sidecar.object("/x/lib.so").unwrap();
        assert_eq!(record.build_id, "abcd");
        assert_eq!(
            record.copy.as_deref(),
            Some(dir.join("objects/lib.so").as_path())
        );
        assert_eq!(sidecar.perf_map().find(0x1005), Some("Lfoo;::bar"));
        let missing = br#"{"format":"nativemem-symbols/1","objects":[{"path":"/tmp/libz.so",
            "build_id":"","deleted":true,"copy":null,"missing":"deleted after it was loaded"}]}"#;
        let sidecar = Sidecar::from_json(&dir, missing).unwrap();
        let record = sidecar.object("/tmp/libz.so").unwrap();
        assert_eq!(
            record.missing.as_deref(),
            Some("deleted after it was loaded")
        );
        let escape = br#"{"format":"nativemem-symbols/1","objects":[{"path":"/a","copy":"../../etc/passwd"}]}"#;
        assert!(Sidecar::from_json(&dir, escape).is_err());
        assert!(Sidecar::from_json(&dir, br#"{"format":"other/2"}"#).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
