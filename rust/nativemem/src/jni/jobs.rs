//! `NativeBridge.call(job, request)`: every job that answers with a value, by name, in one export.
//!
//! A job's name is spelled once, here, and Java passes the same string; its request is a JSON
//! object read into a typed struct that refuses unknown keys, and its answer is the value's JSON
//! (`serde_json`), which Java reads into its immutable classes. An unknown name or a malformed
//! request is an `IllegalArgumentException` that names what is accepted. What stays a typed export
//! of its own is what runs often on an application's thread (handle tracking, the watch's sample,
//! one `mallctl` number), what moves bytes (new files, export payloads,
//! attach replies), the file layer's descriptors, the agent's class calls, and `version`, which the
//! loader asks before anything else so that a library of another version is named, not mistaken.

use super::exports::from_java;
use super::BridgeError;
use crate::allocator::{self, remedies, AllocatorError, RemedyOutcome};
use crate::handles::{registry, site_keys};
use crate::jobs::{bundle_files, directory, heap_dump, incident_bundle, watch_directory};
use crate::sampling::{self, java_frames};
use crate::{diagnostic_commands, native_view, process, profile};
use jni::objects::JString;
use jni::sys::jstring;
use jni::JNIEnv;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One job: its name, and what it does with the request's text.
struct Job {
    name: &'static str,
    run: fn(&mut JNIEnv, Asked) -> Result<String, BridgeError>,
}

/// A job's request as it came: the job's name (for the error) and the JSON text.
#[derive(Clone, Copy)]
struct Asked<'a> {
    job: &'a str,
    text: &'a str,
}

impl Asked<'_> {
    /// The request, a JSON object, read as `T`: unknown keys and missing required keys are refused.
    fn read<T: DeserializeOwned>(self) -> Result<T, BridgeError> {
        // serde would also read a struct from an array of its fields: a request is an object.
        if !self.text.trim_start().starts_with('{') {
            return Err(BridgeError::InvalidArgument(format!(
                "a malformed '{}' request: it must be a JSON object",
                self.job
            )));
        }
        serde_json::from_str(self.text).map_err(|e| {
            BridgeError::InvalidArgument(format!("a malformed '{}' request: {e}", self.job))
        })
    }

    /// The request of a job that takes nothing: `{}`.
    fn nothing(self) -> Result<(), BridgeError> {
        self.read::<Nothing>().map(|_| ())
    }
}

/// The value's JSON.
fn answer<T: Serialize>(value: &T) -> Result<String, BridgeError> {
    Ok(serde_json::to_string(value)?)
}

/// The request of a job that takes nothing: `{}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pid {
    pid: i64,
}

/// `[start, end)` address pairs, at most 1024.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ranges {
    ranges: Vec<(u64, u64)>,
}

