//! A [`Fleet`]'s outputs: the report (with "in N of M processes" per site and, if asked, each
//! process's total), text, collapsed stacks, flame graph, and pprof (code locations with their
//! mappings, files and lines) whose samples carry their process (`pid`, `host`, `dump`,
//! `dump_time_ms` labels) for `go tool pprof -tagfocus`.

use super::table::EMPTY;
use super::{Fleet, Group};
use crate::profile::collapsed::{fold_into, lines};
use crate::profile::flamegraph::{Drawing, Heaviest};
use crate::profile::frame_kind::FrameKind;
use crate::profile::pprof::{self, proto, Integers, Strings};
use crate::profile::report::{ProcessTotal, Report, Tally};
use crate::profile::{flamegraph, ProfileError};
use std::collections::BTreeMap;

impl Fleet {
    /// Calls `each(node, [objects, bytes])` for every stack with a weight to show.
    fn for_each_stack(&self, mut each: impl FnMut(u32, [f64; 2])) {
        for node in 1..self.stacks.len() as u32 {
            let weight = self.weight(node);
            if weight != [0.0; 2] {
                each(node, weight);
            }
        }
    }

    /// The top `top` sites; with [`Fleet::by_process`], each current dump's total and its part
    /// of the top flat site.
    pub fn report(&self, top: usize) -> Report {
        let mut tally = Tally::new(self.names.len());
        let mut stacks = 0;
        self.for_each_stack(|node, [objects, bytes]| {
            let frames = self.stacks.frames(node);
            tally.add(frames.iter().map(|&l| l as usize), objects, bytes);
            stacks += 1;
        });
        let mut report = tally.report(
            |label| self.names.get(label),
            top,
            |label| self.presence(label),
        );
        report.difference = self.is_difference();
        report.sample_interval_bytes = self.sample_interval();
        report.stack_count = stacks;
        report.process_count = self.current.processes.len();
        report.base_process_count = self.base.processes.len();
        report.warnings = self.all_warnings();
        if self.by_process {
            report.processes = self.process_totals(&report);
        }
        report
    }

    fn process_totals(&self, report: &Report) -> Vec<ProcessTotal> {
        let top = report.top_flat.first();
        let label = top.and_then(|site| self.names.find(&site.name));
        let site_total: f64 = match label {
            Some(label) => self.current.processes.iter().map(|p| flat(p, label)).sum(),
            None => 0.0,
        };
        self.current
            .processes
            .iter()
            .map(|p| {
                let bytes = label.map_or(0.0, |label| flat(p, label));
                ProcessTotal {
                    dump: p.dump.display().to_string(),
                    pid: p.origin.pid,
                    host: p.origin.host.clone(),
                    time_ms: p.origin.time_ms,
                    total_bytes: p.bytes as i64,
                    top_site_bytes: bytes as i64,
                    top_site_share: if site_total == 0.0 {
                        0.0
                    } else {
                        bytes / site_total
                    },
                }
            })
            .collect()
    }

    /// Collapsed stacks (`stack base current` per-process averages for a difference).
    pub fn collapsed(&self) -> String {
        self.folded(|label| self.names.get(label), u64::MAX)
            .unwrap_or_default()
    }

    /// [`Fleet::collapsed`], `None` once its stacks pass `cap` bytes.
    pub fn collapsed_within(&self, cap: u64) -> Option<String> {
        self.folded(|label| self.names.get(label), cap)
    }

