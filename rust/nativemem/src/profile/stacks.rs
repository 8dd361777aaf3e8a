//! Symbolized, unbiased, allocator-free stacks: what every output is rendered from.

use super::demangle::{is_short, short_name};
use super::fleet::table::{fingerprint, Ids};
use super::frame_kind::FrameKind;
use super::mappings::Mapping;
use super::parse::HeapDump;
use super::strip::is_allocator_frame;
use super::symbolize::{unnamed_name, Symbolizer};
use super::unbias::unbias;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::HashMap;

/// A function as pprof sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Function {
    /// jeprof's short name (no arguments or template parameters): the name sites are shown by.
    pub name: String,
    /// Demangled full name; for a Java frame `Class.method`, its line left to the location.
    pub full_name: String,
    pub file: Option<String>,
    /// A Java method named by the sidecar (its `name` ends in `(File.java:line)`).
    pub java: bool,
}

/// Code locations side by side (a few bytes each, no allocation of their own): each an address,
/// its mapping and the functions (inlined ones first) it belongs to, as `(function, line)` in one
/// array. Unnamed code has no function of its own: its name is made from its address and mapping
/// when it is shown ([`Stacks::unnamed_name`]), so a dump of millions of unnamed addresses keeps
/// no name per address.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    addresses: Vec<u64>,
    /// Index into [`Stacks::mappings`], or [`NO_MAPPING`].
    mappings: Vec<u32>,
    /// Where each location's lines end in `lines` (they start where the previous one's end).
    ends: Vec<u32>,
    lines: Vec<(u32, u32)>,
}

/// No mapping: the address is in no file of the dump's memory map.
const NO_MAPPING: u32 = u32::MAX;

impl Locations {
    /// Adds a location; `lines` (function index, line), innermost first, empty for unnamed code.
    pub fn push(&mut self, address: u64, mapping: Option<usize>, lines: &[(u32, u32)]) -> usize {
        self.addresses.push(address);
        self.mappings.push(mapping.map_or(NO_MAPPING, |m| m as u32));
        self.lines.extend_from_slice(lines);
        self.ends.push(self.lines.len() as u32);
        self.addresses.len() - 1
    }

    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty()
    }

    pub fn address(&self, location: usize) -> u64 {
        self.addresses[location]
    }

    /// Index into [`Stacks::mappings`].
    pub fn mapping(&self, location: usize) -> Option<usize> {
        let mapping = self.mappings[location];
        (mapping != NO_MAPPING).then_some(mapping as usize)
    }

    /// (function index, line), innermost first; empty for unnamed code.
    pub fn lines(&self, location: usize) -> &[(u32, u32)] {
        let start = match location {
            0 => 0,
            _ => self.ends[location - 1] as usize,
        };
        &self.lines[start..self.ends[location] as usize]
    }
}

/// One stack and its unbiased weight.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Location indices, leaf first, allocator frames removed.
    pub locations: Vec<usize>,
    pub objects: f64,
    pub bytes: f64,
}

/// The analysed content of a dump (or the difference of two).
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    pub functions: Vec<Function>,
    pub locations: Locations,
    pub samples: Vec<Sample>,
    pub mappings: Vec<Mapping>,
    pub sample_interval: u64,
    pub warnings: Vec<String>,
    /// Build IDs (lowercase hex) of the mapped files, where known.
    pub build_ids: HashMap<String, String>,
}

/// jeprof ignores addresses above this (fake entries seen on some systems).
const HIGHEST_ADDRESS: u64 = 0x7fff_ffff_ffff_ffff;

impl Stacks {
    /// Symbolizes, unbiases and strips the stacks of `dump`.
    pub fn from_dump(dump: &HeapDump, symbolizer: &mut Symbolizer) -> Stacks {
        let mut resolver = Resolver::new(dump, symbolizer);
        for raw in &dump.stacks {
            let mut locations = Vec::with_capacity(raw.addresses.len());
            resolver.locations(&raw.addresses, &mut locations);
            let (objects, bytes) =
                unbias(raw.counts.objects, raw.counts.bytes, dump.sample_interval);
            // jeprof leaves stacks that were allocator frames only out of every total.
            if !locations.is_empty() {
                resolver.stacks.samples.push(Sample {
                    locations,
                    objects,
                    bytes,
                });
            }
        }
        resolver.finish(dump)
    }

