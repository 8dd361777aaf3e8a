//! Streaming reader for jemalloc `heap_v2` dumps.
//!
//! ```text
//! heap_v2/<sample interval bytes>
//!   t*: <objects>: <bytes> [<cum objects>: <cum bytes>]     totals, then one line per thread
//! @ 0x<leaf> 0x<caller> ...                                  one stack ...
//!   t*: <objects>: <bytes> [0: 0]                            ... its totals, then per thread
//! MAPPED_LIBRARIES:
//! <a copy of /proc/<pid>/maps>
//! ```
//! Lines are read one at a time with a length cap, so memory grows with the number of stacks
//! kept, never with a single hostile line.

use super::mappings::{Mapping, MemoryMap};
use super::ProfileError;
use crate::files::{open_regular, Links};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::{Path, PathBuf};

/// The longest line accepted: a 128-frame stack is about 2.5 KiB, a maps line at most ~4 KiB.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// jemalloc accepts `lg_prof_sample` up to 62.
pub const MAX_SAMPLE_INTERVAL: u64 = 1 << 62;

/// Sampled counts from a `t*` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub objects: u64,
    pub bytes: u64,
}

/// One `@` stack and its `t*` counts, as sampled (biased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawStack {
    /// Return addresses, leaf first, exactly as written.
    pub addresses: Vec<u64>,
    pub counts: Counts,
}

/// A parsed dump.
#[derive(Debug, Clone)]
pub struct HeapDump {
    pub path: PathBuf,
    /// Mean bytes between samples (`lg_prof_sample`): the N of `heap_v2/N`.
    pub sample_interval: u64,
    /// The dump's own totals (header `t*` line), as sampled.
    pub totals: Counts,
    pub stacks: Vec<RawStack>,
    pub mappings: MemoryMap,
    /// What was odd but not fatal (a missing maps section, a stack without counts).
    pub warnings: Vec<String>,
}

/// Reads and parses the dump at `path`.
pub fn read(path: &Path) -> Result<HeapDump, ProfileError> {
    // The user names the dump, so a link is followed; a FIFO or device is refused, not read.
    let file = open_dump(path, Links::Follow)?;
    parse(path, BufReader::with_capacity(READ_BUFFER, file))
}

const READ_BUFFER: usize = 256 * 1024;