    /// Collapsed stacks with each label shown as `name(label)`; `None` once the distinct stacks
    /// pass `cap` bytes.
    fn folded<'n>(&self, name: impl Fn(usize) -> &'n str, cap: u64) -> Option<String> {
        let mut folded: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        let mut key = String::new();
        let mut held = 0u64;
        for node in 1..self.stacks.len() as u32 {
            let pair = match self.is_difference() {
                true => self.base_and_current_bytes(node),
                false => (0.0, self.weight(node)[1]),
            };
            if pair == (0.0, 0.0) {
                continue;
            }
            let frames = self.stacks.frames(node);
            fold_into(&mut key, frames.iter().map(|&l| name(l as usize)));
            if !folded.contains_key(&key) {
                held += key.len() as u64 + 1;
                if held > cap {
                    return None;
                }
            }
            let entry = folded.entry(key.clone()).or_default();
            entry.0 += pair.0;
            entry.1 += pair.1;
        }
        Some(lines(&folded, self.is_difference()))
    }

    /// The flame graph (differential for a difference: red grew, blue shrank); of several
    /// processes, each function says in how many it is: `name [in 3 of 4]`. `title` says what
    /// is drawn; the total and the sample interval are added to it.
    pub fn svg(&self, title: &str) -> Result<Vec<u8>, ProfileError> {
        self.svg_within(title, u64::MAX)
            .map(Option::unwrap_or_default)
    }

    /// [`Fleet::svg`], `None` if its stacks or the graph pass `cap` bytes.
    pub fn svg_within(&self, title: &str, cap: u64) -> Result<Option<Vec<u8>>, ProfileError> {
        let processes = self.current.processes.len();
        let names: Vec<String> = (0..self.names.len())
            .map(|label| match processes {
                0 | 1 => self.names.get(label).to_owned(),
                n => format!(
                    "{} [in {} of {n}]",
                    self.names.get(label),
                    self.presence(label)
                ),
            })
            .collect();
        let kind = |label: usize| self.kinds.get(label).copied().unwrap_or(FrameKind::Unnamed);
        let each = |visit: &mut dyn FnMut(&[usize], f64)| {
            let mut frames = Vec::new();
            self.for_each_stack(|node, [_, bytes]| {
                frames.clear();
                frames.extend(self.stacks.frames(node).iter().map(|&l| l as usize));
                visit(&frames, bytes);
            });
        };
        let difference = self.is_difference();
        let summary = match difference {
            true => None,
            false => Heaviest::default().line(each, |l| names[l].as_str(), kind),
        };
        let mut total_bytes = 0.0;
        self.for_each_stack(|_, [_, bytes]| total_bytes += bytes);
        let drawing = Drawing {
            title: title.to_owned(),
            difference,
            total_bytes,
            sample_interval: self.sample_interval(),
            summary,
            kinds: names
                .iter()
                .enumerate()
                .map(|(label, name)| (name.clone(), kind(label)))
                .collect(),
        };
        match self.folded(|label| names[label].as_str(), cap) {
            Some(folded) => flamegraph::draw_within(&folded, &drawing, cap),
            None => Ok(None),
        }
    }

    /// About the heap [`Fleet::pprof_message`] takes, reckoned without building it: per sample
    /// its struct and vectors (a location id per frame, two values, a label per process field),
    /// plus the locations, functions and names [`Located`] holds.
    pub fn pprof_message_bytes(&self) -> u64 {
        const SAMPLE: u64 = 3 * 24 + 2 * 8;
        const LABEL: u64 = 48;
        let sample =
            |node: u32, labels: u64| SAMPLE + 8 * self.located.depth(node) as u64 + LABEL * labels;
        let samples: u64 = if self.is_difference() {
            self.growth_by_location_stack()
                .keys()
                .map(|&node| sample(node, 0))
                .sum()
        } else {
            self.current
                .processes
                .iter()
                .flat_map(|p| {
                    let labels =
                        1 + u64::from(p.origin.pid.is_some()) + u64::from(p.origin.host.is_some());
                    p.samples
                        .iter()
                        .filter(|s| s.0 != EMPTY)
                        .map(move |s| sample(s.0, labels))
                })
                .sum()
        };
        samples + self.located.heap_bytes()
    }

    /// Gzipped pprof of the code locations the fleet kept (`per_process`): each process's
    /// mappings, its locations at their addresses, functions with files and lines. Without a
    /// base, one sample per stack and process, labelled with its process; for a difference, one
    /// sample per stack with its per-process average growth.
    pub fn pprof(&self, time_nanos: i64) -> Vec<u8> {
        pprof::gzip(&self.pprof_message(time_nanos))
    }

    /// The pprof message [`Fleet::pprof`] encodes.
    pub fn pprof_message(&self, time_nanos: i64) -> proto::Profile {
        let mut strings = Strings::default();
        let mut profile = pprof::header(&mut strings, self.sample_interval(), time_nanos);
        let located = &self.located;
        located.fill(&mut profile, &mut strings);
        let mut values = Integers::default();
        let mut sample = |node: u32, objects: f64, bytes: f64, label: Vec<proto::Label>| {
            profile.sample.push(proto::Sample {
                location_id: located.location_ids(node),
                value: values.next(objects, bytes),
                label,
            });
        };
        if self.is_difference() {
            for (node, [objects, bytes]) in self.growth_by_location_stack() {
                sample(node, objects, bytes, Vec::new());
            }
        } else {
            for process in &self.current.processes {
                let labels = process_labels(process, &mut strings);
                for &(node, objects, bytes) in &process.samples {
                    if node != EMPTY {
                        sample(node, objects, bytes, labels.clone());
                    }
                }
            }
        }
        profile.string_table = strings.table;
        profile
    }

    /// Per stack of locations with a change: the current dumps' per-process average minus the
    /// base dumps', in stack order.
    fn growth_by_location_stack(&self) -> BTreeMap<u32, [f64; 2]> {
        let mut growth: BTreeMap<u32, [f64; 2]> = BTreeMap::new();
        for (group, sign) in [(&self.current, 1.0), (&self.base, -1.0)] {
            let n = group.processes.len().max(1) as f64;
            for process in &group.processes {
                for &(node, objects, bytes) in &process.samples {
                    let weight = growth.entry(node).or_default();
                    weight[0] += sign * objects / n;
                    weight[1] += sign * bytes / n;
                }
            }
        }
        growth.retain(|&node, weight| node != EMPTY && *weight != [0.0; 2]);
        growth
    }

    /// The current dumps' group.
    pub fn current(&self) -> &Group {
        &self.current
    }
}

fn flat(process: &super::Process, label: usize) -> f64 {
    process.flat.get(&(label as u32)).copied().unwrap_or(0.0)
}

fn process_labels(process: &super::Process, strings: &mut Strings) -> Vec<proto::Label> {
    let mut labels = vec![proto::Label {
        key: strings.id("dump"),
        str: strings.id(&process.dump.display().to_string()),
        ..Default::default()
    }];
    if let Some(pid) = process.origin.pid {
        labels.push(proto::Label {
            key: strings.id("pid"),
            num: i64::from(pid),
            ..Default::default()
        });
    }
    if let Some(host) = &process.origin.host {
        labels.push(proto::Label {
            key: strings.id("host"),
            str: strings.id(host),
            ..Default::default()
        });
    }
    if let Some(time) = process.origin.time_ms {
        labels.push(proto::Label {
            key: strings.id("dump_time_ms"),
            num: time as i64,
            ..Default::default()
        });
    }
    labels
}
