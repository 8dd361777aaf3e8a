//! A pprof message as an OTLP profiles export request (`v1development`, the version the
//! OpenTelemetry Collector v0.165.0 accepts): one dictionary shared by one OTLP `Profile` per
//! pprof sample type (`inuse_space`, `inuse_objects`), the resource's attributes given by the
//! caller, build IDs as the mappings' `process.executable.build_id.gnu` attributes and pprof's
//! sample labels as sample attributes. Every dictionary table starts with its zero value, as
//! the protocol requires.

use super::pprof::proto as pprof;
use prost::Message;
use std::collections::HashMap;

/// Types generated from opentelemetry-proto's files at build time, in its package tree.
#[allow(clippy::all, missing_docs)]
pub mod proto {
    pub mod common {
        pub mod v1 {
            include!(concat!(
                env!("OUT_DIR"),
                "/opentelemetry.proto.common.v1.rs"
            ));
        }
    }
    pub mod resource {
        pub mod v1 {
            include!(concat!(
                env!("OUT_DIR"),
                "/opentelemetry.proto.resource.v1.rs"
            ));
        }
    }
    pub mod profiles {
        pub mod v1development {
            include!(concat!(
                env!("OUT_DIR"),
                "/opentelemetry.proto.profiles.v1development.rs"
            ));
        }
    }
    pub mod collector {
        pub mod profiles {
            pub mod v1development {
                include!(concat!(
                    env!("OUT_DIR"),
                    "/opentelemetry.proto.collector.profiles.v1development.rs"
                ));
            }
        }
    }
}

use proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use proto::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use proto::profiles::v1development as otlp;

/// The semantic-convention key of a mapped file's GNU build ID.
pub const BUILD_ID_KEY: &str = "process.executable.build_id.gnu";

/// What the profile is about: resource attributes, the scope's version, the interval it covers.
pub struct Describe<'a> {
    pub resource: &'a [(String, String)],
    pub version: &'a str,
    pub duration_nanos: u64,
    /// 16 bytes that identify this export.
    pub profile_id: [u8; 16],
}

/// The OTLP export request for `profile`, encoded.
pub fn encode(profile: &pprof::Profile, describe: &Describe) -> Vec<u8> {
    request(profile, describe).encode_to_vec()
}

