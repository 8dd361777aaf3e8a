//! Many dumps as one profile: each dump streamed (never held whole), symbolized with its own
//! sidecar and unbiased with its own sample interval, its stacks merged by function names into
//! one [`StackTable`]. Memory grows with the distinct stacks of all dumps and a little per dump
//! (its totals and its flat bytes per site), not with the dumps' sizes; with `per_process` (for
//! pprof) it also keeps each dump's distinct stacks of code locations ([`Located`]).
//!
//! A group of base dumps may be added too: every figure is then the per-process average of the
//! current dumps minus that of the base dumps.

pub mod inputs;
pub mod located;
pub mod names;
pub mod render;
pub mod table;

use super::frame_kind::FrameKind;
use super::parse::{self, NO_MAPS};
use super::sidecar::{Origin, Sidecar};
use super::stacks::Resolver;
use super::symbolize::{ObjectCache, Symbolizer};
use super::unbias::unbias;
use super::{ProfileError, IMPLAUSIBLE_BYTES};
use crate::files::Links;
use inputs::Dump;
use located::{DumpLocations, Located};
use names::Names;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use table::StackTable;

/// Which side of a difference a dump is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Current,
    Base,
}

/// One dump merged in.
#[derive(Debug)]
pub struct Process {
    pub dump: PathBuf,
    pub origin: Origin,
    pub sample_interval: u64,
    /// Unbiased in-use totals of this dump.
    pub objects: f64,
    pub bytes: f64,
    /// Unbiased bytes per leaf label (flat), kept only for the report's by-process figures
    /// ([`Fleet::by_process`]): a dump of millions of distinct sites would otherwise hold an
    /// entry per site here as well.
    pub flat: FxHashMap<u32, f64>,
    /// `(stack of locations in [`Fleet::located`], objects, bytes)` per distinct stack, kept only
    /// with `per_process`.
    pub samples: Vec<(u32, f64, f64)>,
}

/// The dumps of one side and their summed weights per node (`[objects, bytes]`).
#[derive(Debug, Default)]
pub struct Group {
    pub weights: Vec<[f64; 2]>,
    pub processes: Vec<Process>,
}

/// Dumps merged by function names.
#[derive(Debug, Default)]
pub struct Fleet {
    pub names: Names,
    /// The kind of code each label is (by its first location), for the flame graph's colours.
    pub kinds: Vec<FrameKind>,
    pub stacks: StackTable,
    /// Every dump's code locations, kept with `per_process`.
    pub located: Located,
    pub current: Group,
    pub base: Group,
    /// Per label: the last current process it was seen in, and in how many it was.
    presence: Vec<(u32, u32)>,
    per_process: bool,
    /// Whether the report lists each current dump's total and its part of the top flat site
    /// (each dump's flat bytes per site are kept for it).
    pub by_process: bool,
    /// Whether a dump without its memory map is merged (its frames stay addresses) rather than
    /// passed over: right for one dump, whose addresses mean something only to itself.
    pub accept_unmapped: bool,
    /// Dumps passed over and why.
    pub warnings: Vec<String>,
    /// The object files every dump's symbolizer shares: a build mapped by many dumps is read
    /// once.
    pub objects: ObjectCache,
    /// What was odd about dumps that were merged: each text once, with its dumps' count and
    /// the first of them (hundreds of dumps often share one missing library).
    dump_warnings: BTreeMap<String, (usize, PathBuf)>,
}

impl Fleet {
    /// An empty fleet; with `per_process`, each dump's own stacks of code locations are kept
    /// (pprof: addresses, mappings, lines, process labels).
    pub fn new(per_process: bool) -> Fleet {
        Fleet {
            per_process,
            ..Fleet::default()
        }
    }

