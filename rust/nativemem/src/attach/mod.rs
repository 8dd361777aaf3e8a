//! HotSpot's attach protocol, spoken without `jdk.attach`: `nativemem attach` works from a JRE
//! without that module, as a user with no home, and against a JVM in another mount or pid
//! namespace (a container seen from its node).
//!
//! - [`target`]: who and where the target is (its uids, its own pid, its namespace), held by
//!   [`process_handle`] (a pidfd) so that a signal reaches it or nobody;
//! - [`target_tmp`]: its `/tmp`, opened once through `/proc/<pid>/root` and checked; every later
//!   step goes through that descriptor, writes with the target's rights ([`as_target`]);
//! - [`connect`]: its attach socket, started with the `.attach_pid` trigger and `SIGQUIT` when
//!   absent, checked to be the target's before and after connecting, each step by a deadline;
//! - [`request`] / [`reply`]: the protocol's bytes, replies read with a size cap and a deadline;
//! - [`agent_jar`]: the agent jar by a path the target can read (a copy in a private directory of
//!   its uid in its `/tmp` when it cannot read ours) and its [`sha256`], which the agent checks;
//! - [`session`]: one attach: the checks once, then any number of requests.

pub mod agent_jar;
pub mod as_target;
pub mod connect;
pub mod process_handle;
pub mod reply;
pub mod request;
pub mod session;
pub mod sha256;
pub mod target;
pub mod target_tmp;

pub use reply::{parse_reply, Reply, ReplyError};
pub use session::Session;

use std::time::Duration;

/// Why an attach failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("no process {pid} (as this container sees pids): check the pid with 'ps' where the JVM runs, or run this command in its container (kubectl exec / docker exec)")]
    NoSuchProcess { pid: u32 },
    #[error("process {pid} is not a HotSpot JVM ({why}): name the pid of a java process ('ps -C java -o pid,cmd')")]
    NotHotSpot { pid: u32, why: String },
    #[error("process {pid} runs as uid {uid} gid {gid}{name} and HotSpot accepts an attach only from its own uid and gid, or from root. Run it as that user:\n  {rerun}\nor, in Kubernetes, inside the pod (which runs as that user):\n  kubectl exec <pod> -- java -jar <nativemem.jar in the pod> attach <its pid there> ...", name = user_label(.name))]
    OtherUser {
        pid: u32,
        uid: u32,
        gid: u32,
        name: Option<String>,
        rerun: String,
    },
    #[error("process {pid} does not handle SIGQUIT (started with -Xrs?): the signal that starts its attach listener would kill it, so nothing was sent; start it without -Xrs, or with -XX:+StartAttachListener")]
    NoQuitHandler { pid: u32 },
    #[error("process {pid}: refused to use its /tmp: {why}; another user could redirect what attach puts there. Give the JVM a /tmp of its own (or a sticky one, mode 1777), or run attach inside its container with the nativemem jar there (kubectl exec), where no copy is needed")]
    UnsafeTmp { pid: u32, why: String },
    #[error("process {pid}'s attach listener accepts no connection within {} ms (its backlog is full: a hung JVM, or a listener someone else planted): look at the JVM with 'jstack' or 'kill -3 {pid}', or wait longer with 'attach --timeout SECONDS {pid} ...'", .waited.as_millis())]
    NotAccepting { pid: u32, waited: Duration },
    #[error("process {pid} did not open its attach socket within {} ms: most likely it was started with -XX:+DisableAttachMechanism (look at its command line and JAVA_TOOL_OPTIONS; restart it without that flag); if it is only slow (a long GC, an overloaded machine), wait longer with 'attach --timeout SECONDS {pid} ...'", .waited.as_millis())]
    NoSocket { pid: u32, waited: Duration },
    #[error("refused to talk to {path}: it belongs to uid {owner}, not to process {pid}'s uid {uid}, so someone else planted it to intercept the attach; remove it once you have looked at who made it")]
    ForeignSocket {
        pid: u32,
        path: String,
        owner: u32,
        uid: u32,
    },
    #[error("refused to talk to {path}: {why}, not process {pid}'s attach socket; remove it once you have looked at who made it")]
    NotTheTargetsSocket { pid: u32, path: String, why: String },
    #[error("process {pid} exited during the command (or while the attach started)")]
    Exited { pid: u32 },
    #[error("process {pid} did not answer '{command}' within {} ms: raise the wait with 'attach --timeout SECONDS {pid} ...' (the command may still finish in the target)", .waited.as_millis())]
    NoAnswer {
        pid: u32,
        command: String,
        waited: Duration,
    },
    #[error("process {pid} answered '{command}' with a malformed reply: {source}")]
    BadReply {
        pid: u32,
        command: String,
        #[source]
        source: ReplyError,
    },
    #[error("process {pid} refused '{command}' (status {status}): {message}")]
    Refused {
        pid: u32,
        command: String,
        status: i64,
        message: String,
    },
    #[error("the request is too long for the attach protocol: {0}")]
    RequestTooLong(String),
    #[error("cannot attach to process {pid}: {what}: {source}")]
    Io {
        pid: u32,
        what: String,
        #[source]
        source: std::io::Error,
    },
}

fn user_label(name: &Option<String>) -> String {
    name.as_ref()
        .map(|n| format!(" (user {n})"))
        .unwrap_or_default()
}

impl AttachError {
    pub(crate) fn io(pid: u32, what: impl Into<String>, source: std::io::Error) -> Self {
        AttachError::Io {
            pid,
            what: what.into(),
            source,
        }
    }
}
