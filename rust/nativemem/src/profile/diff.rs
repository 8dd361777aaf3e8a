//! Growth between two dumps, like `jeprof --base`: each function stack's bytes and objects in the
//! current dump minus those in the base. Stacks are matched by function names, not addresses,
//! so dumps of two processes (other load addresses) compare as well as two of one process.

use super::stacks::{Function, Sample, Stacks};
use std::collections::HashMap;

/// `current - base` per function stack; stacks that did not change are left out.
pub fn difference(current: &Stacks, base: &Stacks) -> Stacks {
    let mut result = Stacks {
        sample_interval: current.sample_interval,
        ..Stacks::default()
    };
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut by_stack: HashMap<Vec<usize>, (f64, f64)> = HashMap::new();
    let mut order: Vec<Vec<usize>> = Vec::new();
    for (stacks, sign) in [(current, 1.0), (base, -1.0)] {
        let labels = stacks.labels();
        for sample in &stacks.samples {
            let key: Vec<usize> = stacks
                .frames(&labels, sample)
                .map(|label| {
                    let name = &labels.names[label];
                    *by_name.entry(name.clone()).or_insert_with(|| {
                        result.functions.push(Function {
                            name: name.clone(),
                            full_name: name.clone(),
                            file: None,
                            java: false,
                        });
                        let function = (result.functions.len() - 1) as u32;
                        result.locations.push(0, None, &[(function, 0)])
                    })
                })
                .collect();
            let entry = by_stack.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                (0.0, 0.0)
            });
            entry.0 += sign * sample.objects;
            entry.1 += sign * sample.bytes;
        }
        result.warnings.extend(
            stacks
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", role(sign))),
        );
    }
    for key in order {
        let (objects, bytes) = by_stack[&key];
        if bytes != 0.0 || objects != 0.0 {
            result.samples.push(Sample {
                locations: key,
                objects,
                bytes,
            });
        }
    }
    result
}

fn role(sign: f64) -> &'static str {
    if sign > 0.0 {
        "current"
    } else {
        "base"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::report::{render_text, report};
    use crate::profile::stacks::tests::stacks_of;

    #[test]
    fn growth_is_current_minus_base_by_site() {
        let base = stacks_of(&[(&["cache", "main"], 100.0), (&["gone", "main"], 40.0)]);
        let current = stacks_of(&[
            (&["cache", "main"], 350.0),
            (&["leak", "job", "main"], 64.0),
            (&["same", "main"], 1.0),
        ]);
        let diff = difference(&current, &base);
        let r = report(&diff, 10);
        assert_eq!(r.total_bytes, 350 - 100 + 64 + 1 - 40);
        let flat: Vec<_> = r
            .top_flat
            .iter()
            .map(|s| (s.name.as_str(), s.flat_bytes))
            .collect();
        assert_eq!(flat[0], ("cache", 250));
        assert_eq!(flat[1], ("leak", 64));
        assert!(flat.contains(&("gone", -40)));
        let cum = r.top_cumulative.iter().find(|s| s.name == "job").unwrap();
        assert_eq!(cum.cumulative_bytes, 64);
    }

    #[test]
    fn a_site_that_shrank_ranks_by_its_size_with_its_sign() {
        const MIB: f64 = 1048576.0;
        let names: Vec<String> = (0..20).map(|i| format!("small_{i:02}")).collect();
        let mut base: Vec<(Vec<&str>, f64)> = vec![(vec!["cache_fill", "main"], 6.7 * MIB)];
        let mut current: Vec<(Vec<&str>, f64)> = Vec::new();
        // Twenty sites that grew by a few bytes each: more than the report's top ten.
        for (i, name) in names.iter().enumerate() {
            base.push((vec![name, "worker", "main"], 1000.0));
            current.push((vec![name, "worker", "main"], 1010.0 + i as f64));
        }
        let slices = |sites: &[(Vec<&str>, f64)]| {
            stacks_of(
                &sites
                    .iter()
                    .map(|(names, bytes)| (names.as_slice(), *bytes))
                    .collect::<Vec<_>>(),
            )
        };
        let diff = difference(&slices(&current), &slices(&base));
        let r = report(&diff, 10);
        assert!(r.total_bytes < -(6.6 * MIB) as i64, "{}", r.total_bytes);
        let first = &r.top_flat[0];
        assert_eq!(first.name, "cache_fill");
        assert_eq!(first.flat_bytes, -(6.7 * MIB) as i64);
        assert!(first.flat_share < -0.99, "{}", first.flat_share);
        let grew = r.top_flat.iter().find(|s| s.name == "small_19").unwrap();
        assert!(grew.flat_bytes == 29 && grew.flat_share > 0.0);
        let cumulative: Vec<_> = r.top_cumulative.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(cumulative[..3], ["cache_fill", "main", "worker"]);
        assert!(r.top_cumulative[1].cumulative_bytes < 0);
        let text = render_text(&r, "Growth");
        assert!(text.contains("-6.7 MiB"), "{text}");
        assert!(!text.contains("-0.0%"), "{text}");
    }

    #[test]
    fn identical_dumps_differ_by_nothing() {
        let one = stacks_of(&[(&["a", "main"], 10.0)]);
        assert!(difference(&one, &one).samples.is_empty());
    }
}