impl Ranges {
    fn read(asked: Asked) -> Result<Vec<(u64, u64)>, BridgeError> {
        let Ranges { ranges } = asked.read()?;
        if ranges.len() > 1024 {
            return Err(BridgeError::InvalidArgument(format!(
                "ranges must be at most 1024 start/end pairs, got {}",
                ranges.len()
            )));
        }
        Ok(ranges)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decay {
    dirty_ms: i64,
    muzzy_ms: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Site {
    site: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Name {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Stack {
    stack: String,
}

/// Handles counted without a record: `created`, of which `closed` and `leaked`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Counted {
    kind: u32,
    site: u32,
    created: u64,
    closed: u64,
    leaked: u64,
}

/// Of the handles counted at `site`, `pooled` rest now in the pool noted by `pool_site`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CountedPooled {
    kind: u32,
    site: u32,
    pool_site: u32,
    pooled: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Handle {
    handle: u64,
}

/// A handle ended as leaked, then freed by a finalizer.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Finalized {
    handle: u64,
    kind: u32,
    site: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Active {
    active: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JavaFrames {
    on: bool,
}

/// `interval_bytes` absent or <= 0 keeps the interval; the answer is the interval in effect.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SamplingReset {
    #[serde(default)]
    interval_bytes: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Dump {
    dump: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Command {
    command: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachOpen {
    pid: i64,
    jar: PathBuf,
    timeout_ms: i64,
    rerun: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachLoadAgent {
    session: i64,
    options: String,
    timeout_ms: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Session {
    session: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Panic {
    message: String,
}

/// A remedy's outcome; settings out of range become `IllegalArgumentException`.
fn remedy(
    act: impl FnOnce() -> Result<RemedyOutcome, AllocatorError>,
) -> Result<RemedyOutcome, BridgeError> {
    match act() {
        Err(e @ AllocatorError::OutOfRange { .. }) => {
            Err(BridgeError::InvalidArgument(e.to_string()))
        }
        other => Ok(other?),
    }
}

fn positive_pid(pid: i64) -> Result<u32, BridgeError> {
    u32::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| BridgeError::InvalidArgument(format!("bad pid {pid}")))
}

/// A job that takes nothing (`{}`) and answers the JSON of `$value` (an expression that may use `?`).
macro_rules! reading {
    ($name:literal, $value:expr) => {
        Job {
            name: $name,
            run: |_, asked| {
                asked.nothing()?;
                answer(&$value)
            },
        }
    };
}

/// A job whose request is a struct of its own module, answered by one function of it.
macro_rules! asks {
    ($name:literal, $run:path) => {
        Job {
            name: $name,
            run: |_, asked| answer(&$run(&asked.read()?)?),
        }
    };
}

/// Every job, by name.
const JOBS: &[Job] = &[
    reading!("jobs", JOBS.iter().map(|job| job.name).collect::<Vec<_>>()),
    Job {
        name: "self_test_panic",
        run: |_, asked| {
            let Panic { message } = asked.read()?;
            panic!("self-test panic: {message}");
        },
    },
    // The allocator and the process.
    reading!("allocator", allocator::describe()?),
    reading!("allocator_stats", allocator::stats()?),
    reading!("raw_allocator_stats", allocator::raw_stats()?.1),
    reading!("process_memory", process::memory()?),
    Job {
        name: "container_memory_of",
        run: |_, asked| {
            let Pid { pid } = asked.read()?;
            answer(&process::container_memory_of(positive_pid(pid)?))
        },
    },
    // The memory breakdown's native side.
    reading!("native_view", native_view::read()?),
    Job {
        name: "resident_ranges",
        run: |_, asked| answer(&process::resident_in(&Ranges::read(asked)?)),
    },
    Job {
        name: "memory_snapshot",
        run: |_, asked| answer(&native_view::snapshot(&Ranges::read(asked)?)?),
    },
    // Remedies.
    reading!("purge", remedy(remedies::purge)?),
    Job {
        name: "set_decay",
        run: |_, asked| {
            let Decay { dirty_ms, muzzy_ms } = asked.read()?;
            answer(&remedy(|| remedies::set_decay(dirty_ms, muzzy_ms))?)
        },
    },
    reading!(
        "enable_background_threads",
        remedy(remedies::enable_background_threads)?
    ),
    reading!("flush_thread_cache", remedy(remedies::flush_thread_cache)?),
    reading!("trim", remedy(remedies::trim)?),
    // Native handles: what the tracker tells once per kind, thread, site or batch (the events of
    // every handle are typed exports, super::handles).
    Job {
        name: "handle_kind",
        run: |_, asked| {
            let Name { name } = asked.read()?;
            answer(&registry().intern_kind(&name))
        },
    },
    Job {
        name: "handle_thread",
        run: |_, asked| {
            let Name { name } = asked.read()?;
            answer(&registry().intern_thread(&name))
        },
    },
    Job {
        name: "handle_site",
        run: |_, asked| {
            let Stack { stack } = asked.read()?;
            answer(&registry().intern_site(&stack))
        },
    },
    Job {
        // The site of `stack`, the text of the calling thread's stack, remembered for that stack
        // (after `handlesSiteOfStack` answered -1 on this thread).
        name: "handle_site_of_stack",
        run: |env, asked| {
            let Stack { stack } = asked.read()?;
            let site = registry().intern_site(&stack);
            site_keys::bind(env, site);
            answer(&site)
        },
    },
    Job {
        name: "handles_counted",
        run: |_, asked| {
            let Counted {
                kind,
                site,
                created,
                closed,
                leaked,
            } = asked.read()?;
            registry().counted(kind, site, created, closed, leaked);
            answer(&())
        },
    },
    Job {
        name: "handles_counted_pooled",
        run: |_, asked| {
            let CountedPooled {
                kind,
                site,
                pool_site,
                pooled,
            } = asked.read()?;
            registry().counted_pooled(kind, site, pool_site, pooled);
            answer(&())
        },
    },
    Job {
        // A cleaner handed a dropped stream's Inflater to a pool: a leak at the reader's site.
        name: "handle_leaked_into_pool",
        run: |_, asked| {
            let Handle { handle } = asked.read()?;
            registry().leaked_into_pool(handle);
            answer(&())
        },
    },
    Job {
        name: "handle_finalized",
        run: |_, asked| {
            let Finalized { handle, kind, site } = asked.read()?;
            registry().finalized(handle, kind, site);
            answer(&())
        },
    },
    reading!("handles_report", registry().report()),
    reading!("handles_summary", registry().summary()),
    Job {
        name: "handle_site_text",
        run: |_, asked| {
            let Site { site } = asked.read()?;
            answer(&registry().site_text(site))
        },
    },
    // Heap profiles.
    reading!("sampling_status", sampling::status()?),
    Job {
        name: "sampling_active",
        run: |_, asked| {
            let Active { active } = asked.read()?;
            answer(&sampling::set_active(active)?)
        },
    },
    Job {
        // The calling thread's own switch.
        name: "sampling_thread_active",
        run: |_, asked| {
            let Active { active } = asked.read()?;
            answer(&sampling::set_thread_active(active)?)
        },
    },
    Job {
        name: "sampling_reset",
        run: |_, asked| {
            let SamplingReset { interval_bytes } = asked.read()?;
            let interval = (interval_bytes > 0).then_some(interval_bytes as u64);
            answer(&sampling::reset(interval)?)
        },
    },
    Job {
        name: "java_frames",
        run: |env, asked| {
            let JavaFrames { on } = asked.read()?;
            let vm = env.get_java_vm()?.get_java_vm_pointer();
            // SAFETY: the JavaVM of this JNI call, on a thread attached to it.
            answer(&unsafe { java_frames::set_enabled(vm.cast(), on)? })
        },
    },
    reading!("java_frames_status", java_frames::status()),
    asks!("heap_dump", heap_dump::run),
    // The memory watch's directory and its bundles.
    asks!("watch_directory_open", watch_directory::open),
    asks!("watch_directory_ready", watch_directory::ready),
    asks!("watch_directory_prune", watch_directory::prune),
    asks!("incident_bundle_begin", incident_bundle::begin),
    asks!("directory_replace", directory::replace),
    asks!("incident_bundle_publish", incident_bundle::publish),
    asks!("directory_remove", directory::remove),
    asks!("directory_open", directory::open),
    asks!("directory_close", directory::close),
    asks!("bundle_files", bundle_files::read),
    Job {
        name: "profile_summary",
        run: |_, asked| {
            let Dump { dump } = asked.read()?;
            answer(&profile::summary(&dump)?)
        },
    },
    asks!("profile_request", profile::Request::run),
    // HotSpot's diagnostic commands in this JVM.
    Job {
        name: "diagnostic_commands_absence",
        run: |env, asked| {
            asked.nothing()?;
            // SAFETY: the export's own JNIEnv, on its thread.
            let absence = unsafe { diagnostic_commands::absence(env.get_raw()) };
            answer(&absence.map(|why| why.to_string()))
        },
    },
    Job {
        name: "diagnostic_command",
        run: |env, asked| {
            let Command { command } = asked.read()?;
            let command = env.new_string(command)?;
            // SAFETY: the export's own JNIEnv, on its thread; `command` is a live local reference.
            let printed = unsafe { diagnostic_commands::execute(env.get_raw(), command.as_raw())? };
            // A command the JVM refused left its exception pending, which the guard keeps.
            if printed.is_null() || env.exception_check()? {
                return Err(BridgeError::InvalidArgument(
                    "the JVM refused the command".into(),
                ));
            }
            // SAFETY: a non-null local reference to a java.lang.String the call returned.
            let printed = unsafe { JString::from_raw(printed) };
            let printed: String = env.get_string(&printed)?.into();
            answer(&printed)
        },
    },
    // Attach sessions (super::attach).
    Job {
        name: "attach_open",
        run: |_, asked| {
            let AttachOpen {
                pid,
                jar,
                timeout_ms,
                rerun,
            } = asked.read()?;
            answer(&super::attach::open(
                positive_pid(pid)?,
                &jar,
                timeout_ms,
                &rerun,
            )?)
        },
    },
    Job {
        name: "attach_load_agent",
        run: |_, asked| {
            let AttachLoadAgent {
                session,
                options,
                timeout_ms,
            } = asked.read()?;
            answer(&super::attach::load_agent(session, &options, timeout_ms)?)
        },
    },
    Job {
        name: "attach_close",
        run: |_, asked| {
            let Session { session } = asked.read()?;
            super::attach::close(session);
            answer(&())
        },
    },
];

export! {
    /// Runs the job named `job` with `request` (a JSON object); its answer as JSON.
    fn call(env, job: JString<'l>, request: JString<'l>) -> jstring {
        let name = from_java(env, &job, "job")?;
        let request = from_java(env, &request, "request")?;
        let job = JOBS.iter().find(|j| j.name == name).ok_or_else(|| {
            let names: Vec<&str> = JOBS.iter().map(|j| j.name).collect();
            BridgeError::InvalidArgument(format!(
                "no job '{}'; the jobs are: {}",
                crate::terminal_text::escape(&name),
                names.join(", ")
            ))
        })?;
        let answer = (job.run)(env, Asked { job: job.name, text: &request })?;
        Ok(env.new_string(answer)?.into_raw())
    }
}

#[cfg(test)]
mod tests {
    use super::JOBS;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_snake_case() {
        let mut seen = HashSet::new();
        for job in JOBS {
            assert!(seen.insert(job.name), "'{}' is named twice", job.name);
            assert!(
                job.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "'{}' is not snake_case",
                job.name
            );
        }
    }
}
