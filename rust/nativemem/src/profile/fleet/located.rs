//! The dumps' stacks as code locations, for pprof: each process's mappings (path, build ID,
//! address range, file offset), its native locations at their real addresses, functions with
//! their file and line, Java frames as functions `Class.method` with their source file and line
//! in the line table. Locations are shared between processes only when they are the same code
//! at the same address in the same mapping (same object, same load address); stacks of location
//! ids are stored once in a [`StackTable`].

use super::table::StackTable;
use crate::profile::mappings::Mapping;
use crate::profile::pprof::{proto, Strings};
use crate::profile::stacks::{Function, Stacks};
use rustc_hash::FxHashMap;

/// A mapped object as pprof describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectMapping {
    pub start: u64,
    pub limit: u64,
    pub file_offset: u64,
    /// The file, a pseudo name (`[vdso]`) or empty for anonymous memory (JIT code).
    pub path: String,
    /// Lowercase hex; empty when unknown.
    pub build_id: String,
}

/// A function as pprof names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeFunction {
    /// The short name (`Class.method` for Java).
    pub name: String,
    /// The full demangled name.
    pub system_name: String,
    pub file: String,
}

/// A code location: its address (0 for a Java frame, which has none), mapping id (0: none) and
/// function levels `(function id, line)`, innermost first. Ids start at 1, as in pprof.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeLocation {
    pub address: u64,
    pub mapping: u64,
    pub lines: Vec<(u64, i64)>,
}

/// Locations, functions and mappings of every dump added, each once, and stacks of locations.
#[derive(Debug, Default)]
pub struct Located {
    pub mappings: Vec<ObjectMapping>,
    pub functions: Vec<CodeFunction>,
    pub locations: Vec<CodeLocation>,
    /// Stacks of location indices (id - 1), leaf first.
    pub stacks: StackTable,
    mapping_ids: FxHashMap<ObjectMapping, u64>,
    function_ids: FxHashMap<CodeFunction, u64>,
    location_ids: FxHashMap<CodeLocation, u64>,
}

/// One dump's view into [`Located`]: the ids of its locations and mappings that a kept stack
/// uses (0: not yet made), so allocator frames the stacks leave out are not in the profile.
#[derive(Debug, Default)]
pub struct DumpLocations {
    location_ids: Vec<u64>,
    mapping_ids: FxHashMap<usize, u64>,
}

impl Located {
    /// The stack id of one dump's stack (its resolver's location indices, leaf first);
    /// `build_id` gives a mapped file's build ID.
    pub fn intern_stack(
        &mut self,
        dump: &mut DumpLocations,
        stacks: &Stacks,
        locations: &[usize],
        build_id: &dyn Fn(&str) -> String,
        frames: &mut Vec<u32>,
    ) -> u32 {
        dump.location_ids.resize(stacks.locations.len(), 0);
        frames.clear();
        for &index in locations {
            if dump.location_ids[index] == 0 {
                dump.location_ids[index] = self.location(dump, stacks, index, build_id);
            }
            frames.push((dump.location_ids[index] - 1) as u32);
        }
        self.stacks.intern(frames)
    }

    fn location(
        &mut self,
        dump: &mut DumpLocations,
        stacks: &Stacks,
        index: usize,
        build_id: &dyn Fn(&str) -> String,
    ) -> u64 {
        let levels = stacks.locations.lines(index);
        let lines: Vec<(u64, i64)> = match levels.is_empty() {
            // Unnamed code: the function its name is made for, from its address.
            true => vec![(self.function(&stacks.unnamed_function(index)), 0)],
            false => levels
                .iter()
                .map(|&(function, line)| {
                    let function = &stacks.functions[function as usize];
                    (self.function(function), i64::from(line))
                })
                .collect(),
        };
        let java = levels
            .iter()
            .any(|&(function, _)| stacks.functions[function as usize].java);
        let address = stacks.locations.address(index);
        let (address, mapping) = match stacks.locations.mapping(index) {
            // A Java frame's address is only its index in the sidecar's table.
            _ if java => (0, 0),
            None => (address, 0),
            Some(m) => {
                let id = match dump.mapping_ids.get(&m) {
                    Some(&id) => id,
                    None => {
                        let id = self.mapping(&stacks.mappings[m], build_id);
                        dump.mapping_ids.insert(m, id);
                        id
                    }
                };
                (address, id)
            }
        };
        intern(
            &mut self.locations,
            &mut self.location_ids,
            CodeLocation {
                address,
                mapping,
                lines,
            },
        )
    }