fn open_dump(path: &Path, links: Links) -> Result<File, ProfileError> {
    open_regular(path, links).map_err(|source| ProfileError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Parses a dump from `input`; `path` only names it in messages.
pub fn parse(path: &Path, input: impl BufRead) -> Result<HeapDump, ProfileError> {
    let mut stacks = Vec::new();
    let mut dump = scan(path, input, &mut |addresses: &[u64], counts| {
        stacks.push(RawStack {
            addresses: addresses.to_vec(),
            counts,
        })
    })?;
    dump.stacks = stacks;
    Ok(dump)
}

/// A dump read once through (checked whole, its memory map kept) and ready to be read again
/// stack by stack, through the same descriptor, without holding its stacks.
pub struct Stream {
    path: PathBuf,
    file: File,
}

/// Reads the dump at `path` once: its header, memory map (which comes last) and warnings, every
/// line checked; its stacks are left for [`Stream::for_each`]. A dump the user named follows a
/// link (`Links::Follow`); one found in a directory or by a pattern does not.
pub fn open_stream(path: &Path, links: Links) -> Result<(HeapDump, Stream), ProfileError> {
    let mut input = BufReader::with_capacity(READ_BUFFER, open_dump(path, links)?);
    let header = scan(path, &mut input, &mut |_, _| {})?;
    let stream = Stream {
        path: path.to_owned(),
        file: input.into_inner(),
    };
    Ok((header, stream))
}

impl Stream {
    /// Reads the dump again, giving `on_stack` each stack (leaf address first) and its sampled
    /// counts.
    pub fn for_each(
        mut self,
        on_stack: &mut dyn FnMut(&[u64], Counts),
    ) -> Result<(), ProfileError> {
        let path = self.path;
        self.file.rewind().map_err(|source| ProfileError::Read {
            path: path.clone(),
            source,
        })?;
        scan(
            &path,
            BufReader::with_capacity(READ_BUFFER, self.file),
            on_stack,
        )
        .map(|_| ())
    }
}

/// The one parser: header, stacks (each given to `on_stack`), memory map.
fn scan(
    path: &Path,
    input: impl BufRead,
    on_stack: &mut dyn FnMut(&[u64], Counts),
) -> Result<HeapDump, ProfileError> {
    let mut lines = Lines {
        input,
        path,
        number: 0,
    };
    let mut buffer = Vec::with_capacity(4096);
    let first = match lines.next(&mut buffer)? {
        Some(line) => line.to_owned(),
        None => {
            return Err(ProfileError::Empty {
                path: path.to_owned(),
            })
        }
    };
    let sample_interval = first
        .strip_prefix("heap_v2/")
        .and_then(|n| n.trim().parse::<u64>().ok())
        .ok_or_else(|| ProfileError::NotHeapV2 {
            path: path.to_owned(),
            first_line: first.chars().take(80).collect(),
        })?;
    if sample_interval > MAX_SAMPLE_INTERVAL {
        return Err(lines.malformed(format!(
            "sample interval {sample_interval} is beyond jemalloc's largest (2^62, \
             lg_prof_sample 62)"
        )));
    }

    let mut dump = HeapDump {
        path: path.to_owned(),
        sample_interval,
        totals: Counts::default(),
        stacks: Vec::new(),
        mappings: MemoryMap::default(),
        warnings: Vec::new(),
    };
    let mut seen_totals = false;
    let mut stacks_seen = false;
    // Whether a stack's `t*` line is still expected; its addresses.
    let mut open = false;
    let mut addresses: Vec<u64> = Vec::with_capacity(128);
    let mut stacks_without_counts = 0u64;
    let mut maps_found = false;
    while let Some(line) = lines.next(&mut buffer)? {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("MAPPED_LIBRARIES:") {
            maps_found = true;
            break;
        }
        if let Some(text) = line.strip_prefix('@') {
            if open {
                stacks_without_counts += 1;
            }
            parse_addresses(text, &mut addresses).map_err(|reason| lines.malformed(reason))?;
            open = true;
            stacks_seen = true;
        } else if line.starts_with('t') {
            let (thread, counts) = parse_counts(line).map_err(|reason| lines.malformed(reason))?;
            if thread != "*" {
                continue; // per-thread lines repeat what `t*` says in total
            }
            if open {
                open = false;
                on_stack(&addresses, counts);
            } else if !seen_totals && !stacks_seen {
                dump.totals = counts;
                seen_totals = true;
            } else {
                return Err(lines.malformed("a second t* line for the same stack".into()));
            }
        } else {
            return Err(lines.malformed(format!(
                "expected '@ <addresses>', 't*: <objects>: <bytes> [..]' or 'MAPPED_LIBRARIES:', \
                 found '{}'",
                line.chars().take(60).collect::<String>()
            )));
        }
    }
    if open {
        stacks_without_counts += 1;
    }
    if stacks_without_counts > 0 {
        dump.warnings.push(format!(
            "{stacks_without_counts} stack(s) without a t* line were skipped (truncated dump?)"
        ));
    }
    if !seen_totals {
        dump.warnings
            .push("no totals line after the header (truncated dump?)".into());
    }
    if maps_found {
        let mut mappings = Vec::new();
        while let Some(line) = lines.next(&mut buffer)? {
            mappings.extend(Mapping::parse(line));
        }
        dump.mappings = MemoryMap::new(mappings);
    } else {
        dump.warnings.push(format!(
            "{NO_MAPS} (truncated dump?): addresses cannot be named"
        ));
    }
    Ok(dump)
}

/// The warning of a dump that ends before its memory map.
pub const NO_MAPS: &str = "no MAPPED_LIBRARIES section";

/// Parses the addresses of an `@` line into `out` (replacing what it held).
fn parse_addresses(text: &str, out: &mut Vec<u64>) -> Result<(), String> {
    out.clear();
    for word in text.split_ascii_whitespace() {
        let hex = word
            .strip_prefix("0x")
            .or_else(|| word.strip_prefix("0X"))
            .unwrap_or(word);
        out.push(
            u64::from_str_radix(hex, 16)
                .map_err(|_| format!("'{}' is not a hex address", truncate(word)))?,
        );
    }
    Ok(())
}

/// Parses `t<id>: <objects>: <bytes> [<objects>: <bytes>]` into the thread id and first pair.
fn parse_counts(line: &str) -> Result<(&str, Counts), String> {
    let bad = || {
        format!(
            "'{}' is not 't*: <objects>: <bytes> [<objects>: <bytes>]'",
            truncate(line)
        )
    };
    let (thread, rest) = line[1..].split_once(':').ok_or_else(bad)?;
    if thread != "*" && thread.parse::<u64>().is_err() {
        return Err(bad());
    }
    let (now, cumulative) = rest.split_once('[').ok_or_else(bad)?;
    let cumulative = cumulative.trim_end().strip_suffix(']').ok_or_else(bad)?;
    let pair = |text: &str| -> Result<Counts, String> {
        let (objects, bytes) = text.split_once(':').ok_or_else(bad)?;
        let number = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        Ok(Counts {
            objects: number(objects)?,
            bytes: number(bytes)?,
        })
    };
    pair(cumulative)?;
    Ok((thread, pair(now)?))
}

fn truncate(text: &str) -> String {
    text.chars().take(60).collect()
}

/// Lines with a number for messages and a cap on their length.
struct Lines<'p, R> {
    input: R,
    path: &'p Path,
    number: u64,
}

impl<R: BufRead> Lines<'_, R> {
    /// The next line, without its line break, read into `buffer`.
    fn next<'b>(&mut self, buffer: &'b mut Vec<u8>) -> Result<Option<&'b str>, ProfileError> {
        buffer.clear();
        self.number += 1;
        let read = (&mut self.input)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', buffer)
            .map_err(|source| ProfileError::Read {
                path: self.path.to_owned(),
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        if buffer.len() > MAX_LINE_BYTES {
            return Err(self.malformed(format!("line longer than {MAX_LINE_BYTES} bytes")));
        }
        match std::str::from_utf8(buffer) {
            Ok(text) => Ok(Some(text.trim_end_matches(['\n', '\r']))),
            Err(_) => Err(self.malformed("binary data, not text".into())),
        }
    }

    fn malformed(&self, reason: String) -> ProfileError {
        ProfileError::Malformed {
            path: self.path.to_owned(),
            line: self.number,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<HeapDump, ProfileError> {
        parse(Path::new("test.heap"), text.as_bytes())
    }

    const SMALL: &str = "heap_v2/524288\n  t*: 3: 3072 [0: 0]\n  t0: 3: 3072 [0: 0]\n\
        @ 0x10 0x20 0x30\n  t*: 2: 2048 [0: 0]\n  t0: 2: 2048 [0: 0]\n\
        @ 0x11\n  t*: 1: 1024 [0: 0]\n\nMAPPED_LIBRARIES:\n\
        00000000-00001000 r-xp 00000000 fe:00 1  /bin/app\n";

    #[test]
    fn reads_header_stacks_and_maps() {
        let dump = parse_text(SMALL).unwrap();
        assert_eq!(dump.sample_interval, 524288);
        assert_eq!(
            dump.totals,
            Counts {
                objects: 3,
                bytes: 3072
            }
        );
        assert_eq!(dump.stacks.len(), 2);
        assert_eq!(dump.stacks[0].addresses, vec![0x10, 0x20, 0x30]);
        assert_eq!(
            dump.stacks[1].counts,
            Counts {
                objects: 1,
                bytes: 1024
            }
        );
        assert_eq!(dump.mappings.all().len(), 1);
        assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    }

    #[test]
    fn rejects_what_is_not_a_dump() {
        assert!(matches!(parse_text(""), Err(ProfileError::Empty { .. })));
        assert!(matches!(
            parse_text("hello world\n"),
            Err(ProfileError::NotHeapV2 { .. })
        ));
        assert!(matches!(
            parse_text("heap_v2/x\n"),
            Err(ProfileError::NotHeapV2 { .. })
        ));
        let err = parse_text("heap_v2/1\n@ 0xzz\n").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        let err = parse_text("heap_v2/1\n  t*: 1: x [0: 0]\n").unwrap_err();
        assert!(
            matches!(err, ProfileError::Malformed { line: 2, .. }),
            "{err}"
        );
        let err = parse_text("heap_v2/1\n\u{0}\u{1}\n").unwrap_err();
        assert!(matches!(err, ProfileError::Malformed { .. }), "{err}");
    }

    #[test]
    fn caps_line_length() {
        let text = format!("heap_v2/1\n@ {}\n", "0x1 ".repeat(MAX_LINE_BYTES));
        let err = parse_text(&text).unwrap_err();
        assert!(err.to_string().contains("longer than"), "{err}");
    }

    #[test]
    fn marks_truncated_dumps_as_partial() {
        let cut = &SMALL[..SMALL.find("@ 0x11").unwrap() + 6];
        let dump = parse_text(cut).unwrap();
        assert_eq!(dump.stacks.len(), 1);
        assert_eq!(dump.warnings.len(), 2, "{:?}", dump.warnings);
    }
}