    /// Adds each dump, passing over (with a warning naming it) one that is not a heap_v2 dump,
    /// is damaged or truncated, or cannot be read. Fails only when none of them could be added.
    pub fn add_all(&mut self, dumps: &[Dump], role: Role) -> Result<(), ProfileError> {
        let mut first_error = None;
        let mut added = 0;
        for dump in dumps {
            match self.add(&dump.path, dump.links, role) {
                Ok(()) => added += 1,
                Err(e) if e.is_bad_input() || matches!(e, ProfileError::Read { .. }) => {
                    self.warnings
                        .push(format!("skipped {}: {e}", dump.path.display()));
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        match first_error {
            Some(e) if added == 0 => Err(e),
            _ => Ok(()),
        }
    }

    /// Adds one dump. A dump whose stacks can not all be read is refused, none of them added:
    /// the first dump is read once (its memory map from its end), and if it turns out damaged the
    /// fleet is emptied again; a later one is read through and checked before its stacks are
    /// merged.
    pub fn add(&mut self, path: &Path, links: Links, role: Role) -> Result<(), ProfileError> {
        let first = self.current.processes.is_empty() && self.base.processes.is_empty();
        let added = self.add_streamed(path, links, role, !first);
        if added.is_err() && first {
            // Nothing was merged before this dump: what it left is all there is to undo.
            self.names = Names::default();
            self.kinds.clear();
            self.stacks = StackTable::default();
            self.located = Located::default();
            self.current = Group::default();
            self.base = Group::default();
            self.presence.clear();
        }
        added
    }

    fn add_streamed(
        &mut self,
        path: &Path,
        links: Links,
        role: Role,
        check_first: bool,
    ) -> Result<(), ProfileError> {
        let (header, stream) = parse::open_stream(path, links, check_first)?;
        if !self.accept_unmapped && header.warnings.iter().any(|w| w.starts_with(NO_MAPS)) {
            return Err(ProfileError::Truncated {
                path: path.to_owned(),
            });
        }
        let sidecar = Sidecar::beside(path);
        let origin = sidecar.origin.clone();
        let mut symbolizer = Symbolizer::new(&header.mappings, sidecar);
        symbolizer.cache = std::mem::take(&mut self.objects);
        let mut resolver = Resolver::new(&header, &mut symbolizer);
        let interval = header.sample_interval;
        let index = self.group(role).processes.len() as u32;
        let mut process = Process {
            dump: path.to_owned(),
            origin,
            sample_interval: interval,
            objects: 0.0,
            bytes: 0.0,
            flat: FxHashMap::default(),
            samples: Vec::new(),
        };
        let Fleet {
            names,
            kinds,
            stacks: table,
            current,
            base,
            presence,
            per_process,
            by_process,
            located,
            ..
        } = self;
        let group = match role {
            Role::Current => current,
            Role::Base => base,
        };
        // Per location of this dump: its labels, innermost first, side by side; where each
        // location's end.
        let (mut labels_of, mut labels_end) = (Vec::<u32>::new(), Vec::<usize>::new());
        let mut sample_of: FxHashMap<u32, usize> = FxHashMap::default();
        let (mut locations, mut frames) = (Vec::new(), Vec::<u32>::new());
        let mut dump_locations = DumpLocations::default();
        let streamed = stream.for_each(&mut |addresses, counts| {
            resolver.locations(addresses, &mut locations);
            if locations.is_empty() {
                return; // allocator frames only: jeprof leaves them out of every total
            }
            let stacks = &resolver.stacks;
            for location in labels_end.len()..stacks.locations.len() {
                let kind = stacks.kind(location);
                stacks.for_each_label(location, |label| {
                    let id = names.intern(label);
                    if id as usize == kinds.len() {
                        kinds.push(kind);
                    }
                    labels_of.push(id);
                });
                labels_end.push(labels_of.len());
            }
            frames.clear();
            for &location in &locations {
                let start = location.checked_sub(1).map_or(0, |l| labels_end[l]);
                frames.extend_from_slice(&labels_of[start..labels_end[location]]);
            }
            if frames.is_empty() {
                return;
            }
            let (objects, bytes) = unbias(counts.objects, counts.bytes, interval);
            let node = table.intern(&frames);
            if group.weights.len() <= node as usize {
                group.weights.resize(table.len(), [0.0; 2]);
            }
            let weight = &mut group.weights[node as usize];
            weight[0] += objects;
            weight[1] += bytes;
            process.objects += objects;
            process.bytes += bytes;
            if *by_process {
                *process.flat.entry(frames[0]).or_default() += bytes;
            }
            if role == Role::Current {
                presence.resize(names.len(), (u32::MAX, 0));
                for &label in frames.iter() {
                    let seen = &mut presence[label as usize];
                    if seen.0 != index {
                        *seen = (index, seen.1 + 1);
                    }
                }
            }
            if *per_process {
                let build_id = |file: &str| resolver.build_id(file).to_owned();
                let node = located.intern_stack(
                    &mut dump_locations,
                    &resolver.stacks,
                    &locations,
                    &build_id,
                    &mut frames,
                );
                let at = *sample_of.entry(node).or_insert_with(|| {
                    process.samples.push((node, 0.0, 0.0));
                    process.samples.len() - 1
                });
                process.samples[at].1 += objects;
                process.samples[at].2 += bytes;
            }
        });
        let read = streamed.map(|dump| resolver.finish(&dump).warnings);
        // Kept for the next dump whether or not this one could be read to its end.
        self.objects = std::mem::take(&mut symbolizer.cache);
        let warnings = read?;
        if process.bytes.is_nan() || process.bytes >= IMPLAUSIBLE_BYTES {
            // Its weights are in the table already: a damaged dump fails the whole report.
            return Err(ProfileError::Implausible {
                path: path.to_owned(),
                bytes: process.bytes,
            });
        }
        for warning in warnings {
            self.dump_warnings
                .entry(warning)
                .or_insert((0, path.to_owned()))
                .0 += 1;
        }
        self.group(role).processes.push(process);
        Ok(())
    }

    fn group(&mut self, role: Role) -> &mut Group {
        match role {
            Role::Current => &mut self.current,
            Role::Base => &mut self.base,
        }
    }

    /// In how many current dumps `label` is on a stack.
    pub fn presence(&self, label: usize) -> usize {
        self.presence.get(label).map_or(0, |p| p.1 as usize)
    }

    /// Whether this is a difference (base dumps were added).
    pub fn is_difference(&self) -> bool {
        !self.base.processes.is_empty()
    }

    /// A node's shown `[objects, bytes]`: the sum over the current dumps, or for a difference
    /// the per-process average of the current dumps minus that of the base dumps.
    pub fn weight(&self, node: u32) -> [f64; 2] {
        let at = |group: &Group| {
            group
                .weights
                .get(node as usize)
                .copied()
                .unwrap_or([0.0; 2])
        };
        if !self.is_difference() {
            return at(&self.current);
        }
        let (now, before) = (at(&self.current), at(&self.base));
        let (m, b) = (
            self.current.processes.len().max(1) as f64,
            self.base.processes.len() as f64,
        );
        [now[0] / m - before[0] / b, now[1] / m - before[1] / b]
    }

    /// Base and current `[bytes]` of a node as shown side by side (differential flame graph):
    /// per-process averages.
    pub fn base_and_current_bytes(&self, node: u32) -> (f64, f64) {
        let at = |group: &Group| {
            let n = group.processes.len().max(1) as f64;
            group.weights.get(node as usize).map_or(0.0, |w| w[1] / n)
        };
        (at(&self.base), at(&self.current))
    }

    /// Every warning: dumps passed over, what was odd about the others (once per text), and
    /// whether the dumps were sampled at different intervals.
    pub fn all_warnings(&self) -> Vec<String> {
        let mut all = self.warnings.clone();
        for (warning, (count, first)) in &self.dump_warnings {
            all.push(match count {
                1 => format!("{}: {warning}", first.display()),
                n => format!("{warning} (in {n} dumps, the first {})", first.display()),
            });
        }
        all.extend(self.interval_warning());
        all
    }

    /// A warning when the dumps were sampled at different intervals.
    pub fn interval_warning(&self) -> Option<String> {
        let mut intervals: BTreeMap<u64, usize> = BTreeMap::new();
        for process in self.current.processes.iter().chain(&self.base.processes) {
            *intervals.entry(process.sample_interval).or_default() += 1;
        }
        (intervals.len() > 1).then(|| {
            let list: Vec<String> = intervals
                .iter()
                .map(|(interval, n)| format!("{interval} bytes in {n}"))
                .collect();
            format!(
                "the dumps were sampled at different intervals ({}): each was unbiased with its \
                 own, then merged",
                list.join(", ")
            )
        })
    }

    /// The sample interval shown: the current dumps' when they share one, else the smallest.
    pub fn sample_interval(&self) -> u64 {
        self.current
            .processes
            .iter()
            .map(|p| p.sample_interval)
            .min()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::report::Report;

    /// A small dump: `planted` (2 KiB objects) on every process, `rare` only where `rare` is set;
    /// the addresses fall in a mapping of a file that does not exist, so they are named
    /// `app+0x..` (the same names in every dump: merged by name).
    fn dump(interval: u64, rare: bool) -> String {
        let mut text = format!("heap_v2/{interval}\n  t*: 3: 6144 [0: 0]\n");
        text += "@ 0x1010 0x1100\n  t*: 2: 4096 [0: 0]\n";
        if rare {
            text += "@ 0x1020 0x1100\n  t*: 1: 2048 [0: 0]\n";
        }
        text + "\nMAPPED_LIBRARIES:\n00001000-00002000 r-xp 00000000 fe:00 1  /nonexistent/app\n"
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nativemem-fleet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn named(paths: &[PathBuf]) -> Vec<Dump> {
        paths.iter().cloned().map(Dump::named).collect()
    }

    fn site<'r>(report: &'r Report, suffix: &str) -> &'r crate::profile::report::Site {
        report
            .top_flat
            .iter()
            .find(|s| s.name.ends_with(suffix))
            .unwrap()
    }

    #[test]
    fn hundreds_of_dumps_merge_with_exact_counts() {
        let dir = scratch("many");
        let mut dumps = Vec::new();
        for i in 0..300 {
            let path = dir.join(format!("{i:03}.heap"));
            std::fs::write(&path, dump(1, i % 3 == 0)).unwrap();
            dumps.push(path);
        }
        let mut fleet = Fleet::new(false);
        fleet.by_process = true;
        fleet.add_all(&named(&dumps), Role::Current).unwrap();
        let report = fleet.report(10);
        // Interval 1: every sampled byte is itself (unbias scale 1).
        assert_eq!(report.total_bytes, 300 * 4096 + 100 * 2048);
        assert_eq!(report.process_count, 300);
        assert_eq!(site(&report, "+0x10").processes, 300);
        assert_eq!(site(&report, "+0x20").processes, 100);
        assert_eq!(report.processes.len(), 300);
        assert_eq!(report.processes[0].total_bytes, 4096 + 2048);
        // The one missing library is told once, not once per dump.
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        let svg = String::from_utf8(fleet.svg("fleet").unwrap()).unwrap();
        assert!(
            svg.contains("+0x20 [in 100 of 300]"),
            "no process count in the svg"
        );
        assert!(
            report.warnings[0].contains("in 300 dumps"),
            "{:?}",
            report.warnings
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_dumps_are_named_and_passed_over() {
        let dir = scratch("bad");
        let good = dir.join("good.heap");
        std::fs::write(&good, dump(1, true)).unwrap();
        let truncated = dir.join("truncated.heap");
        let text = dump(1, true);
        std::fs::write(&truncated, &text[..text.find("MAPPED").unwrap()]).unwrap();
        let tcmalloc = dir.join("tcmalloc.heap");
        std::fs::write(
            &tcmalloc,
            "heap profile:    1:  2048 [     1:  2048] @ heapprofile\n",
        )
        .unwrap();
        let other_interval = dir.join("coarse.heap");
        std::fs::write(&other_interval, dump(1 << 20, false)).unwrap();
        let mut fleet = Fleet::new(false);
        fleet
            .add_all(
                &named(&[good, truncated, tcmalloc, other_interval]),
                Role::Current,
            )
            .unwrap();
        let report = fleet.report(10);
        assert_eq!(report.process_count, 2);
        let warnings = report.warnings.join("\n");
        assert!(
            warnings.contains("skipped") && warnings.contains("truncated.heap"),
            "{warnings}"
        );
        assert!(
            warnings.contains("tcmalloc.heap") && warnings.contains("heap_v2"),
            "{warnings}"
        );
        assert!(warnings.contains("different intervals"), "{warnings}");
        // The coarse dump's 2 KiB objects are unbiased with its own 1 MiB interval.
        let (_, coarse) = unbias(2, 4096, 1 << 20);
        assert_eq!(report.total_bytes, (6144.0 + coarse) as i64);
        let err = Fleet::new(false)
            .add_all(&named(&[dir.join("truncated.heap")]), Role::Current)
            .unwrap_err();
        assert!(matches!(err, ProfileError::Truncated { .. }), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_found_in_a_directory_is_not_followed() {
        let dir = scratch("links");
        let elsewhere = scratch("links-target");
        std::fs::write(elsewhere.join("private.heap"), dump(1, true)).unwrap();
        std::fs::write(dir.join("real.heap"), dump(1, false)).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("private.heap"), dir.join("planted.heap"))
            .unwrap();
        let mut warnings = Vec::new();
        let dumps = inputs::expand(std::slice::from_ref(&dir), &mut warnings).unwrap();
        let mut fleet = Fleet::new(false);
        fleet.add_all(&dumps, Role::Current).unwrap();
        let report = fleet.report(10);
        assert_eq!(report.process_count, 1);
        assert_eq!(report.total_bytes, 4096);
        let skipped = report.warnings.join("\n");
        assert!(
            skipped.contains("skipped") && skipped.contains("planted.heap"),
            "{skipped}"
        );
        // Named by the user, the same link is read.
        let named = [Dump::named(dir.join("planted.heap"))];
        let mut fleet = Fleet::new(false);
        fleet.add_all(&named, Role::Current).unwrap();
        assert_eq!(fleet.report(10).total_bytes, 4096 + 2048);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&elsewhere).unwrap();
    }

    /// A dump of one stack in a function of this test binary, with this process's memory map.
    fn dump_of_this_binary() -> String {
        let address = dump_of_this_binary as *const () as u64;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        format!(
            "heap_v2/1\n  t*: 1: 4096 [0: 0]\n@ 0x{address:x}\n  t*: 1: 4096 [0: 0]\n\n\
             MAPPED_LIBRARIES:\n{maps}"
        )
    }

    #[test]
    fn a_merge_reads_each_build_once() {
        let dir = scratch("build-once");
        let dumps: Vec<PathBuf> = (0..3)
            .map(|i| {
                let path = dir.join(format!("{i}.heap"));
                std::fs::write(&path, dump_of_this_binary()).unwrap();
                path
            })
            .collect();
        let mut fleet = Fleet::new(false);
        fleet.add_all(&named(&dumps), Role::Current).unwrap();
        // Three dumps map the same executable: it is opened and read once, not per dump.
        assert_eq!(fleet.objects.opened, 1, "{:?}", fleet.objects);
        let report = fleet.report(10);
        assert_eq!(report.total_bytes, 3 * 4096);
        let site = &report.top_flat[0];
        assert!(site.name.ends_with("dump_of_this_binary"), "{}", site.name);
        assert_eq!(site.processes, 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn one_dump_is_read_once() {
        let dir = scratch("once");
        let path = dir.join("one.heap");
        let mut text = String::from("heap_v2/1\n  t*: 2000: 2048000 [0: 0]\n");
        for i in 0..2000 {
            text += &format!("@ 0x{:x} 0x1100\n  t*: 1: 1024 [0: 0]\n", 0x1010 + i % 200);
        }
        text += "\nMAPPED_LIBRARIES:\n00001000-00002000 r-xp 00000000 fe:00 1  /nonexistent/app\n";
        std::fs::write(&path, &text).unwrap();
        let before = parse::dump_bytes_read();
        let mut fleet = Fleet::new(false);
        fleet.add(&path, Links::Follow, Role::Current).unwrap();
        assert_eq!(parse::dump_bytes_read() - before, text.len() as u64);
        assert_eq!(fleet.report(5).total_bytes, 2000 * 1024);
        // A later dump of a merge is read through and checked before it is merged.
        let before = parse::dump_bytes_read();
        fleet.add(&path, Links::Follow, Role::Current).unwrap();
        assert_eq!(parse::dump_bytes_read() - before, 2 * text.len() as u64);
        assert_eq!(fleet.report(5).total_bytes, 2 * 2000 * 1024);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_first_dump_damaged_after_its_first_stacks_leaves_nothing_merged() {
        let dir = scratch("damaged-first");
        let good = dump(1, true);
        let at = good.find("@ 0x1020").unwrap();
        let damaged = dir.join("a-damaged.heap");
        std::fs::write(&damaged, format!("{}@ 0xzz\n{}", &good[..at], &good[at..])).unwrap();
        let fine = dir.join("b-fine.heap");
        std::fs::write(&fine, &good).unwrap();
        let mut fleet = Fleet::new(true);
        fleet
            .add_all(&named(&[damaged, fine]), Role::Current)
            .unwrap();
        let report = fleet.report(10);
        assert_eq!(report.process_count, 1);
        assert_eq!(report.total_bytes, 4096 + 2048);
        assert_eq!(site(&report, "+0x10").flat_bytes, 4096);
        assert_eq!(site(&report, "+0x10").processes, 1);
        assert_eq!(
            fleet.collapsed().lines().count(),
            2,
            "{}",
            fleet.collapsed()
        );
        let warnings = report.warnings.join("\n");
        assert!(
            warnings.contains("a-damaged.heap") && warnings.contains("0xzz"),
            "{warnings}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dump_with_two_memory_maps_is_refused_however_it_is_read() {
        let dir = scratch("two-maps");
        let path = dir.join("two.heap");
        let text = dump(1, true);
        let at = text.find("MAPPED_LIBRARIES").unwrap();
        std::fs::write(&path, format!("{}{}", &text[..at], &text[at..].repeat(2))).unwrap();
        for check_first in [false, true] {
            let err = Fleet::new(false)
                .add_streamed(&path, Links::Follow, Role::Current, check_first)
                .unwrap_err();
            assert!(err.to_string().contains("second MAPPED_LIBRARIES"), "{err}");
        }
        let err = parse::read(&path).unwrap_err();
        assert!(err.to_string().contains("second MAPPED_LIBRARIES"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn group_difference_is_per_process_average() {
        let dir = scratch("diff");
        let write = |name: &str, rare: bool| {
            let path = dir.join(name);
            std::fs::write(&path, dump(1, rare)).unwrap();
            path
        };
        let before = [write("b1.heap", false), write("b2.heap", false)];
        let after = [
            write("a1.heap", true),
            write("a2.heap", true),
            write("a3.heap", false),
        ];
        let mut fleet = Fleet::new(false);
        fleet.add_all(&named(&after), Role::Current).unwrap();
        fleet.add_all(&named(&before), Role::Base).unwrap();
        let report = fleet.report(10);
        // Per process: planted 4096 before and after; rare 0 before, 2 of 3 after.
        assert_eq!(report.total_bytes, 2048 * 2 / 3);
        assert_eq!(report.base_process_count, 2);
        assert!(
            fleet.collapsed().contains(" 0 1365\n"),
            "{}",
            fleet.collapsed()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
