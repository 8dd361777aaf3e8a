//! One attach: the target checked, its listener started and the agent jar placed once; then any
//! number of requests, each on a new connection (HotSpot answers one request per connection).

use super::agent_jar::AgentJar;
use super::connect::{self, SocketPlace};
use super::reply::{self, ReadFailure};
use super::request;
use super::target::Target;
use super::target_tmp::TargetTmp;
use super::AttachError;
use std::path::Path;
use std::time::{Duration, Instant};

/// The most a `load` reply may hold (a return code, or a message).
const MAX_LOAD_REPLY: usize = 64 << 10;

/// The most a `properties` reply may hold: the target's system properties, an attach result
/// among them (8 M characters, sealed and in Base64).
pub const MAX_PROPERTIES_REPLY: usize = 96 << 20;
/// The most a `jcmd` reply may hold (an NMT summary is a few KiB).
const MAX_DIAGNOSTIC_REPLY: usize = 4 << 20;

pub struct Session {
    target: Target,
    place: SocketPlace,
    jar: AgentJar,
}

impl Session {
    /// Checks `pid`, starts its attach listener within `timeout` and places `jar` where it can
    /// read it. `rerun` is this command line, which an error about users repeats.
    pub fn open(
        pid: u32,
        jar: &Path,
        timeout: Duration,
        rerun: &str,
    ) -> Result<Session, AttachError> {
        let target = Target::inspect(pid, rerun)?;
        // Resolved once: the trigger, the socket and the jar's copy all go through it.
        let tmp = TargetTmp::open(pid, target.status.euid)?;
        let place = SocketPlace::of(&target, &tmp)?;
        connect::ensure_listening(&target, &tmp, &place, timeout)?;
        let jar = AgentJar::for_target(&target, &tmp, jar)?;
        Ok(Session { target, place, jar })
    }

    /// The jar's path as the target reads it.
    pub fn jar_for_target(&self) -> &str {
        &self.jar.path_for_target
    }

    /// SHA-256 of the jar's bytes as handed to the target (lowercase hex): the agent checks it.
    pub fn jar_sha256(&self) -> &str {
        &self.jar.sha256
    }

    pub fn jar_is_copy(&self) -> bool {
        self.jar.is_copy()
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Loads the agent with `options` (the agent runs them before the reply comes): its return
    /// code, 0 when `agentmain` returned.
    pub fn load_agent(&mut self, options: &str, timeout: Duration) -> Result<i64, AttachError> {
        let request = request::load_agent(&self.jar.path_for_target, options)?;
        let body = self.execute("load", &request, MAX_LOAD_REPLY, timeout)?;
        let code = reply::load_return_code(&body);
        if code.is_ok() {
            // The JVM put the jar on its class path: it needs it from now on.
            self.jar.keep();
        }
        code.map_err(|e| match e {
            reply::ReplyError::NoReturnCode(message) => AttachError::Refused {
                pid: self.target.pid,
                command: "load".into(),
                status: 0,
                message,
            },
            other => AttachError::BadReply {
                pid: self.target.pid,
                command: "load".into(),
                source: other,
            },
        })
    }

    /// The target's system properties, as `java.util.Properties.store` wrote them.
    pub fn properties(&self, timeout: Duration) -> Result<Vec<u8>, AttachError> {
        let request = request::encode("properties", &[])?;
        self.execute("properties", &request, MAX_PROPERTIES_REPLY, timeout)
    }

    /// The text of one `jcmd` command line run by the target (`GC.heap_info`), as `jcmd` prints
    /// it: the JVM's own diagnostics, which need no agent (and so no `java.instrument`).
    pub fn diagnostic_command(
        &self,
        line: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>, AttachError> {
        let request = request::encode("jcmd", &[line])?;
        self.execute("jcmd", &request, MAX_DIAGNOSTIC_REPLY, timeout)
    }

    fn execute(
        &self,
        command: &str,
        request: &[u8],
        limit: usize,
        timeout: Duration,
    ) -> Result<Vec<u8>, AttachError> {
        let pid = self.target.pid;
        let deadline = Instant::now() + timeout;
        let mut stream = connect::connect(&self.target, &self.place, deadline)?;
        match connect::write_by(&mut stream, request, deadline) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                return Err(AttachError::NoAnswer {
                    pid,
                    command: command.into(),
                    waited: timeout,
                })
            }
            Err(e) => return Err(AttachError::io(pid, format!("cannot send '{command}'"), e)),
        }
        let bytes = match reply::read_bounded(&mut stream, limit, deadline) {
            Ok(bytes) => bytes,
            Err(ReadFailure::TimedOut) => {
                return Err(AttachError::NoAnswer {
                    pid,
                    command: command.into(),
                    waited: timeout,
                })
            }
            Err(ReadFailure::TooLarge { limit }) => {
                return Err(AttachError::BadReply {
                    pid,
                    command: command.into(),
                    source: reply::ReplyError::TooLarge { limit },
                })
            }
            Err(ReadFailure::Io(_)) if self.target.exits_soon() => {
                return Err(AttachError::Exited { pid });
            }
            Err(ReadFailure::Io(e)) => {
                return Err(AttachError::io(
                    pid,
                    format!("lost the connection during '{command}'"),
                    e,
                ))
            }
        };
        if bytes.is_empty() && self.target.exits_soon() {
            return Err(AttachError::Exited { pid });
        }
        let parsed = reply::parse_reply(&bytes).map_err(|source| AttachError::BadReply {
            pid,
            command: command.into(),
            source,
        })?;
        if parsed.status != 0 {
            return Err(AttachError::Refused {
                pid,
                command: command.into(),
                status: parsed.status,
                message: reply::shown(parsed.body).trim().to_string(),
            });
        }
        Ok(parsed.body.to_vec())
    }
}
