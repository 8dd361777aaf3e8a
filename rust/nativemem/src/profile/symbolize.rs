//! Addresses → functions, files and lines, through the dump's memory map.
//!
//! Each mapped object is opened once (from the sidecar's saved copy when there is one) and
//! queried with DWARF (inlined frames included) or, lacking it, the symbol table. A symbol names
//! an address only when its `[address, address + size)` covers it: the nearest exported symbol
//! before a stripped object's static function is another function, whose name would mislead
//! (jeprof shows `inflateBackEnd` for zlib's static allocation hook). Addresses in no file are
//! looked up in the JVM perf map (JIT-compiled Java methods). Whatever cannot be named stays as
//! `module+0xoffset` (file offset), never dropped, and is marked [`Resolved::unnamed`] so that a
//! stack can say which named function it runs under ([`super::stacks`]); that name is made from
//! the address when it is shown ([`unnamed_name`]), not kept per address.

use super::demangle::demangle;
use super::dwarf_depth::{self, MAX_DWARF_DEPTH};
use super::mappings::{Mapping, MemoryMap};
use super::sidecar::Sidecar;
use crate::files::{fd_path, open_regular, Links};
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind, SymbolSection};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One function level of a location: several when calls were inlined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Demangled full name (with arguments for C++).
    pub function: String,
    pub file: Option<String>,
    pub line: u32,
}

/// What an address resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Innermost (inlined callee) first, the function that contains the code last; none for
    /// unnamed code.
    pub lines: Vec<Line>,
    /// Index in the dump's memory map.
    pub mapping: Option<usize>,
    /// The code is in a shared library that carries jemalloc (it exports `mallctl`): allocator
    /// machinery, whatever its (often stripped) symbols say.
    pub in_allocator: bool,
    /// A Java frame recorded by the backtrace hook: its name reads like a Java stack trace's
    /// line and is shown as it is.
    pub java: bool,
    /// Nothing names this code (no covering symbol, no debug info, no perf-map entry): it has no
    /// lines, and is shown as [`unnamed_name`] makes it (`module+0xoffset`, or the bare address
    /// outside any file).
    pub unnamed: bool,
    /// For unnamed code, the symbol nearest below it: not its name, only a hint that it is the
    /// allocator's (a stripped jemalloc's static functions lie between its exports).
    pub nearest_symbol: Option<String>,
}

/// Symbolizes addresses of one dump; caches each object file.
pub struct Symbolizer<'m> {
    map: &'m MemoryMap,
    sidecar: Sidecar,
    /// Mapped file name → its object in `cache` (`None`: it could not be read).
    objects: HashMap<String, Option<usize>>,
    /// The object files opened; a merge hands the same cache to the symbolizer of each dump
    /// ([`Symbolizer::cache`]), so each build is opened once.
    pub cache: ObjectCache,
    /// Objects that could not be read, once each.
    pub warnings: Vec<String>,
}

/// Object files opened to name addresses: a build (ELF build ID) is opened once, however many
/// dumps of a merge map it; a file without a build ID once per path.
#[derive(Default)]
pub struct ObjectCache {
    objects: Vec<ObjectFile>,
    /// Build ID (as read from the file) → its object.
    by_build_id: HashMap<String, usize>,
    /// (file opened, build ID expected) → its object, or why it could not be read.
    by_path: HashMap<(PathBuf, String), Result<usize, String>>,
    /// Object files opened and read (symbol table, debug info): one symbolization pass each.
    pub opened: usize,
}

impl std::fmt::Debug for ObjectCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectCache")
            .field("objects", &self.objects.len())
            .field("opened", &self.opened)
            .finish()
    }
}

impl ObjectCache {
    /// The object at `path` that should have `build_id` (empty: not known), opened if no object
    /// of that build and no earlier attempt at that path is cached; else why it cannot be read.
    fn get_or_open(&mut self, path: &Path, build_id: &str) -> Result<usize, String> {
        if let Some(&known) = (!build_id.is_empty())
            .then(|| self.by_build_id.get(build_id))
            .flatten()
        {
            return Ok(known);
        }
        let key = (path.to_owned(), build_id.to_owned());
        if let Some(known) = self.by_path.get(&key) {
            return known.clone();
        }
        self.opened += 1;
        // The maps and the sidecar name files by their real paths: a link there is planted.
        let opened = ObjectFile::open(path, build_id, Links::Refuse).map(|object| {
            let index = self.objects.len();
            if !object.build_id.is_empty() {
                self.by_build_id.insert(object.build_id.clone(), index);
            }
            self.objects.push(object);
            index
        });
        self.by_path.insert(key, opened.clone());
        opened
    }
}

