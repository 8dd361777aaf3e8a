//! Top sites, flat and cumulative, computed as `jeprof --text` does: a stack's weight goes to its
//! leaf function (flat) and once to every distinct function on it (cumulative).

use super::stacks::Stacks;
use crate::terminal_text::escape;
use serde::Serialize;
use std::fmt::Write;

/// One function's share of the profile.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Site {
    pub name: String,
    /// Bytes allocated by this function itself (it is the leaf), unbiased.
    pub flat_bytes: i64,
    pub flat_objects: i64,
    /// Bytes allocated by this function and everything it called.
    pub cumulative_bytes: i64,
    pub cumulative_objects: i64,
    /// `flat_bytes / |total_bytes|` and `cumulative_bytes / |total_bytes|`: in a difference a
    /// site that shrank has a negative share whatever the sign of the total.
    pub flat_share: f64,
    pub cumulative_share: f64,
    /// In how many of the report's processes (dumps) the function is on a sampled stack.
    pub processes: usize,
}

/// The summary of a profile (or of a difference of two).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Growth since base dumps (figures may then be negative), not in-use bytes.
    pub difference: bool,
    /// Unbiased in-use bytes (growth for a difference), truncated like jeprof's.
    pub total_bytes: i64,
    pub total_objects: i64,
    pub sample_interval_bytes: u64,
    pub stack_count: usize,
    /// Dumps (one per process) merged into the figures; with a base, the current ones.
    pub process_count: usize,
    /// Base dumps of a difference (its figures are per-process averages); 0 without a base.
    pub base_process_count: usize,
    /// Sorted by flat bytes, largest change first (a site that shrank by its size).
    pub top_flat: Vec<Site>,
    /// Sorted by cumulative bytes, largest change first.
    pub top_cumulative: Vec<Site>,
    /// Each process's total and its part of the top flat site, when asked for (`by_process`).
    pub processes: Vec<ProcessTotal>,
    pub warnings: Vec<String>,
}

/// One dump of a merged report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProcessTotal {
    pub dump: String,
    pub pid: Option<u32>,
    pub host: Option<String>,
    pub time_ms: Option<u64>,
    pub total_bytes: i64,
    /// Its own bytes at the report's top flat site, and their share of that site's total.
    pub top_site_bytes: i64,
    pub top_site_share: f64,
}

#[derive(Clone, Copy, Default)]
struct Weight {
    bytes: f64,
    objects: f64,
}

/// Computes the top `top` sites both ways.
pub fn report(stacks: &Stacks, top: usize) -> Report {
    let labels = stacks.labels();
    let mut tally = Tally::new(labels.names.len());
    for sample in &stacks.samples {
        tally.add(stacks.frames(&labels, sample), sample.objects, sample.bytes);
    }
    let mut report = tally.report(|i| labels.names[i].as_str(), top, |_| 1);
    report.sample_interval_bytes = stacks.sample_interval;
    report.stack_count = stacks.samples.len();
    report.warnings = stacks.warnings.clone();
    report
}

/// Flat and cumulative weights per label, stack by stack.
pub struct Tally {
    flat: Vec<Weight>,
    cumulative: Vec<Weight>,
    /// Last stack each label was counted for: recursion counts once per stack.
    seen: Vec<usize>,
    stack: usize,
}

impl Tally {
    pub fn new(labels: usize) -> Tally {
        Tally {
            flat: vec![Weight::default(); labels],
            cumulative: vec![Weight::default(); labels],
            seen: vec![usize::MAX; labels],
            stack: 0,
        }
    }

    /// Adds one stack (labels leaf first) and its weight.
    pub fn add(&mut self, frames: impl Iterator<Item = usize>, objects: f64, bytes: f64) {
        let mut frames = frames.peekable();
        if let Some(&leaf) = frames.peek() {
            self.flat[leaf].bytes += bytes;
            self.flat[leaf].objects += objects;
        }
        for label in frames {
            if self.seen[label] != self.stack {
                self.seen[label] = self.stack;
                self.cumulative[label].bytes += bytes;
                self.cumulative[label].objects += objects;
            }
        }
        self.stack += 1;
    }

