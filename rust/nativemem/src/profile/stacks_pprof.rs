//! The pprof of one set of stacks (a dump, or the stacks a report shows): its code locations as
//! [`Located`] holds them, encoded with the primitives of [`super::pprof`].

use super::fleet::located::{DumpLocations, Located};
use super::pprof::{gzip, header, proto, Integers, Strings};
use super::stacks::Stacks;

/// Encodes `stacks` as a gzipped pprof profile with `inuse_objects` and `inuse_space` values.
pub fn render(stacks: &Stacks, time_nanos: i64) -> Vec<u8> {
    gzip(&build(stacks, time_nanos))
}

/// Builds the profile message: the stacks' code locations as [`Located`] holds them.
pub fn build(stacks: &Stacks, time_nanos: i64) -> proto::Profile {
    let mut strings = Strings::default();
    let mut profile = header(&mut strings, stacks.sample_interval, time_nanos);
    let mut located = Located::default();
    let mut dump = DumpLocations::default();
    let build_id = |file: &str| stacks.build_ids.get(file).cloned().unwrap_or_default();
    let mut frames = Vec::new();
    let nodes: Vec<u32> = stacks
        .samples
        .iter()
        .map(|s| located.intern_stack(&mut dump, stacks, &s.locations, &build_id, &mut frames))
        .collect();
    located.fill(&mut profile, &mut strings);
    let mut values = Integers::default();
    for (sample, node) in stacks.samples.iter().zip(nodes) {
        profile.sample.push(proto::Sample {
            location_id: located.location_ids(node),
            value: values.next(sample.objects, sample.bytes),
            label: Vec::new(),
        });
    }
    profile.string_table = strings.table;
    profile
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::stacks::tests::stacks_of;
    use flate2::read::GzDecoder;
    use prost::Message;
    use std::io::Read;

    #[test]
    fn decodes_to_the_same_stacks_and_totals() {
        let stacks = stacks_of(&[(&["leaf", "main"], 100.6), (&["other", "main"], 50.6)]);
        let bytes = render(&stacks, 7);
        let mut raw = Vec::new();
        GzDecoder::new(&bytes[..]).read_to_end(&mut raw).unwrap();
        let profile = proto::Profile::decode(&raw[..]).unwrap();
        let name = |i: i64| profile.string_table[i as usize].as_str();
        assert_eq!(name(profile.sample_type[1].r#type), "inuse_space");
        assert_eq!(profile.sample.iter().map(|s| s.value[1]).sum::<i64>(), 151);
        let leaf = &profile.location[profile.sample[0].location_id[0] as usize - 1];
        let function = &profile.function[leaf.line[0].function_id as usize - 1];
        assert_eq!(name(function.name), "leaf");
        assert_eq!(profile.time_nanos, 7);
    }
}