struct ObjectFile {
    /// Its DWARF reader; `None` when the debug info nests too deep to read safely
    /// ([`super::dwarf_depth`]): the symbol table names its functions then.
    loader: Option<addr2line::Loader>,
    /// Why part of the object was not read, said once when it is opened.
    warning: Option<String>,
    symbols: SymbolTable,
    /// PT_LOAD segments: (file offset, file size, virtual address).
    segments: Vec<(u64, u64, u64)>,
    is_allocator: bool,
    /// The ELF build ID in lowercase hex; empty when the file has none.
    build_id: String,
}

impl<'m> Symbolizer<'m> {
    pub fn new(map: &'m MemoryMap, sidecar: Sidecar) -> Symbolizer<'m> {
        let warnings = sidecar.warnings.clone();
        Symbolizer {
            map,
            sidecar,
            objects: HashMap::new(),
            cache: ObjectCache::default(),
            warnings,
        }
    }

    /// Names the code at `address` (a return address already moved back into the call).
    pub fn resolve(&mut self, address: u64) -> Resolved {
        if let Some(index) = crate::jvm::frame_addresses::index_of(address) {
            let frame = self.sidecar.java_frames().frame(index);
            return Resolved {
                lines: vec![Line {
                    function: frame.name,
                    file: frame.source_file,
                    line: frame.line,
                }],
                mapping: None,
                in_allocator: false,
                java: true,
                unnamed: false,
                nearest_symbol: None,
            };
        }
        let Some(index) = self.map.find(address) else {
            let lines = self.perf_map_frame(address);
            return Resolved {
                unnamed: lines.is_empty(),
                lines,
                mapping: None,
                in_allocator: false,
                java: false,
                nearest_symbol: None,
            };
        };
        let mapping = self.map.get(index);
        let offset = mapping.file_offset_of(address);
        let found = match mapping.file().map(str::to_owned) {
            Some(file) => self.lookup(&file, offset).unwrap_or_default(),
            None => Found::default(),
        };
        let lines = match found.lines.is_empty() {
            true => self.perf_map_frame(address),
            false => found.lines,
        };
        let unnamed = lines.is_empty();
        Resolved {
            lines,
            mapping: Some(index),
            in_allocator: found.in_allocator,
            java: false,
            unnamed,
            nearest_symbol: found.nearest_symbol.filter(|_| unnamed),
        }
    }

    /// The build ID (lowercase hex) of a mapped file: the one read from the file when it was
    /// opened to name an address, else the sidecar's; empty when neither knows it.
    pub fn build_id(&self, file: &str) -> &str {
        match self.objects.get(file) {
            Some(&Some(object)) => &self.cache.objects[object].build_id,
            _ => self
                .sidecar
                .object(file)
                .map_or("", |o| o.build_id.as_str()),
        }
    }

    /// The perf map's Java method at `address`, if any.
    fn perf_map_frame(&self, address: u64) -> Vec<Line> {
        let method = self.sidecar.perf_map().find(address);
        method.map(java_frame).into_iter().collect()
    }

    fn lookup(&mut self, file: &str, offset: u64) -> Option<Found> {
        if !self.objects.contains_key(file) {
            let opened = self.open(file);
            self.objects.insert(file.to_owned(), opened);
        }
        let object = &self.cache.objects[(*self.objects.get(file)?)?];
        let (lines, nearest_symbol) = object.lines(offset);
        Some(Found {
            lines,
            in_allocator: object.is_allocator,
            nearest_symbol,
        })
    }

    fn open(&mut self, file: &str) -> Option<usize> {
        let record = self.sidecar.object(file).cloned().unwrap_or_default();
        // Fuzzing (rust/nativemem/fuzz) feeds made-up maps: reading whatever file they name
        // (`/proc/self/exe`) would fuzz the file system, not our parsers. A sidecar's copy is
        // read: the `object_file` target writes generated ones.
        if cfg!(fuzzing) && record.copy.is_none() {
            self.warnings
                .push(format!("{file}: not read while fuzzing"));
            return None;
        }
        let missing = record.missing;
        let path: PathBuf = record.copy.unwrap_or_else(|| PathBuf::from(file));
        match self.cache.get_or_open(&path, &record.build_id) {
            Ok(object) => {
                if let Some(warning) = self.cache.objects[object].warning.take() {
                    self.warnings.push(warning);
                }
                Some(object)
            }
            // The sidecar says why it holds no copy: more than the path's "No such file".
            Err(reason) => {
                let reason = missing.unwrap_or(reason);
                self.warnings.push(format!(
                    "{}: {reason}; its frames are shown as module+offset",
                    path.display()
                ));
                None
            }
        }
    }
}

/// What an object file says of an offset.
#[derive(Default)]
struct Found {
    lines: Vec<Line>,
    in_allocator: bool,
    nearest_symbol: Option<String>,
}

impl ObjectFile {
    fn open(path: &Path, expected_build_id: &str, links: Links) -> Result<ObjectFile, String> {
        let data = open_regular(path, links).map_err(|e| e.to_string())?;
        // Readers below reopen by name: give them the file just checked.
        let checked = fd_path(&data);
        let cache = object::ReadCache::new(data.try_clone().map_err(|e| e.to_string())?);
        let file = object::File::parse(&cache).map_err(|e| format!("not an object file ({e})"))?;
        let actual: String = match file.build_id() {
            Ok(Some(id)) => id.iter().map(|b| format!("{b:02x}")).collect(),
            _ => String::new(),
        };
        if !expected_build_id.is_empty() && actual != expected_build_id {
            return Err(format!(
                "build id {actual} differs from {expected_build_id} at dump time (the file \
                 changed, or the dump comes from another machine)"
            ));
        }
        let segments = file
            .segments()
            .filter_map(|s| {
                let (offset, size) = s.file_range();
                (size > 0).then(|| (offset, size, s.address()))
            })
            .collect();
        let exports = |wanted: &[&str]| {
            file.dynamic_symbols()
                .any(|s| s.is_definition() && s.name().is_ok_and(|n| wanted.contains(&n)))
        };
        // A library with jemalloc's API, not a program that happens to export it.
        let is_allocator =
            exports(&["mallctl", "_rjem_mallctl", "je_mallctl"]) && !exports(&["main"]);
        // Stripped libraries name their static functions only in the separate debug file.
        let debug = separate_debug_file(&file, path).and_then(|debug_path| {
            // Debug files are reached through build-id links: follow them, but only to a file.
            let debug = open_regular(&debug_path, Links::Follow).ok()?;
            let cache = object::ReadCache::new(debug.try_clone().ok()?);
            let parsed = object::File::parse(&cache).ok()?;
            let depth = dwarf_depth::deepest(&parsed, MAX_DWARF_DEPTH);
            let symbols = SymbolTable::from_object(&parsed);
            Some((debug, depth, symbols, debug_path))
        });
        // The debug file stays open while its DWARF reader opens it by descriptor path.
        let (_debug_file, loaded, depth, symbols, shown) = match debug {
            Some((debug, depth, symbols, shown)) => {
                let loaded = fd_path(&debug);
                (Some(debug), loaded, depth, symbols, shown)
            }
            None => (
                None,
                checked.clone(),
                dwarf_depth::deepest(&file, MAX_DWARF_DEPTH),
                SymbolTable::from_object(&file),
                path.to_owned(),
            ),
        };
        let (loader, warning) = match depth {
            Ok(depth) if depth <= MAX_DWARF_DEPTH => (
                Some(addr2line::Loader::new(&loaded).map_err(|e| e.to_string())?),
                None,
            ),
            Ok(_) => (
                None,
                Some(format!(
                    "{}: its debug info nests more than {MAX_DWARF_DEPTH} levels deep (no \
                     compiler makes that; a crafted file?), so only its symbol table names its \
                     functions",
                    shown.display()
                )),
            ),
            Err(e) => (
                None,
                Some(format!(
                    "{}: its debug info cannot be read ({e}), so only its symbol table names its \
                     functions",
                    shown.display()
                )),
            ),
        };
        Ok(ObjectFile {
            loader,
            warning,
            symbols,
            segments,
            is_allocator,
            build_id: actual,
        })
    }

