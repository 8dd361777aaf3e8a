//! One continuous-export payload: a heap dump the agent just wrote, as the body of one request
//! to a profiling backend. OTLP: an encoded `ExportProfilesServiceRequest` ([`super::otlp`]);
//! Pyroscope: the gzipped pprof its `/ingest` takes (labels travel in its URL, built in Java).

use super::fleet::{Fleet, Role};
use super::{otlp, ProfileError};
use crate::files::Links;
use serde::Deserialize;
use std::path::PathBuf;

/// The wire format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Otlp,
    Pyroscope,
}

/// What the Java exporter asks for (JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    pub dump: PathBuf,
    pub protocol: Protocol,
    /// Resource attributes (OTLP), in order; Pyroscope's go in its URL.
    #[serde(default)]
    pub resource: Vec<(String, String)>,
    /// When the dump was taken and how long the interval before it was.
    pub time_nanos: i64,
    pub duration_nanos: u64,
    /// 16 bytes identifying the export, as 32 hex digits.
    pub profile_id: String,
}

impl ExportRequest {
    /// The request body.
    pub fn render(&self) -> Result<Vec<u8>, ProfileError> {
        let mut fleet = Fleet::new(true);
        fleet.accept_unmapped = true;
        // The agent wrote the dump into its own private directory: a link there is not ours.
        fleet.add(&self.dump, Links::Refuse, Role::Current)?;
        let profile = fleet.pprof_message(self.time_nanos);
        Ok(match self.protocol {
            Protocol::Pyroscope => super::pprof::gzip(&profile),
            Protocol::Otlp => otlp::encode(
                &profile,
                &otlp::Describe {
                    resource: &self.resource,
                    version: env!("CARGO_PKG_VERSION"),
                    duration_nanos: self.duration_nanos,
                    profile_id: profile_id(&self.profile_id)?,
                },
            ),
        })
    }
}

fn profile_id(hex: &str) -> Result<[u8; 16], ProfileError> {
    let bad = || ProfileError::BadRequest(format!("profile_id '{hex}' is not 32 hex digits"));
    if hex.len() != 32 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(id)
}