    /// Display names of each location, innermost first; inlined levels end in " (inline)".
    pub fn labels(&self) -> Labels {
        let mut names: Vec<String> = Vec::new();
        let mut ids: HashMap<String, usize> = HashMap::new();
        let per_location = (0..self.locations.len())
            .map(|location| {
                let mut labels = Vec::new();
                self.for_each_label(location, |label| {
                    let id = match ids.get(label) {
                        Some(&id) => id,
                        None => {
                            names.push(label.to_owned());
                            ids.insert(label.to_owned(), names.len() - 1);
                            names.len() - 1
                        }
                    };
                    labels.push(id);
                });
                labels
            })
            .collect();
        Labels {
            names,
            per_location,
        }
    }

    /// Calls `each` with the display name of each function of `location`, innermost first
    /// (inlined levels end in " (inline)"); unnamed code's name made from its address.
    pub fn for_each_label(&self, location: usize, mut each: impl FnMut(&str)) {
        let lines = self.locations.lines(location);
        if lines.is_empty() {
            return each(&self.unnamed_label(location));
        }
        let last = lines.len() - 1;
        for (level, &(function, _)) in lines.iter().enumerate() {
            let name = &self.functions[function as usize].name;
            match level < last {
                true => each(&label(name, level, last)),
                false => each(name),
            }
        }
    }

    /// The function of unnamed code at `location`, as it is shown: `module+0xoffset` (file
    /// offset), or the bare address outside any file.
    pub fn unnamed_function(&self, location: usize) -> Function {
        let full_name = self.unnamed_name(location);
        Function {
            name: short_name(&full_name),
            full_name,
            file: None,
            java: false,
        }
    }

    /// The shown (short) name of unnamed code at `location`: its [`Stacks::unnamed_function`]'s
    /// name, made without the copies shortening a name takes.
    fn unnamed_label(&self, location: usize) -> String {
        let name = self.unnamed_name(location);
        match is_short(&name) {
            true => name,
            false => short_name(&name),
        }
    }

    /// The name of unnamed code at `location` (see [`Stacks::unnamed_function`]).
    pub fn unnamed_name(&self, location: usize) -> String {
        let mapping = self.locations.mapping(location).map(|m| &self.mappings[m]);
        unnamed_name(mapping, self.locations.address(location))
    }

    /// The short name of a location's innermost function (unnamed code's made from its address).
    pub fn innermost_name(&self, location: usize) -> Cow<'_, str> {
        match self.locations.lines(location).first() {
            Some(&(function, _)) => Cow::Borrowed(&self.functions[function as usize].name),
            None => Cow::Owned(self.unnamed_label(location)),
        }
    }

    /// The labels of one sample's stack, leaf first, inlined levels expanded.
    pub fn frames<'a>(
        &self,
        labels: &'a Labels,
        sample: &'a Sample,
    ) -> impl Iterator<Item = usize> + 'a {
        sample
            .locations
            .iter()
            .flat_map(|&l| labels.per_location[l].iter().copied())
    }

    /// What kind of code `location` is, from its mapped file ([`FrameKind`]).
    pub fn kind(&self, location: usize) -> FrameKind {
        let path = self
            .locations
            .mapping(location)
            .map(|m| self.mappings[m].path.as_str());
        let lines = self.locations.lines(location);
        let function = lines.first().map(|&(f, _)| &self.functions[f as usize]);
        FrameKind::of(
            path,
            function.is_some_and(|f| f.java),
            function.is_some(),
            &self.innermost_name(location),
        )
    }

    pub fn total_bytes(&self) -> f64 {
        self.samples.iter().map(|s| s.bytes).sum()
    }

    pub fn total_objects(&self) -> f64 {
        self.samples.iter().map(|s| s.objects).sum()
    }
}

/// Interned display names of functions, and which of them each location expands to.
#[derive(Debug, Clone)]
pub struct Labels {
    pub names: Vec<String>,
    pub per_location: Vec<Vec<usize>>,
}

/// Turns a dump's raw stacks into locations, symbolizing each address once; the locations and
/// functions seen so far are in `stacks` (its samples are the caller's).
pub struct Resolver<'s, 'm> {
    symbolizer: &'s mut Symbolizer<'m>,
    builder: Builder,
    /// The location of each address seen (its code's, not one named after a caller), found by
    /// the fingerprint of the address.
    by_address: Ids,
    pub stacks: Stacks,
}

impl<'s, 'm> Resolver<'s, 'm> {
    pub fn new(dump: &HeapDump, symbolizer: &'s mut Symbolizer<'m>) -> Resolver<'s, 'm> {
        Resolver {
            symbolizer,
            builder: Builder::default(),
            by_address: Ids::default(),
            stacks: Stacks {
                mappings: dump.mappings.all().to_vec(),
                sample_interval: dump.sample_interval,
                ..Stacks::default()
            },
        }
    }