    /// The top `top` sites both ways, each with its process count; header fields are the
    /// caller's to fill.
    pub fn report<'n>(
        self,
        name: impl Fn(usize) -> &'n str,
        top: usize,
        processes: impl Fn(usize) -> usize,
    ) -> Report {
        let Tally {
            flat, cumulative, ..
        } = self;
        let total_bytes = flat.iter().map(|w| w.bytes).sum::<f64>();
        let total_objects = flat.iter().map(|w| w.objects).sum::<f64>();
        let site = |i: usize| Site {
            name: name(i).to_owned(),
            flat_bytes: flat[i].bytes as i64,
            flat_objects: flat[i].objects as i64,
            cumulative_bytes: cumulative[i].bytes as i64,
            cumulative_objects: cumulative[i].objects as i64,
            flat_share: share(flat[i].bytes, total_bytes),
            cumulative_share: share(cumulative[i].bytes, total_bytes),
            processes: processes(i),
        };
        let ranked = |key: &[Weight]| -> Vec<Site> {
            // Functions seen only in stripped allocator frames have nothing to show.
            let mut order: Vec<usize> = (0..flat.len())
                .filter(|&i| flat[i].bytes != 0.0 || cumulative[i].bytes != 0.0)
                .collect();
            // By size of the change: in a difference a site that shrank ranks by how much,
            // beside those that grew (in-use figures are never negative: the same order).
            let rank = |&a: &usize, &b: &usize| {
                key[b]
                    .bytes
                    .abs()
                    .total_cmp(&key[a].bytes.abs())
                    .then_with(|| key[b].bytes.total_cmp(&key[a].bytes))
                    .then_with(|| name(a).cmp(name(b)))
            };
            // Labels are distinct, so the order is total: the first `top` of a full sort.
            if order.len() > top {
                order.select_nth_unstable_by(top, rank);
                order.truncate(top);
            }
            order.sort_by(rank);
            order.into_iter().map(site).collect()
        };
        Report {
            difference: false,
            total_bytes: total_bytes as i64,
            total_objects: total_objects as i64,
            sample_interval_bytes: 0,
            stack_count: 0,
            process_count: 1,
            base_process_count: 0,
            top_flat: ranked(&flat),
            top_cumulative: ranked(&cumulative),
            processes: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// `part` against the size of `total`: the sign is the part's (a shrinking site of a difference
/// is negative), and nothing is never `-0.0`.
fn share(part: f64, total: f64) -> f64 {
    if total == 0.0 || part == 0.0 {
        0.0
    } else {
        part / total.abs()
    }
}

/// Human size: bytes below 1 KiB, else KiB/MiB/GiB with one decimal (negative for shrinkage).
pub fn human_bytes(bytes: i64) -> String {
    let magnitude = bytes.unsigned_abs() as f64;
    let sign = if bytes < 0 { "-" } else { "" };
    match magnitude {
        m if m < 1024.0 => format!("{bytes} B"),
        m if m < 1024.0 * 1024.0 => format!("{sign}{:.1} KiB", m / 1024.0),
        m if m < 1024.0 * 1024.0 * 1024.0 => format!("{sign}{:.1} MiB", m / 1048576.0),
        m => format!("{sign}{:.1} GiB", m / 1073741824.0),
    }
}

/// The report as text, in jeprof's column layout (flat, flat%, sum%, cum, cum%, name), once
/// sorted by flat and once by cumulative bytes; for several processes, in how many each site is.
/// Names, dumps, hosts and warnings come from files someone else may have written: their control
/// characters are shown, never sent to the terminal ([`crate::terminal_text`]).
pub fn render_text(report: &Report, title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{title}: {} ({} bytes, {} objects) in {} stacks, sampled every {} on average",
        human_bytes(report.total_bytes),
        report.total_bytes,
        report.total_objects,
        report.stack_count,
        human_bytes(report.sample_interval_bytes as i64),
    );
    let fleet = report.process_count > 1;
    let in_processes = |site: &Site| match fleet {
        true => format!(
            "  in {} of {} processes",
            site.processes, report.process_count
        ),
        false => String::new(),
    };
    for (heading, sites) in [
        ("Top sites by own bytes (flat)", &report.top_flat),
        (
            "Top sites by bytes including callees (cumulative)",
            &report.top_cumulative,
        ),
    ] {
        let _ = writeln!(out, "\n{heading}:");
        let _ = writeln!(
            out,
            "{:>12} {:>6} {:>6} {:>12} {:>6}  site",
            "flat", "flat%", "sum%", "cum", "cum%"
        );
        let mut running = 0.0;
        for site in sites.iter() {
            running += site.flat_share;
            let _ = writeln!(
                out,
                "{:>12} {:>5.1}% {:>5.1}% {:>12} {:>5.1}%  {}{}",
                human_bytes(site.flat_bytes),
                site.flat_share * 100.0,
                running * 100.0,
                human_bytes(site.cumulative_bytes),
                site.cumulative_share * 100.0,
                escape(&site.name),
                in_processes(site),
            );
        }
    }
    if !report.processes.is_empty() {
        let top = escape(report.top_flat.first().map_or("-", |s| s.name.as_str()));
        let _ = writeln!(out, "\nBy process (top flat site: {top}):");
        let _ = writeln!(
            out,
            "{:>12} {:>12} {:>6}  {:<8} {:<16} dump",
            "total", "top site", "share", "pid", "host"
        );
        for p in &report.processes {
            let _ = writeln!(
                out,
                "{:>12} {:>12} {:>5.1}%  {:<8} {:<16} {}",
                human_bytes(p.total_bytes),
                human_bytes(p.top_site_bytes),
                p.top_site_share * 100.0,
                p.pid.map_or("-".into(), |pid| pid.to_string()),
                escape(p.host.as_deref().unwrap_or("-")),
                escape(&p.dump)
            );
        }
    }
    for warning in &report.warnings {
        let _ = writeln!(out, "warning: {}", escape(warning));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::stacks::tests::stacks_of;

    #[test]
    fn flat_goes_to_the_leaf_and_recursion_counts_once() {
        let stacks = stacks_of(&[
            (&["leaf", "rec", "rec", "main"], 100.0),
            (&["rec", "main"], 50.0),
            (&["other", "main"], 25.0),
        ]);
        let r = report(&stacks, 10);
        assert_eq!(r.total_bytes, 175);
        let flat: Vec<_> = r
            .top_flat
            .iter()
            .map(|s| (s.name.as_str(), s.flat_bytes))
            .collect();
        assert_eq!(flat[..3], [("leaf", 100), ("rec", 50), ("other", 25)]);
        let cum: Vec<_> = r
            .top_cumulative
            .iter()
            .map(|s| (s.name.as_str(), s.cumulative_bytes))
            .collect();
        assert_eq!(
            cum,
            [("main", 175), ("rec", 150), ("leaf", 100), ("other", 25)]
        );
        let text = render_text(&r, "In use");
        assert!(text.contains("175 B"), "{text}");
    }

    #[test]
    fn text_shows_control_characters_of_names_dumps_hosts_and_warnings() {
        let hostile = "\u{1b}[2J\u{1b}]0;owned\u{7}\u{1b}[31m\u{9b}1m";
        let mut r = report(&stacks_of(&[(&[hostile, "main"], 100.0)]), 10);
        r.processes.push(ProcessTotal {
            dump: hostile.into(),
            pid: Some(1),
            host: Some(hostile.into()),
            time_ms: None,
            total_bytes: 100,
            top_site_bytes: 100,
            top_site_share: 1.0,
        });
        r.warnings.push(format!("cannot read {hostile}"));
        let text = render_text(&r, "In use");
        assert!(
            !text.chars().any(|c| c != '\n' && c.is_control()),
            "{text:?}"
        );
        assert!(text.contains("\\x1b[2J\\x1b]0;owned\\x07"), "{text}");
        assert!(text.contains("\\u009b1m"), "{text}");
    }

    #[test]
    fn human_sizes_have_one_decimal() {
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(-3 * 1048576), "-3.0 MiB");
        assert_eq!(human_bytes(5 << 30), "5.0 GiB");
    }
}