    fn function(&mut self, function: &Function) -> u64 {
        let name = match function.java {
            true => function.full_name.clone(),
            false => function.name.clone(),
        };
        let code = CodeFunction {
            name,
            system_name: function.full_name.clone(),
            file: function.file.clone().unwrap_or_default(),
        };
        intern(&mut self.functions, &mut self.function_ids, code)
    }

    fn mapping(&mut self, mapping: &Mapping, build_id: &dyn Fn(&str) -> String) -> u64 {
        let path = mapping.file().unwrap_or(&mapping.path).to_owned();
        let object = ObjectMapping {
            start: mapping.start,
            limit: mapping.end,
            file_offset: mapping.file_offset,
            build_id: mapping.file().map(build_id).unwrap_or_default(),
            path,
        };
        intern(&mut self.mappings, &mut self.mapping_ids, object)
    }
}

impl Located {
    /// Adds the mappings, functions and locations to `profile`.
    pub fn fill(&self, profile: &mut proto::Profile, strings: &mut Strings) {
        // pprof takes the first mapping for the program, which is mapped below its libraries.
        let mut order: Vec<usize> = (0..self.mappings.len()).collect();
        order.sort_by_key(|&i| (self.mappings[i].start, i));
        let mut mapping_id = vec![0; self.mappings.len() + 1];
        for (n, &i) in order.iter().enumerate() {
            let m = &self.mappings[i];
            mapping_id[i + 1] = n as u64 + 1;
            profile.mapping.push(proto::Mapping {
                id: n as u64 + 1,
                memory_start: m.start,
                memory_limit: m.limit,
                file_offset: m.file_offset,
                filename: strings.id(&m.path),
                build_id: strings.id(&m.build_id),
                has_functions: true,
                has_filenames: true,
                has_line_numbers: true,
                has_inline_frames: true,
            });
        }
        for (i, f) in self.functions.iter().enumerate() {
            profile.function.push(proto::Function {
                id: i as u64 + 1,
                name: strings.id(&f.name),
                system_name: strings.id(&f.system_name),
                filename: strings.id(&f.file),
                start_line: 0,
            });
        }
        for (i, l) in self.locations.iter().enumerate() {
            profile.location.push(proto::Location {
                id: i as u64 + 1,
                mapping_id: mapping_id[l.mapping as usize],
                address: l.address,
                line: l
                    .lines
                    .iter()
                    .map(|&(function_id, line)| proto::Line {
                        function_id,
                        line,
                        column: 0,
                    })
                    .collect(),
                is_folded: false,
            });
        }
    }

    /// The location ids of a stack, leaf first.
    /// The number of locations in `stack`.
    pub fn depth(&self, stack: u32) -> usize {
        self.stacks.frames(stack).len()
    }

    /// About the heap a pprof message's mappings, locations, functions and string table take
    /// when made from these ([`super::Fleet::pprof_message_bytes`]).
    pub fn heap_bytes(&self) -> u64 {
        let mappings: u64 = self
            .mappings
            .iter()
            .map(|m| 96 + (m.path.len() + m.build_id.len()) as u64)
            .sum();
        let functions: u64 = self
            .functions
            .iter()
            .map(|f| 80 + (f.name.len() + f.system_name.len() + f.file.len()) as u64)
            .sum();
        let locations: u64 = self
            .locations
            .iter()
            .map(|l| 64 + 24 * l.lines.len() as u64)
            .sum();
        mappings + functions + locations
    }

    pub fn location_ids(&self, stack: u32) -> Vec<u64> {
        let frames = self.stacks.frames(stack);
        frames.iter().map(|&l| u64::from(l) + 1).collect()
    }
}

/// The id (index + 1) of `value` in `list`, added if new.
fn intern<T: Clone + Eq + std::hash::Hash>(
    list: &mut Vec<T>,
    ids: &mut FxHashMap<T, u64>,
    value: T,
) -> u64 {
    if let Some(&id) = ids.get(&value) {
        return id;
    }
    list.push(value.clone());
    let id = list.len() as u64;
    ids.insert(value, id);
    id
}
