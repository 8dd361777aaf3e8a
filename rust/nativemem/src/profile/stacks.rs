//! Symbolized, unbiased, allocator-free stacks: what every output is rendered from.

use super::demangle::short_name;
use super::mappings::Mapping;
use super::parse::HeapDump;
use super::strip::is_allocator_frame;
use super::symbolize::Symbolizer;
use super::unbias::unbias;
use rustc_hash::{FxHashMap, FxHasher};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

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

/// A code address and the functions (inlined ones first) it belongs to.
#[derive(Debug, Clone)]
pub struct Location {
    pub address: u64,
    /// Index into [`Stacks::mappings`].
    pub mapping: Option<usize>,
    /// (function index, line), innermost first.
    pub lines: Vec<(usize, u32)>,
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
    pub locations: Vec<Location>,
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
        let per_location = self
            .locations
            .iter()
            .map(|location| {
                let last = location.lines.len().saturating_sub(1);
                location
                    .lines
                    .iter()
                    .enumerate()
                    .map(|(i, (function, _))| {
                        let label = label(&self.functions[*function].name, i, last);
                        *ids.entry(label.clone()).or_insert_with(|| {
                            names.push(label);
                            names.len() - 1
                        })
                    })
                    .collect()
            })
            .collect();
        Labels {
            names,
            per_location,
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
    by_address: FxHashMap<u64, usize>,
    pub stacks: Stacks,
}

impl<'s, 'm> Resolver<'s, 'm> {
    pub fn new(dump: &HeapDump, symbolizer: &'s mut Symbolizer<'m>) -> Resolver<'s, 'm> {
        Resolver {
            symbolizer,
            builder: Builder::default(),
            by_address: FxHashMap::default(),
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
            let location = match self.by_address.get(&address) {
                Some(&location) => location,
                None => {
                    let resolved = self.symbolizer.resolve(address);
                    let location = self.builder.location(&mut self.stacks, address, resolved);
                    self.by_address.insert(address, location);
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
            if self.builder.unnamed[location] {
                if let Some(function) = caller {
                    *slot = self
                        .builder
                        .called_from(&mut self.stacks, location, function);
                }
            } else if let Some(&(function, _)) = self.stacks.locations[location].lines.first() {
                // The innermost level: an inlined function makes the call, not its container.
                caller = Some(function);
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
    /// Fingerprint of a function → the last of [`Stacks::functions`] with it; each function is
    /// kept once, in `Stacks::functions`, not again as a key.
    functions: FxHashMap<u64, usize>,
    /// Per function: the previous one with the same fingerprint (`usize::MAX` ends the chain).
    same_fingerprint: Vec<usize>,
    /// Per location: whether it is an allocator frame.
    allocator: Vec<bool>,
    /// Per location: whether nothing names its code ([`super::symbolize::Resolved::unnamed`]).
    unnamed: Vec<bool>,
    /// (unnamed location, calling function) → the location naming it after that caller.
    called_from: FxHashMap<(usize, usize), usize>,
}

impl Builder {
    fn location(
        &mut self,
        stacks: &mut Stacks,
        address: u64,
        resolved: super::symbolize::Resolved,
    ) -> usize {
        let java = resolved.java;
        let lines: Vec<(usize, u32)> = resolved
            .lines
            .into_iter()
            .map(|line| {
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
                (self.function(stacks, function), line.line)
            })
            .collect();
        // jeprof judges a location by its outermost function (the one that holds the code), and
        // unnamed code by the symbol below it, as it names it (a stripped jemalloc's internals).
        let outer = match &resolved.nearest_symbol {
            Some(nearest) => Some(short_name(nearest)),
            None => lines.last().map(|(f, _)| stacks.functions[*f].name.clone()),
        };
        self.allocator
            .push(resolved.in_allocator || outer.is_some_and(|name| is_allocator_frame(&name)));
        self.unnamed.push(resolved.unnamed);
        stacks.locations.push(Location {
            address,
            mapping: resolved.mapping,
            lines,
        });
        stacks.locations.len() - 1
    }

    fn function(&mut self, stacks: &mut Stacks, function: Function) -> usize {
        let mut hasher = FxHasher::default();
        function.hash(&mut hasher);
        let fingerprint = hasher.finish();
        let last = self.functions.get(&fingerprint).copied();
        let mut candidate = last.unwrap_or(usize::MAX);
        while candidate != usize::MAX {
            if stacks.functions[candidate] == function {
                return candidate;
            }
            candidate = self.same_fingerprint[candidate];
        }
        let id = stacks.functions.len();
        stacks.functions.push(function);
        self.same_fingerprint.push(last.unwrap_or(usize::MAX));
        self.functions.insert(fingerprint, id);
        id
    }

    /// The location of unnamed code `location` as seen under `caller` (a function index): same
    /// address and mapping, named `object+0xoffset (called from caller)`.
    fn called_from(&mut self, stacks: &mut Stacks, location: usize, caller: usize) -> usize {
        if let Some(&known) = self.called_from.get(&(location, caller)) {
            return known;
        }
        let (address, mapping, own) = {
            let base = &stacks.locations[location];
            let own = base
                .lines
                .first()
                .map_or("", |(f, _)| &stacks.functions[*f].name);
            (base.address, base.mapping, own.to_owned())
        };
        let name = called_from_name(&own, &stacks.functions[caller].name);
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
        self.unnamed.push(false);
        stacks.locations.push(Location {
            address,
            mapping,
            lines: vec![(function, 0)],
        });
        let known = stacks.locations.len() - 1;
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
                            stacks.locations.push(Location {
                                address: 0,
                                mapping: None,
                                lines: vec![(stacks.functions.len() - 1, 0)],
                            });
                            stacks.functions.len() - 1
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
}