    /// The virtual address (as linked) of a file offset.
    fn virtual_address(&self, offset: u64) -> u64 {
        self.segments
            .iter()
            .find(|(start, size, _)| offset >= *start && offset - start < *size)
            .map_or(offset, |(start, _, vaddr)| offset - start + vaddr)
    }

    /// The functions at `offset`, innermost first; when none has a name, the symbol nearest
    /// below (which is not its name) instead.
    fn lines(&self, offset: u64) -> (Vec<Line>, Option<String>) {
        let probe = self.virtual_address(offset);
        let mut lines = Vec::new();
        let frames = self.loader.as_ref().map(|l| l.find_frames(probe));
        if let Some(Ok(mut frames)) = frames {
            while let Ok(Some(frame)) = frames.next() {
                let Some(name) = frame.function.as_ref().and_then(|f| f.raw_name().ok()) else {
                    continue;
                };
                let location = frame.location.as_ref();
                lines.push(Line {
                    function: demangle(&name),
                    file: location.and_then(|l| l.file).map(str::to_owned),
                    line: location.and_then(|l| l.line).unwrap_or(0),
                });
            }
        }
        // Line-tables-only debug info names functions without their path (`push` for
        // `alloc::vec::Vec<T>::push`): the symbol of the containing function says it in full.
        let symbol = self.symbols.find(probe);
        if let (Some(outer), Some(Symbol::Exact(symbol))) = (lines.last_mut(), &symbol) {
            let full = demangle(symbol);
            if full.len() > outer.function.len() && full.ends_with(&format!("::{}", outer.function))
            {
                outer.function = full;
            }
        }
        if !lines.is_empty() {
            return (lines, None);
        }
        match symbol {
            Some(Symbol::Exact(name)) => {
                let location = self
                    .loader
                    .as_ref()
                    .and_then(|l| l.find_location(probe).ok().flatten());
                lines.push(Line {
                    function: demangle(name),
                    file: location.as_ref().and_then(|l| l.file).map(str::to_owned),
                    line: location.as_ref().and_then(|l| l.line).unwrap_or(0),
                });
                (lines, None)
            }
            Some(Symbol::Nearest(name)) => (lines, Some(demangle(name))),
            None => (lines, None),
        }
    }
}

/// Code symbols by address: functions and the untyped labels of assembly code (`_start`,
/// `_dl_start_user`), as `nm` lists them; an address takes the nearest symbol at or below it if
/// that symbol covers it (an unsized label covers everything up to the next symbol).
struct SymbolTable {
    /// (address, size, name), by address.
    entries: Vec<(u64, u64, String)>,
}

/// The symbol an address falls under.
#[derive(Debug, PartialEq, Eq)]
enum Symbol<'t> {
    /// The symbol's `[address, address + size)` covers the address.
    Exact(&'t str),
    /// Only the nearest symbol below, which ends before the address: the code is another
    /// function (a static one of a stripped object, whose name is gone).
    Nearest(&'t str),
}

impl SymbolTable {
    fn from_object<'d, R: object::ReadRef<'d>>(file: &object::File<'d, R>) -> SymbolTable {
        let from = |symbols: &mut dyn Iterator<Item = object::Symbol<'d, '_, R>>| {
            symbols
                .filter(|s| {
                    matches!(s.kind(), SymbolKind::Text | SymbolKind::Unknown)
                        && matches!(s.section(), SymbolSection::Section(_))
                })
                .filter_map(|s| {
                    let name = s.name().ok()?;
                    let label = name.is_empty() || name.starts_with('$') || name.starts_with(".L");
                    // Prefer a function to a label at the same address.
                    let rank = u8::from(s.kind() != SymbolKind::Text);
                    (!label).then(|| (s.address(), rank, s.size(), name.to_owned()))
                })
                .collect::<Vec<_>>()
        };
        let mut entries = from(&mut file.symbols());
        if entries.is_empty() {
            entries = from(&mut file.dynamic_symbols());
        }
        entries.sort();
        entries.dedup_by_key(|e| e.0);
        SymbolTable {
            entries: entries.into_iter().map(|(a, _, z, n)| (a, z, n)).collect(),
        }
    }

    fn find(&self, address: u64) -> Option<Symbol<'_>> {
        let after = self.entries.partition_point(|e| e.0 <= address);
        let (start, size, name) = self.entries.get(after.checked_sub(1)?)?;
        // An unsized label (assembly's `_start`) runs to the next symbol, as `nm` reads it.
        Some(if address - start < *size || *size == 0 {
            Symbol::Exact(name)
        } else {
            Symbol::Nearest(name)
        })
    }
}

/// Where distributions install debug info: by build id, else by `.gnu_debuglink` name.
const DEBUG_ROOT: &str = "/usr/lib/debug";

/// A directory laid out like [`DEBUG_ROOT`] searched first: where a user unpacked nativemem's own
/// `debug` artifact (its libraries ship without DWARF), or any other `.build-id` tree.
const DEBUG_DIR_VARIABLE: &str = "NATIVEMEM_DEBUG_DIR";

fn debug_roots() -> impl Iterator<Item = PathBuf> {
    let user = std::env::var_os(DEBUG_DIR_VARIABLE).filter(|dir| !dir.is_empty());
    user.map(PathBuf::from)
        .into_iter()
        .chain(std::iter::once(PathBuf::from(DEBUG_ROOT)))
}

/// The separate debug file of a stripped object, as binutils and gdb find it.
fn separate_debug_file<'d, R: object::ReadRef<'d>>(
    file: &object::File<'d, R>,
    path: &Path,
) -> Option<PathBuf> {
    if let Ok(Some(id)) = file.build_id() {
        if id.len() > 1 {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let by_id = Path::new(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]));
            if let Some(found) = debug_roots()
                .map(|root| root.join(&by_id))
                .find(|candidate| candidate.is_file())
            {
                return Some(found);
            }
        }
    }
    let (name, _crc) = file.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let dir = path.parent()?;
    let relative_dir = dir.strip_prefix("/").unwrap_or(dir);
    [
        dir.join(name),
        dir.join(".debug").join(name),
        Path::new(DEBUG_ROOT).join(relative_dir).join(name),
    ]
    .into_iter()
    .find(|candidate| candidate.is_file() && candidate != path)
}

