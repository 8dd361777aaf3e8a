//! JNI exports for `dev.nativemem.attach.AttachClient` through `NativeBridge`: an attach session
//! opened once, then requests on it, then closed (which removes a jar copy the target never
//! loaded).
//! Sessions live in a table keyed by number, so a stale or forged number from Java is an error,
//! never a dangling pointer.

use super::exports::from_java;
use super::BridgeError;
use crate::attach::Session;
use jni::objects::JString;
use jni::sys::{jbyteArray, jlong};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static SESSIONS: Mutex<Option<HashMap<i64, Arc<Mutex<Session>>>>> = Mutex::new(None);
static NEXT: AtomicI64 = AtomicI64::new(1);

fn session(id: jlong) -> Result<Arc<Mutex<Session>>, BridgeError> {
    SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .and_then(|table| table.get(&id).cloned())
        .ok_or_else(|| BridgeError::InvalidArgument(format!("no attach session {id}")))
}

fn millis(value: jlong) -> Result<Duration, BridgeError> {
    u64::try_from(value)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
        .ok_or_else(|| {
            BridgeError::InvalidArgument(format!("a timeout must be positive, got {value} ms"))
        })
}

#[derive(serde::Serialize)]
struct Opened<'a> {
    session: i64,
    jar: &'a str,
    jar_is_copy: bool,
    jar_sha256: &'a str,
    nspid: u32,
    other_mount_namespace: bool,
}

/// Opens an attach to `pid` and keeps the session in the table: `{session, jar, jar_is_copy,
/// jar_sha256, nspid, other_mount_namespace}` (the `attach_open` job).
pub(super) fn open(
    pid: u32,
    jar: &std::path::Path,
    timeout_ms: i64,
    rerun: &str,
) -> Result<serde_json::Value, BridgeError> {
    let session = Session::open(pid, jar, millis(timeout_ms)?, rerun)?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let opened = serde_json::to_value(Opened {
        session: id,
        jar: session.jar_for_target(),
        jar_is_copy: session.jar_is_copy(),
        jar_sha256: session.jar_sha256(),
        nspid: session.target().status.nspid,
        other_mount_namespace: session.target().other_mount_namespace,
    })?;
    SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(id, Arc::new(Mutex::new(session)));
    Ok(opened)
}

/// `load instrument false <jar>=<options>`: the agent's return code (the `attach_load_agent` job).
pub(super) fn load_agent(id: i64, options: &str, timeout_ms: i64) -> Result<i64, BridgeError> {
    let session = session(id)?;
    let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
    Ok(session.load_agent(options, millis(timeout_ms)?)?)
}

/// Ends a session: a jar copied for the target that it never loaded is removed (the
/// `attach_close` job).
pub(super) fn close(id: i64) {
    let removed = SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|table| table.remove(&id));
    drop(removed);
}

export! {
    /// The `properties` reply's bytes (`Properties.store` text).
    fn attachProperties(env, id: jlong, timeout_ms: jlong) -> jbyteArray {
        let session = session(id)?;
        let bytes = session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .properties(millis(timeout_ms)?)?;
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    }
}

export! {
    /// The reply's text of one `jcmd` command line run by the target, without an agent.
    fn attachDiagnosticCommand(env, id: jlong, line: JString<'l>, timeout_ms: jlong) -> jbyteArray {
        let line = from_java(env, &line, "line")?;
        let session = session(id)?;
        let bytes = session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .diagnostic_command(&line, millis(timeout_ms)?)?;
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    }
}
