//! HotSpot's diagnostic commands (`jcmd`'s) run in-process through the JVM's management
//! interface (`JVM_GetManagement`, the table `libmanagement` calls), so they need neither the
//! `java.management`/`jdk.management` modules, nor the DiagnosticCommand MBean's list of
//! operations (empty in a runtime without `jdk.jfr`: the MBean stops building its list at the JFR
//! commands whose Java half is missing), nor the attach listener (off with
//! `-XX:+DisableAttachMechanism`, and a socket in `/tmp`).
//!
//! The table's layout is HotSpot's `jmm.h`, which changes with its version. A JVM hands out the
//! table only for a version it accepts (JDK 25 only for the newest), so each known version is
//! asked for, newest first, until the table's own `GetVersion` reports the version asked for. The
//! slot of `ExecuteDiagnosticCommand` is the one `libmanagement_ext` itself jumps through for that
//! version (read from its machine code): 38 for `JMM_VERSION_3` (JDK 11.0.9 to 20), 39 for
//! `JMM_VERSION_4` (JDK 21 to 25). Any other version is refused with its number.

use jni::sys::{jint, jstring, JNIEnv};
use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

/// Why the commands cannot run here; each message says what is missing.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DiagnosticCommandError {
    #[error("cannot tell which library implements this JVM (dladdr of a JNI function failed)")]
    NoJvmLibrary,
    #[error("{library} does not export JVM_GetManagement: not a HotSpot JVM")]
    NotHotSpot { library: String },
    #[error("this JVM offers no management interface of a version nativemem knows (JMM 3 and 4: JDK 11.0.9 to 25; a JVM built without it, such as HotSpot's minimal VM, has none)")]
    NoManagement,
    #[error("this JVM's management interface reports version {version:#x}, which nativemem does not know (it knows JMM 3 and 4: JDK 11.0.9 to 25)")]
    UnknownVersion { version: u32 },
}

/// `(JMM_VERSION_n, slot of ExecuteDiagnosticCommand)`, newest first.
const VERSIONS: [(jint, usize); 2] = [(0x2004_0000, 39), (0x2003_0000, 38)];
/// The slot of `GetVersion`, the same in every version.
const GET_VERSION_SLOT: usize = 2;

type GetManagement = unsafe extern "system" fn(jint) -> *mut c_void;
type GetVersion = unsafe extern "system" fn(*mut JNIEnv) -> jint;
type Execute = unsafe extern "system" fn(*mut JNIEnv, jstring) -> jstring;

/// `ExecuteDiagnosticCommand` (its address, in libjvm) or why there is none; found once.
static EXECUTE: OnceLock<Result<usize, DiagnosticCommandError>> = OnceLock::new();

/// `ExecuteDiagnosticCommand` of the JVM that `env` belongs to.
///
/// # Safety
/// `env` must be the calling thread's JNIEnv.
unsafe fn execute_function(env: *mut JNIEnv) -> Result<Execute, DiagnosticCommandError> {
    let found = EXECUTE.get_or_init(|| find(env).map(|function| function as usize));
    found
        .clone()
        .map(|address| std::mem::transmute::<usize, Execute>(address))
}

/// # Safety
/// `env` must be the calling thread's JNIEnv.
unsafe fn find(env: *mut JNIEnv) -> Result<*const c_void, DiagnosticCommandError> {
    // The JNIEnv's function table points into libjvm: that object, already loaded, exports it.
    let in_libjvm = (**env)
        .GetVersion
        .map_or(std::ptr::null(), |f| f as *const c_void);
    let mut info: libc::Dl_info = std::mem::zeroed();
    if in_libjvm.is_null() || libc::dladdr(in_libjvm, &mut info) == 0 || info.dli_fname.is_null() {
        return Err(DiagnosticCommandError::NoJvmLibrary);
    }
    let library = CStr::from_ptr(info.dli_fname).to_owned();
    let handle = libc::dlopen(library.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
    if handle.is_null() {
        return Err(DiagnosticCommandError::NoJvmLibrary);
    }
    let symbol = libc::dlsym(handle, c"JVM_GetManagement".as_ptr());
    libc::dlclose(handle);
    if symbol.is_null() {
        return Err(DiagnosticCommandError::NotHotSpot {
            library: library.to_string_lossy().into_owned(),
        });
    }
    let get_management = std::mem::transmute::<*mut c_void, GetManagement>(symbol);
    let mut reported = None;
    for (asked, slot) in VERSIONS {
        let table = get_management(asked) as *const *const c_void;
        if table.is_null() {
            continue;
        }
        let get_version = *table.add(GET_VERSION_SLOT);
        if get_version.is_null() {
            continue;
        }
        let version = std::mem::transmute::<*const c_void, GetVersion>(get_version)(env);
        let execute = *table.add(slot);
        if version == asked && !execute.is_null() {
            return Ok(execute);
        }
        reported = Some(version as u32);
    }
    Err(match reported {
        Some(version) => DiagnosticCommandError::UnknownVersion { version },
        None => DiagnosticCommandError::NoManagement,
    })
}

/// Why the commands cannot run in this JVM, or `None` when they can.
///
/// # Safety
/// `env` must be the calling thread's JNIEnv.
pub unsafe fn absence(env: *mut JNIEnv) -> Option<DiagnosticCommandError> {
    execute_function(env).err()
}

/// Runs `command` (a `jcmd` line: `VM.native_memory summary scale=b`) and returns its text as a
/// Java string; null with a Java exception pending when the JVM refused it (an unknown command,
/// a bad argument).
///
/// # Safety
/// `env` must be the calling thread's JNIEnv and `command` a live local or global reference to a
/// `java.lang.String`.
pub unsafe fn execute(
    env: *mut JNIEnv,
    command: jstring,
) -> Result<jstring, DiagnosticCommandError> {
    Ok(execute_function(env)?(env, command))
}