/// The OTLP export request for `profile`.
pub fn request(profile: &pprof::Profile, describe: &Describe) -> ExportProfilesServiceRequest {
    let mut dictionary = otlp::ProfilesDictionary {
        mapping_table: vec![otlp::Mapping::default()],
        location_table: vec![otlp::Location::default()],
        function_table: vec![otlp::Function::default()],
        link_table: vec![otlp::Link {
            trace_id: vec![0; 16],
            span_id: vec![0; 8],
        }],
        string_table: profile.string_table.clone(),
        attribute_table: vec![otlp::KeyValueAndUnit::default()],
        stack_table: vec![otlp::Stack::default()],
    };
    if dictionary.string_table.is_empty() {
        dictionary.string_table.push(String::new());
    }
    let mut attributes = Attributes::default();
    // pprof ids are 1.. in order (our writer's): the OTLP index of id n is n.
    for m in &profile.mapping {
        let mut indices = Vec::new();
        let build_id = text(profile, m.build_id);
        if !build_id.is_empty() {
            indices.push(attributes.string(&mut dictionary, BUILD_ID_KEY, build_id));
        }
        dictionary.mapping_table.push(otlp::Mapping {
            memory_start: m.memory_start,
            memory_limit: m.memory_limit,
            file_offset: m.file_offset,
            filename_strindex: m.filename as i32,
            attribute_indices: indices,
        });
    }
    for f in &profile.function {
        dictionary.function_table.push(otlp::Function {
            name_strindex: f.name as i32,
            system_name_strindex: f.system_name as i32,
            filename_strindex: f.filename as i32,
            start_line: f.start_line,
        });
    }
    for l in &profile.location {
        dictionary.location_table.push(otlp::Location {
            mapping_index: l.mapping_id as i32,
            address: l.address,
            lines: l
                .line
                .iter()
                .map(|line| otlp::Line {
                    function_index: line.function_id as i32,
                    line: line.line,
                    column: line.column,
                })
                .collect(),
            attribute_indices: Vec::new(),
        });
    }
    let mut stacks: HashMap<Vec<i32>, i32> = HashMap::new();
    let mut sample_stacks = Vec::with_capacity(profile.sample.len());
    let mut sample_attributes = Vec::with_capacity(profile.sample.len());
    for sample in &profile.sample {
        let locations: Vec<i32> = sample.location_id.iter().map(|&id| id as i32).collect();
        let next = dictionary.stack_table.len() as i32;
        let index = *stacks.entry(locations.clone()).or_insert_with(|| {
            dictionary.stack_table.push(otlp::Stack {
                location_indices: locations,
            });
            next
        });
        sample_stacks.push(index);
        let labels = sample
            .label
            .iter()
            .map(|label| {
                let key = text(profile, label.key).to_owned();
                match label.str {
                    0 => attributes.int(&mut dictionary, &key, label.num),
                    s => attributes.string(&mut dictionary, &key, text(profile, s)),
                }
            })
            .collect::<Vec<i32>>();
        sample_attributes.push(labels);
    }
    let value_type = |v: &pprof::ValueType| otlp::ValueType {
        type_strindex: v.r#type as i32,
        unit_strindex: v.unit as i32,
    };
    let profiles = profile
        .sample_type
        .iter()
        .enumerate()
        .map(|(k, sample_type)| otlp::Profile {
            sample_type: Some(value_type(sample_type)),
            samples: profile
                .sample
                .iter()
                .enumerate()
                .filter(|(_, s)| s.value.get(k).is_some_and(|&v| v != 0))
                .map(|(i, s)| otlp::Sample {
                    stack_index: sample_stacks[i],
                    attribute_indices: sample_attributes[i].clone(),
                    link_index: 0,
                    values: vec![s.value[k]],
                    timestamps_unix_nano: Vec::new(),
                })
                .collect(),
            time_unix_nano: profile.time_nanos.max(0) as u64,
            duration_nano: describe.duration_nanos,
            period_type: profile.period_type.as_ref().map(value_type),
            period: profile.period,
            profile_id: describe.profile_id.to_vec(),
            dropped_attributes_count: 0,
            original_payload_format: String::new(),
            original_payload: Vec::new(),
            attribute_indices: Vec::new(),
        })
        .collect();
    let resource = proto::resource::v1::Resource {
        attributes: describe
            .resource
            .iter()
            .map(|(key, value)| KeyValue {
                key: key.clone(),
                value: Some(string_value(value)),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    ExportProfilesServiceRequest {
        resource_profiles: vec![otlp::ResourceProfiles {
            resource: Some(resource),
            scope_profiles: vec![otlp::ScopeProfiles {
                scope: Some(InstrumentationScope {
                    name: "nativemem".to_owned(),
                    version: describe.version.to_owned(),
                    ..Default::default()
                }),
                profiles,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
        dictionary: Some(dictionary),
    }
}

fn text(profile: &pprof::Profile, index: i64) -> &str {
    usize::try_from(index)
        .ok()
        .and_then(|i| profile.string_table.get(i))
        .map_or("", String::as_str)
}

fn string_value(value: &str) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::StringValue(value.to_owned())),
    }
}

/// The dictionary's attribute table, each key and value once.
#[derive(Default)]
struct Attributes {
    ids: HashMap<(String, String), i32>,
    strings: HashMap<String, i32>,
}

impl Attributes {
    fn string(&mut self, d: &mut otlp::ProfilesDictionary, key: &str, value: &str) -> i32 {
        self.add(d, key, format!("s{value}"), string_value(value))
    }

    fn int(&mut self, d: &mut otlp::ProfilesDictionary, key: &str, value: i64) -> i32 {
        let any = AnyValue {
            value: Some(any_value::Value::IntValue(value)),
        };
        self.add(d, key, format!("i{value}"), any)
    }

    fn add(
        &mut self,
        d: &mut otlp::ProfilesDictionary,
        key: &str,
        tag: String,
        value: AnyValue,
    ) -> i32 {
        if let Some(&id) = self.ids.get(&(key.to_owned(), tag.clone())) {
            return id;
        }
        let key_index = match self.strings.get(key) {
            Some(&i) => i,
            None => {
                let found = d.string_table.iter().position(|s| s == key);
                let i = found.unwrap_or_else(|| {
                    d.string_table.push(key.to_owned());
                    d.string_table.len() - 1
                }) as i32;
                self.strings.insert(key.to_owned(), i);
                i
            }
        };
        d.attribute_table.push(otlp::KeyValueAndUnit {
            key_strindex: key_index,
            value: Some(value),
            unit_strindex: 0,
        });
        let id = d.attribute_table.len() as i32 - 1;
        self.ids.insert((key.to_owned(), tag), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::pprof::{self, Integers, Strings};

    /// A pprof of two stacks through one mapping with a build ID, one labelled sample.
    fn pprof_profile() -> pprof::proto::Profile {
        let mut strings = Strings::default();
        let mut profile = pprof::header(&mut strings, 512 * 1024, 7);
        profile.mapping.push(pprof::proto::Mapping {
            id: 1,
            memory_start: 0x1000,
            memory_limit: 0x2000,
            filename: strings.id("/usr/lib/libz.so.1"),
            build_id: strings.id("abcd"),
            ..Default::default()
        });
        for (id, name) in [(1, "inflateInit2_"), (2, "Planter.plant")] {
            profile.function.push(pprof::proto::Function {
                id,
                name: strings.id(name),
                system_name: strings.id(name),
                filename: strings.id(if id == 2 { "Planter.java" } else { "" }),
                start_line: 0,
            });
            profile.location.push(pprof::proto::Location {
                id,
                mapping_id: if id == 1 { 1 } else { 0 },
                address: if id == 1 { 0x1234 } else { 0 },
                line: vec![pprof::proto::Line {
                    function_id: id,
                    line: if id == 2 { 4 } else { 0 },
                    column: 0,
                }],
                is_folded: false,
            });
        }
        let mut values = Integers::default();
        profile.sample.push(pprof::proto::Sample {
            location_id: vec![1, 2],
            value: values.next(3.0, 3000.0),
            label: vec![pprof::proto::Label {
                key: strings.id("pid"),
                num: 42,
                ..Default::default()
            }],
        });
        profile.sample.push(pprof::proto::Sample {
            location_id: vec![2],
            value: values.next(1.0, 1000.0),
            label: Vec::new(),
        });
        profile.string_table = strings.table;
        profile
    }

    #[test]
    fn one_profile_per_sample_type_over_one_dictionary_with_zero_entries_first() {
        let resource = [("service.name".to_owned(), "planter".to_owned())];
        let bytes = encode(
            &pprof_profile(),
            &Describe {
                resource: &resource,
                version: "0.1.0",
                duration_nanos: 60_000_000_000,
                profile_id: [7; 16],
            },
        );
        let request = ExportProfilesServiceRequest::decode(&bytes[..]).unwrap();
        let d = request.dictionary.as_ref().unwrap();
        assert_eq!(d.string_table[0], "");
        assert_eq!(d.mapping_table[0], otlp::Mapping::default());
        assert_eq!(d.location_table[0], otlp::Location::default());
        assert_eq!(d.function_table[0], otlp::Function::default());
        assert_eq!(d.stack_table[0], otlp::Stack::default());
        assert_eq!(d.attribute_table[0], otlp::KeyValueAndUnit::default());
        assert_eq!(d.link_table[0].trace_id.len(), 16);
        let s = |i: i32| d.string_table[i as usize].as_str();
        let mapping = &d.mapping_table[1];
        assert_eq!(s(mapping.filename_strindex), "/usr/lib/libz.so.1");
        let build = &d.attribute_table[mapping.attribute_indices[0] as usize];
        assert_eq!(s(build.key_strindex), BUILD_ID_KEY);
        let scope = &request.resource_profiles[0].scope_profiles[0];
        assert_eq!(scope.profiles.len(), 2);
        let totals: Vec<(String, i64)> = scope
            .profiles
            .iter()
            .map(|p| {
                let t = s(p.sample_type.as_ref().unwrap().type_strindex).to_owned();
                (t, p.samples.iter().map(|x| x.values[0]).sum())
            })
            .collect();
        assert_eq!(
            totals,
            [("inuse_objects".into(), 4), ("inuse_space".into(), 4000)]
        );
        // The Java frame: a function with its file, its line in the location's line table.
        let space = &scope.profiles[1];
        let first = &space.samples[0];
        let stack = &d.stack_table[first.stack_index as usize];
        let java = &d.location_table[stack.location_indices[1] as usize];
        assert_eq!(java.lines[0].line, 4);
        let function = &d.function_table[java.lines[0].function_index as usize];
        assert_eq!(s(function.name_strindex), "Planter.plant");
        assert_eq!(s(function.filename_strindex), "Planter.java");
        let pid = &d.attribute_table[first.attribute_indices[0] as usize];
        assert_eq!(s(pid.key_strindex), "pid");
        assert_eq!(space.profile_id, vec![7; 16]);
        let resource = request.resource_profiles[0].resource.as_ref().unwrap();
        assert_eq!(resource.attributes[0].key, "service.name");
    }
}
