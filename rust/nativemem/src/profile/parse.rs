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
    let mut dump = scan(
        path,
        input,
        &mut |addresses: &[u64], counts| {
            stacks.push(RawStack {
                addresses: addresses.to_vec(),
                counts,
            })
        },
        None,
    )?;
    dump.stacks = stacks;
    Ok(dump)
}

/// A dump opened for reading stack by stack, without holding its stacks: each byte read once
/// when its memory map (which comes last) is found at its end; else read once through to check
/// it and find the map, then again.
pub struct Stream {
    path: PathBuf,
    how: Pass,
}

enum Pass {
    /// The map was read from the end. `first_line` was read already; the stacks are what `rest`
    /// holds (the file up to where `window` starts), then `window` (the end of the file up to the
    /// `MAPPED_LIBRARIES:` line).
    One {
        first_line: Vec<u8>,
        rest: BufReader<std::io::Take<Counted<File>>>,
        window: Vec<u8>,
        mappings: MemoryMap,
    },
    /// The file was read through already: read it again from its start.
    Again(File),
}

/// Opens the dump at `path` for [`Stream::for_each`] and reads what naming its stacks needs: its
/// sample interval and memory map. The map is read from the end of the file, every line checked,
/// and the stacks are then read once, by `for_each`. With `check_first`, or when the map is not
/// found at the end (a truncated dump, a map larger than [`MAX_MAPS_WINDOW`]), the whole dump is
/// read and checked first, so that no stack is given from a dump found damaged further on. The
/// header's warnings are complete only in the dump `for_each` returns. A dump the user named
/// follows a link (`Links::Follow`); one found in a directory or by a pattern does not.
pub fn open_stream(
    path: &Path,
    links: Links,
    check_first: bool,
) -> Result<(HeapDump, Stream), ProfileError> {
    let file = open_dump(path, links)?;
    let read_error = |source| ProfileError::Read {
        path: path.to_owned(),
        source,
    };
    let found = match check_first {
        true => None,
        false => maps_from_end(&file).map_err(read_error)?,
    };
    if let Some((window_start, mut window, maps_at)) = found {
        if let Some(mappings) = parse_maps(&window[maps_at..]) {
            window.truncate(start_of_line_before(&window, maps_at));
            let mut rest = BufReader::with_capacity(
                READ_BUFFER,
                Counted(file.try_clone().map_err(read_error)?).take(window_start),
            );
            // The header line may reach into the window (a dump of a few lines).
            let mut first_line = Vec::new();
            (&mut rest)
                .chain(&window[..])
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut first_line)
                .map_err(read_error)?;
            let from_window = first_line.len().saturating_sub(window_start as usize);
            window.drain(..from_window.min(window.len()));
            // The first line checked (and the sample interval read) here, the rest in `for_each`.
            let mut header = scan(path, &first_line[..], &mut |_, _| {}, Some(&mappings))?;
            header.warnings.clear();
            let stream = Stream {
                path: path.to_owned(),
                how: Pass::One {
                    first_line,
                    rest,
                    window,
                    mappings,
                },
            };
            return Ok((header, stream));
        }
    }
    let mut input = BufReader::with_capacity(READ_BUFFER, Counted(file));
    let header = scan(path, &mut input, &mut |_, _| {}, None)?;
    let stream = Stream {
        path: path.to_owned(),
        how: Pass::Again(input.into_inner().0),
    };
    Ok((header, stream))
}

impl Stream {
    /// Reads the dump's stacks, giving `on_stack` each stack (leaf address first) and its sampled
    /// counts; returns the dump's header, totals, memory map and every warning.
    pub fn for_each(
        self,
        on_stack: &mut dyn FnMut(&[u64], Counts),
    ) -> Result<HeapDump, ProfileError> {
        let path = self.path;
        match self.how {
            Pass::One {
                first_line,
                rest,
                window,
                mappings,
            } => {
                let input = (&first_line[..]).chain(rest).chain(&window[..]);
                scan(&path, input, on_stack, Some(&mappings))
            }
            Pass::Again(mut file) => {
                file.rewind().map_err(|source| ProfileError::Read {
                    path: path.clone(),
                    source,
                })?;
                scan(
                    &path,
                    BufReader::with_capacity(READ_BUFFER, Counted(file)),
                    on_stack,
                    None,
                )
            }
        }
    }
}