    /// The locations of a raw stack (return addresses, leaf first) into `out`, leaf first,
    /// without the allocator's frames; empty for a stack made only of them.
    pub fn locations(&mut self, addresses: &[u64], out: &mut Vec<usize>) {
        out.clear();
        for (i, &address) in addresses.iter().enumerate() {
            // Return addresses point after the call; step back into it (not the leaf).
            let address = if i == 0 {
                address
            } else {
                address.saturating_sub(1)
            };
            if address > HIGHEST_ADDRESS {
                continue;
            }
            let fingerprint = fingerprint(&address);
            let addresses = &self.stacks.locations.addresses;
            let known = self
                .by_address
                .find(fingerprint, |l| addresses[l as usize] == address);
            let location = match known {
                Some(location) => location as usize,
                None => {
                    let resolved = self.symbolizer.resolve(address);
                    let location = self.builder.location(&mut self.stacks, address, resolved);
                    self.by_address.insert(fingerprint, location as u32);
                    location
                }
            };
            if self.builder.allocator[location] {
                out.clear();
            } else {
                out.push(location);
            }
        }
        self.name_by_callers(out);
    }

    /// Completes each unnamed frame of a stack (leaf first) with the nearest named function
    /// that called it there: `libz.so.1+0x3a10 (called from inflateInit2_)`. The code's own name
    /// is gone (a stripped static function); its object, offset and caller say where it is.
    fn name_by_callers(&mut self, stack: &mut [usize]) {
        let mut caller = None;
        for slot in stack.iter_mut().rev() {
            let location = *slot;
            match self.stacks.locations.lines(location).first() {
                // The innermost level: an inlined function makes the call, not its container.
                Some(&(function, _)) => caller = Some(function),
                None => {
                    if let Some(function) = caller {
                        *slot = self
                            .builder
                            .called_from(&mut self.stacks, location, function);
                    }
                }
            }
        }
    }

    /// The build ID of a mapped file (see [`Symbolizer::build_id`]).
    pub fn build_id(&self, file: &str) -> &str {
        self.symbolizer.build_id(file)
    }

    /// The stacks, with the dump's and the symbolizer's warnings.
    pub fn finish(mut self, dump: &HeapDump) -> Stacks {
        for mapping in dump.mappings.all() {
            if let Some(file) = mapping.file() {
                let id = self.symbolizer.build_id(file);
                if !id.is_empty() {
                    self.stacks.build_ids.insert(file.to_owned(), id.to_owned());
                }
            }
        }
        self.stacks.warnings = dump.warnings.clone();
        self.stacks.warnings.append(&mut self.symbolizer.warnings);
        self.stacks
    }
}

/// The display name of a location's `level`-th function of `last + 1` (inlined ones marked).
pub fn label(name: &str, level: usize, last: usize) -> String {
    if level < last {
        format!("{name} (inline)")
    } else {
        name.to_owned()
    }
}

/// `Class.method` of a Java frame's name `Class.method(File.java:42)`.
pub fn java_method(name: &str) -> &str {
    match name.strip_suffix(')').and_then(|n| n.rfind('(')) {
        Some(at) => &name[..at],
        None => name,
    }
}

#[derive(Default)]
struct Builder {
    /// The functions of [`Stacks::functions`], found by their hash: each kept once, not again
    /// as a key.
    functions: Ids,
    /// Per location: whether it is an allocator frame.
    allocator: Vec<bool>,
    /// (unnamed location, calling function) → the location naming it after that caller.
    called_from: FxHashMap<(usize, u32), usize>,
    lines: Vec<(u32, u32)>,
}

impl Builder {
    fn location(
        &mut self,
        stacks: &mut Stacks,
        address: u64,
        resolved: super::symbolize::Resolved,
    ) -> usize {
        let java = resolved.java;
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        for line in resolved.lines {
            let function = Function {
                name: if java {
                    line.function.clone()
                } else {
                    short_name(&line.function)
                },
                full_name: if java {
                    java_method(&line.function).to_owned()
                } else {
                    line.function
                },
                file: line.file,
                java,
            };
            lines.push((self.function(stacks, function), line.line));
        }
        let location = stacks.locations.push(address, resolved.mapping, &lines);
        self.lines = lines;
        // jeprof judges a location by its outermost function (the one that holds the code), and
        // unnamed code by the symbol below it, as it names it (a stripped jemalloc's internals).
        let outer = match (&resolved.nearest_symbol, self.lines.last()) {
            (Some(nearest), _) => Some(Cow::Owned(short_name(nearest))),
            (None, Some(&(f, _))) => {
                Some(Cow::Borrowed(stacks.functions[f as usize].name.as_str()))
            }
            // Unnamed code's name is made, not kept; a bare address (`0x7f00`) is never the
            // allocator's, a module's offset may be (a module named `prof_…`).
            (None, None) => stacks
                .locations
                .mapping(location)
                .map(|_| stacks.innermost_name(location)),
        };
        self.allocator
            .push(resolved.in_allocator || outer.is_some_and(|name| is_allocator_frame(&name)));
        location
    }

