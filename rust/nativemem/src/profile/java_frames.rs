//! Names of the Java frames a dump holds as synthetic addresses (`jvm::frame_addresses`), from
//! the sidecar's `java-frames.json`: `java.util.zip.Inflater.<init>(Inflater.java:NN)`.

use crate::files::{read_capped, Links};
use crate::jvm::frame_addresses::{FIRST_FRAME, MORE_FRAMES};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

use crate::sidecar_layout::{JAVA_FRAMES_FILE as FILE, JAVA_FRAMES_FORMAT as FORMAT};
/// One short entry per distinct frame, at most 65536 of them.
const MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, Deserialize)]
struct NamesFile {
    format: String,
    frames: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    index: u32,
    #[serde(default)]
    class: Option<String>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    source_file: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    bci: i32,
}

/// A Java frame as the analysis shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaFrame {
    /// `java.util.zip.Inflater.<init>(Inflater.java:42)`.
    pub name: String,
    pub source_file: Option<String>,
    pub line: u32,
}

/// The names of one dump's Java frames (empty without a names file).
#[derive(Debug, Default)]
pub struct JavaFrameNames {
    frames: HashMap<u32, JavaFrame>,
}

impl JavaFrameNames {
    /// Reads `<sidecar>/java-frames.json`; a missing file is no names, a bad one a warning.
    pub fn read(sidecar: &Path) -> Result<JavaFrameNames, String> {
        let path = sidecar.join(FILE);
        let bytes = match read_capped(&path, Links::Refuse, MAX_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(JavaFrameNames::default())
            }
            Err(e) => return Err(format!("skipped {}: {e}", path.display())),
        };
        Self::parse(&bytes)
            .map_err(|e| format!("skipped {}: {e}; Java frames stay unnamed", path.display()))
    }

    pub(super) fn parse(bytes: &[u8]) -> Result<JavaFrameNames, String> {
        let file: NamesFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if file.format != FORMAT {
            return Err(format!("format '{}' is not '{FORMAT}'", file.format));
        }
        let frames = file
            .frames
            .into_iter()
            .map(|e| (e.index, named(e)))
            .collect();
        Ok(JavaFrameNames { frames })
    }

    /// The frame an index stands for; a marker or an unnamed frame says what it is.
    pub fn frame(&self, index: u32) -> JavaFrame {
        if let Some(frame) = self.frames.get(&index) {
            return frame.clone();
        }
        let name = if index == MORE_FRAMES {
            "[more Java frames: table full]".to_owned()
        } else if index < FIRST_FRAME {
            format!("[Java frames unavailable: {}]", agct_error(index))
        } else {
            format!("[Java frame #{index}: no name in the sidecar]")
        };
        JavaFrame {
            name,
            source_file: None,
            line: 0,
        }
    }
}

fn named(entry: Entry) -> JavaFrame {
    let (Some(class), Some(method)) = (entry.class, entry.method) else {
        return JavaFrame {
            name: "[Java method of an unloaded class]".to_owned(),
            source_file: None,
            line: 0,
        };
    };
    let place = match (&entry.source_file, entry.line) {
        _ if entry.bci == -3 => "Native Method".to_owned(),
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        (None, _) => "Unknown Source".to_owned(),
    };
    JavaFrame {
        name: format!("{class}.{method}({place})"),
        source_file: entry.source_file,
        line: entry.line.unwrap_or(0),
    }
}

/// AsyncGetCallTrace's failure codes (HotSpot forte.cpp).
fn agct_error(code: u32) -> &'static str {
    match code {
        1 => "no class load events",
        2 => "GC active",
        3 => "unknown frame, not Java",
        4 => "frame not walkable, not Java",
        5 => "unknown Java frame",
        6 => "Java frame not walkable",
        7 => "unknown thread state",
        8 => "thread exiting",
        9 => "in deoptimization",
        10 => "at a safepoint",
        _ => "AsyncGetCallTrace error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_like_java_stack_traces() {
        let names = JavaFrameNames::parse(
            br#"{"format":"nativemem-java-frames/1","address_base":"0x4000000000000000","frames":[
            {"index":32,"bci":7,"class":"java.util.zip.Inflater","method":"<init>","signature":"(Z)V","source_file":"Inflater.java","line":111},
            {"index":33,"bci":-3,"class":"java.util.zip.Inflater","method":"init","signature":"(Z)J","source_file":"Inflater.java","line":null},
            {"index":34,"bci":3,"unresolved":"JVMTI GetMethodName failed: INVALID_METHODID"}]}"#,
        )
        .unwrap();
        assert_eq!(
            names.frame(32).name,
            "java.util.zip.Inflater.<init>(Inflater.java:111)"
        );
        assert_eq!(names.frame(32).line, 111);
        assert_eq!(
            names.frame(33).name,
            "java.util.zip.Inflater.init(Native Method)"
        );
        assert_eq!(names.frame(34).name, "[Java method of an unloaded class]");
        assert_eq!(names.frame(0).name, "[more Java frames: table full]");
        assert_eq!(names.frame(2).name, "[Java frames unavailable: GC active]");
        assert!(names.frame(99).name.contains("#99"));
        assert!(JavaFrameNames::parse(br#"{"format":"x","frames":[]}"#).is_err());
    }
}
