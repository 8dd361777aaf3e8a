//! JNI exports for `dev.nativemem.attach.AttachClient` through `NativeBridge`: an attach session
//! opened once, then requests on it, then closed (which removes a jar copy the target never
//! loaded).
//! Sessions live in a table keyed by number, so a stale or forged number from Java is an error,
//! never a dangling pointer.

use super::exports::{from_java, json_to_java};
use super::BridgeError;
use crate::attach::Session;
use jni::objects::JString;
use jni::sys::{jbyteArray, jint, jlong, jstring};
use std::collections::HashMap;
use std::path::PathBuf;
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

export! {
    /// Opens an attach to `pid`: JSON `{session, jar, jar_is_copy, jar_sha256, nspid, other_mount_namespace}`.
    fn attachOpenJson(
        env,
        pid: jint,
        jar: JString<'l>,
        timeout_ms: jlong,
        rerun: JString<'l>,
    ) -> jstring {
        let pid = u32::try_from(pid)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| BridgeError::InvalidArgument(format!("bad pid {pid}")))?;
        let jar = PathBuf::from(from_java(env, &jar, "jar")?);
        let rerun = from_java(env, &rerun, "rerun")?;
        let session = Session::open(pid, &jar, millis(timeout_ms)?, &rerun)?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let opened = Opened {
            session: id,
            jar: session.jar_for_target(),
            jar_is_copy: session.jar_is_copy(),
            jar_sha256: session.jar_sha256(),
            nspid: session.target().status.nspid,
            other_mount_namespace: session.target().other_mount_namespace,
        };
        let json = json_to_java(env, &opened)?;
        SESSIONS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(id, Arc::new(Mutex::new(session)));
        Ok(json)
    }
}

export! {
    /// `load instrument false <jar>=<options>`: the agent's return code.
    fn attachLoadAgent(env, id: jlong, options: JString<'l>, timeout_ms: jlong) -> jlong {
        let options = from_java(env, &options, "options")?;
        let session = session(id)?;
        let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
        Ok(session.load_agent(&options, millis(timeout_ms)?)?)
    }
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

export! {
    /// Ends a session: a jar copied for the target that it never loaded is removed.
    fn attachClose(_, id: jlong) {
        let removed = SESSIONS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(|table| table.remove(&id));
        drop(removed);
        Ok(())
    }
}