    fn function(&mut self, stacks: &mut Stacks, function: Function) -> u32 {
        let fingerprint = fingerprint(&function);
        let functions = &stacks.functions;
        if let Some(id) = self
            .functions
            .find(fingerprint, |id| functions[id as usize] == function)
        {
            return id;
        }
        let id = functions.len() as u32;
        stacks.functions.push(function);
        self.functions.insert(fingerprint, id);
        id
    }

    /// The location of unnamed code `location` as seen under `caller` (a function index): same
    /// address and mapping, named `object+0xoffset (called from caller)`.
    fn called_from(&mut self, stacks: &mut Stacks, location: usize, caller: u32) -> usize {
        if let Some(&known) = self.called_from.get(&(location, caller)) {
            return known;
        }
        let own = stacks.innermost_name(location).into_owned();
        let name = called_from_name(&own, &stacks.functions[caller as usize].name);
        let function = self.function(
            stacks,
            Function {
                name: name.clone(),
                full_name: name,
                file: None,
                java: false,
            },
        );
        self.allocator.push(false);
        let (address, mapping) = (
            stacks.locations.address(location),
            stacks.locations.mapping(location),
        );
        let known = stacks.locations.push(address, mapping, &[(function, 0)]);
        self.called_from.insert((location, caller), known);
        known
    }
}

/// How unnamed code is shown under its nearest named caller: `libz.so.1+0x3a10 (called from
/// inflateInit2_)`.
pub fn called_from_name(unnamed: &str, caller: &str) -> String {
    format!("{unnamed} (called from {caller})")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Stacks over named functions: each sample is (leaf-first names, bytes).
    pub(crate) fn stacks_of(samples: &[(&[&str], f64)]) -> Stacks {
        let mut stacks = Stacks::default();
        for (names, bytes) in samples {
            let locations = names
                .iter()
                .map(|name| {
                    let index = match stacks.functions.iter().position(|f| f.name == *name) {
                        Some(i) => i,
                        None => {
                            stacks.functions.push(Function {
                                name: name.to_string(),
                                full_name: name.to_string(),
                                file: None,
                                java: false,
                            });
                            let function = (stacks.functions.len() - 1) as u32;
                            stacks.locations.push(0, None, &[(function, 0)])
                        }
                    };
                    index
                })
                .collect();
            stacks.samples.push(Sample {
                locations,
                objects: 1.0,
                bytes: *bytes,
            });
        }
        stacks
    }

    #[test]
    fn unnamed_code_keeps_no_function_and_is_named_when_shown() {
        // 500 leaves in a mapped file that cannot be read (`app+0x..`), each under one of two
        // callers outside any mapping (`0x..`): nothing names any of them.
        let mut text = String::from("heap_v2/1\n  t*: 500: 512000 [0: 0]\n");
        for i in 0..500 {
            let (leaf, caller) = (0x1010 + i * 4, 0x5001 + (i % 2) * 0x100);
            text += &format!("@ 0x{leaf:x} 0x{caller:x}\n  t*: 1: 1024 [0: 0]\n");
        }
        text += "\nMAPPED_LIBRARIES:\n00001000-00002000 r-xp 00004000 fe:00 1  /nonexistent/app\n";
        let dir = std::env::temp_dir().join(format!("nativemem-unnamed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("unnamed.heap");
        std::fs::write(&path, text).unwrap();
        let (_, stacks) = crate::profile::analyze(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(stacks.locations.len(), 502);
        assert!(stacks.functions.is_empty(), "{:?}", &stacks.functions[..3]);
        let labels = stacks.labels();
        let leaf = stacks.samples[499].locations[0];
        assert_eq!(labels.names[labels.per_location[leaf][0]], "app+0x47dc");
        let caller = stacks.samples[1].locations[1];
        assert_eq!(labels.names[labels.per_location[caller][0]], "0x5100");
        assert_eq!(stacks.unnamed_function(caller).full_name, "0x5100");
        assert_eq!(stacks.total_bytes(), 500.0 * 1024.0);
    }
}