/// The most of a dump's end read to find its memory map: a process's map is rarely above a few
/// hundred KiB; a larger one (or none) is found by reading the dump through first.
pub const MAX_MAPS_WINDOW: u64 = 4 << 20;

/// The map's first line, alone on its line (spaces before it are allowed).
const MAPS_MARKER: &str = "MAPPED_LIBRARIES:";

fn is_maps_marker(line: &str) -> bool {
    line.trim().starts_with(MAPS_MARKER)
}

/// The end of `file` holding its last `MAPPED_LIBRARIES:` line: (where that end starts in the
/// file, its bytes, where the map's lines start in them); `None` when it holds no such whole
/// line.
fn maps_from_end(file: &File) -> std::io::Result<Option<(u64, Vec<u8>, usize)>> {
    use std::os::unix::fs::FileExt;
    let length = file.metadata()?.len();
    let start = length.saturating_sub(MAX_MAPS_WINDOW);
    let mut window = vec![0; (length - start) as usize];
    file.read_exact_at(&mut window, start)?;
    count_read(window.len());
    let marker = MAPS_MARKER.as_bytes();
    let mut end = window.len();
    while let Some(at) = window[..end]
        .windows(marker.len())
        .rposition(|w| w == marker)
    {
        let line_start = match window[..at].iter().rposition(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            // On the first line (not a dump) or starting before the window: the dump is read
            // through instead, which says what is wrong or finds the map.
            None => return Ok(None),
        };
        let line_end = window[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(window.len(), |i| at + i + 1);
        let line = std::str::from_utf8(&window[line_start..line_end]);
        if line_end - line_start <= MAX_LINE_BYTES
            && line.is_ok_and(|l| is_maps_marker(l.trim_end_matches(['\n', '\r'])))
        {
            return Ok(Some((start, window, line_end)));
        }
        end = at;
    }
    Ok(None)
}

/// Where the line before `at` (which starts a line) starts.
fn start_of_line_before(bytes: &[u8], at: usize) -> usize {
    let before = &bytes[..at.saturating_sub(1)];
    before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// The map's lines; `None` when one is too long or not text, or starts a second map (the dump
/// is then read through first, to say at which line).
fn parse_maps(bytes: &[u8]) -> Option<MemoryMap> {
    let mut lines = Lines {
        input: bytes,
        path: Path::new(""),
        number: 0,
    };
    let mut buffer = Vec::new();
    let mut mappings = Vec::new();
    loop {
        match lines.next(&mut buffer) {
            Ok(Some(line)) if is_maps_marker(line) => return None,
            Ok(Some(line)) => mappings.extend(Mapping::parse(line)),
            Ok(None) => return Some(MemoryMap::new(mappings)),
            Err(_) => return None,
        }
    }
}

thread_local! {
    static BYTES_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_read(bytes: usize) {
    BYTES_READ.with(|read| read.set(read.get() + bytes as u64));
}

/// Bytes of dumps this thread has read: a dump streamed is read once.
pub fn dump_bytes_read() -> u64 {
    BYTES_READ.with(|read| read.get())
}

/// A dump file, its bytes read counted ([`dump_bytes_read`]).
struct Counted<R>(R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.0.read(buffer)?;
        count_read(read);
        Ok(read)
    }
}

/// The one parser: header, stacks (each given to `on_stack`), memory map.
/// With `maps` (read from the end of the dump), the input ends before its `MAPPED_LIBRARIES:`
/// line.
fn scan(
    path: &Path,
    input: impl BufRead,
    on_stack: &mut dyn FnMut(&[u64], Counts),
    maps: Option<&MemoryMap>,
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
        if is_maps_marker(line) {
            if maps.is_some() {
                return Err(lines.malformed(SECOND_MAP.into()));
            }
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
    if let Some(maps) = maps {
        dump.mappings = maps.clone();
    } else if maps_found {
        let mut mappings = Vec::new();
        while let Some(line) = lines.next(&mut buffer)? {
            if is_maps_marker(line) {
                return Err(lines.malformed(SECOND_MAP.into()));
            }
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

/// Why a dump with two memory maps is refused: its stacks would be named by the one or the other
/// depending on how it is read.
const SECOND_MAP: &str =
    "a second MAPPED_LIBRARIES: line (one dump's memory map follows its stacks)";

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