/// A JIT-compiled method from the perf map, shown as a Java method name.
fn java_frame(method: &str) -> Line {
    Line {
        function: java_method_name(method),
        file: None,
        line: 0,
    }
}

/// `Ljava/util/HashMap;::resize` (older JDKs) → `java.util.HashMap::resize`; names already in
/// source form are kept as they are.
pub fn java_method_name(perf_map_name: &str) -> String {
    let name = perf_map_name.trim();
    match name.strip_prefix('L').and_then(|n| n.split_once(";::")) {
        Some((class, method)) => format!("{}::{method}", class.replace('/', ".")),
        None => name.to_owned(),
    }
}

/// The name of unnamed code at `address` in `mapping` (the dump's mapping holding it, if any):
/// `module+0xoffset` (file offset) in a file; the bare address outside any file, and in
/// anonymous memory (a JIT code cache), which has no module to be relative to.
pub fn unnamed_name(mapping: Option<&Mapping>, address: u64) -> String {
    match mapping.filter(|m| m.file().is_some()) {
        Some(m) => format!("{}+0x{:x}", m.module_name(), m.file_offset_of(address)),
        None => format!("0x{address:x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::fuzzing::{nested_inlined_subroutines, sidecar_object, CODE_AT};
    use crate::profile::mappings::Mapping;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nativemem-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A sidecar's object with 20,000 nested DW_TAG_inlined_subroutine entries (340 KB): its
    /// DWARF would overflow the stack of any thread in addr2line's recursive parse (SIGSEGV);
    /// it is left unread, said once, and the analysis goes on.
    #[test]
    fn debug_info_nested_twenty_thousand_deep_is_not_read() {
        let dir = scratch("dwarf-deep");
        let object = nested_inlined_subroutines(20_000);
        let (resolved, warnings) = sidecar_object(&dir, &object, &[CODE_AT + 16, CODE_AT]).unwrap();
        assert!(resolved.iter().all(|r| r.unnamed), "{resolved:?}");
        let said: Vec<_> = warnings
            .iter()
            .filter(|w| w.contains("nests more than 256 levels"))
            .collect();
        assert_eq!(said.len(), 1, "{warnings:?}");
        assert!(said[0].contains("objects/lib.so"), "{said:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Debug info just within the bound is read, on a thread with a Java thread's 1 MiB stack.
    #[test]
    fn debug_info_at_the_bound_is_read_on_a_small_stack() {
        let dir = scratch("dwarf-bound");
        let object = nested_inlined_subroutines(MAX_DWARF_DEPTH - 2);
        let on_thread = dir.clone();
        let (resolved, warnings) = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || sidecar_object(&on_thread, &object, &[CODE_AT + 16]).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<_> = resolved[0]
            .lines
            .iter()
            .map(|l| l.function.as_str())
            .collect();
        assert_eq!(names, ["f"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_addresses_keep_module_and_offset() {
        let map = MemoryMap::new(vec![Mapping::parse(
            "1000-2000 r-xp 00004000 0:0 1 /nonexistent/libgone.so",
        )
        .unwrap()]);
        let mut symbolizer = Symbolizer::new(&map, Sidecar::default());
        let resolved = symbolizer.resolve(0x1010);
        assert!(resolved.lines.is_empty() && resolved.unnamed);
        assert_eq!(resolved.mapping, Some(0));
        assert_eq!(unnamed_name(Some(map.get(0)), 0x1010), "libgone.so+0x4010");
        let outside = symbolizer.resolve(0x5);
        assert!(outside.lines.is_empty() && outside.unnamed);
        assert_eq!(outside.mapping, None);
        assert_eq!(unnamed_name(None, 0x5), "0x5");
        assert_eq!(symbolizer.warnings.len(), 1, "{:?}", symbolizer.warnings);
    }

    /// A library deleted after loading that the dump could not copy (a user without access to
    /// /proc/self/map_files): the warning names it and says why, not "No such file".
    #[test]
    fn an_object_the_sidecar_could_not_copy_is_warned_of_with_the_sidecars_reason() {
        let map = MemoryMap::new(vec![Mapping::parse(
            "1000-2000 r-xp 00000000 0:0 1 /tmp/libzstd-jni-1.5.so (deleted)",
        )
        .unwrap()]);
        let json =
            br#"{"format":"nativemem-symbols/1","objects":[{"path":"/tmp/libzstd-jni-1.5.so",
            "build_id":"","deleted":true,"copy":null,"missing":"deleted after it was loaded, and no copy was saved: this user cannot read /proc/self/map_files"}]}"#;
        let sidecar = Sidecar::from_json(Path::new("/nonexistent"), json).unwrap();
        let mut symbolizer = Symbolizer::new(&map, sidecar);
        assert!(symbolizer.resolve(0x1010).unnamed);
        assert_eq!(symbolizer.warnings.len(), 1, "{:?}", symbolizer.warnings);
        let warning = &symbolizer.warnings[0];
        assert!(
            warning.starts_with("/tmp/libzstd-jni-1.5.so: deleted after it was loaded")
                && warning.contains("/proc/self/map_files")
                && warning.ends_with("its frames are shown as module+offset")
                && !warning.contains("No such file"),
            "{warning}"
        );
    }

    #[test]
    fn a_name_is_given_only_where_its_symbol_covers_the_address() {
        let table = SymbolTable {
            entries: vec![(0x100, 0x20, "inflate".into()), (0x200, 0, "_start".into())],
        };
        assert_eq!(table.find(0x11f), Some(Symbol::Exact("inflate")));
        assert_eq!(table.find(0x120), Some(Symbol::Nearest("inflate")));
        assert_eq!(table.find(0x210), Some(Symbol::Exact("_start")));
        assert_eq!(table.find(0xff), None);
    }

    #[test]
    fn java_names_read_like_source() {
        assert_eq!(
            java_method_name("Ljava/util/HashMap;::resize"),
            "java.util.HashMap::resize"
        );
        assert_eq!(java_method_name("void Foo.bar(int)"), "void Foo.bar(int)");
    }

    #[test]
    fn names_functions_of_this_test_binary() {
        // This test's own executable is mapped in /proc/self/maps: resolve one of its functions.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let map = MemoryMap::new(maps.lines().filter_map(Mapping::parse).collect());
        let mut symbolizer = Symbolizer::new(&map, Sidecar::default());
        let address = java_method_name as *const () as u64;
        let resolved = symbolizer.resolve(address);
        let names: Vec<_> = resolved.lines.iter().map(|l| l.function.as_str()).collect();
        assert!(
            names
                .iter()
                .any(|n| n.ends_with("symbolize::java_method_name")),
            "{names:?}"
        );
        assert!(resolved.lines.iter().any(|l| l
            .file
            .as_deref()
            .is_some_and(|f| f.ends_with("symbolize.rs"))));
    }
}
