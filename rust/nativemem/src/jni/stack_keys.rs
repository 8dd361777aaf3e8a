//! Creation sites by JVMTI stack key: the cheap half of recording where a handle was created.
//!
//! A `StackWalker` pass over 24 frames with method names costs 5–8 µs; JVMTI `GetStackTrace`
//! returns the same frames as (method id, bytecode index) pairs without building frame objects.
//! Those pairs identify a stack exactly, so they key a table of site ids: a known stack costs one
//! `GetStackTrace` and a lookup, and only a new one is walked in Java for its text.

use jni::JNIEnv;
use jvmti_bindings::sys::jni as jvmti_jni;
use jvmti_bindings::sys::jvmti::{jvmtiEnv, jvmtiError, jvmtiFrameInfo, JVMTI_VERSION_1_2};
use rustc_hash::FxHashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Frames of a key. More than the 24 frames the site text shows: the JVM also reports frames
/// that `StackWalker` hides (lambda forms), and a key must cover every frame the text shows.
const KEY_FRAMES: usize = 32;
/// Frames of nativemem itself above the creation (hooks, tracker, this native method).
const MAX_OWN_FRAMES: usize = 8;
/// Stacks remembered (about 0.5 KiB each); past this, new stacks are walked in Java every time.
const MAX_KEYS: usize = 16_384;
/// Methods remembered as nativemem's own or not (each key adds at most one that is not).
const MAX_METHODS: usize = 4 * MAX_KEYS;

/// Classes whose frames are not part of a creation site, as JVMTI signatures. The same as
/// `CreationSites.isOurs` on the Java side, plus the class declaring this native method.
const OWN_CLASS_PREFIXES: [&str; 3] = [
    "Ldev/nativemem/handles/",
    "Ldev/nativemem/agent/",
    "Ldev/nativemem/internal/NativeBridge;",
];

type Frame = (usize, i64);

/// Keys are JVM method ids and bytecode indexes, never chosen by an adversary: a fast hash.
#[derive(Default)]
struct Tables {
    /// Whether a method (by JVMTI method id, stable while its class lives) is nativemem's own.
    own_methods: FxHashMap<usize, bool>,
    sites: FxHashMap<Box<[Frame]>, u32>,
    /// The registry's site generation the `sites` ids belong to.
    generation: u64,
}

/// A stack key on the stack: no allocation unless it is remembered.
struct Key {
    frames: [Frame; KEY_FRAMES],
    len: usize,
}

impl Key {
    fn frames(&self) -> &[Frame] {
        &self.frames[..self.len]
    }
}

/// The JVMTI environment (as an address: raw pointers are not `Sync`), or 0 if the JVM has none.
fn jvmti(env: &JNIEnv) -> usize {
    static JVMTI: OnceLock<usize> = OnceLock::new();
    *JVMTI.get_or_init(|| {
        let Ok(vm) = env.get_java_vm() else {
            return 0;
        };
        let vm = vm.get_java_vm_pointer() as *mut jvmti_jni::JavaVM;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `vm` is this process's JavaVM; GetEnv only writes `out`.
        let rc = unsafe { ((**vm).GetEnv)(vm, &mut out, JVMTI_VERSION_1_2) };
        if rc == 0 {
            out as usize
        } else {
            0
        }
    })
}

/// The key of the calling Java thread's stack below nativemem's frames, or None if the JVM
/// offers no JVMTI or the stack cannot be read.
fn current_key(env: &mut JNIEnv, tables: &mut Tables) -> Option<Key> {
    let jvmti = jvmti(env) as *mut jvmtiEnv;
    if jvmti.is_null() {
        return None;
    }
    let mut frames = [jvmtiFrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }; KEY_FRAMES + MAX_OWN_FRAMES];
    let mut count = 0;
    // SAFETY: a null thread is the current one; the buffer holds `frames.len()` entries.
    let rc = unsafe {
        let get_stack_trace = (*(*jvmti).functions).GetStackTrace?;
        get_stack_trace(
            jvmti,
            std::ptr::null_mut(),
            0,
            frames.len() as i32,
            frames.as_mut_ptr(),
            &mut count,
        )
    };
    if rc != jvmtiError::NONE {
        return None;
    }
    let frames = &frames[..count.max(0) as usize];
    let mut own = 0;
    for frame in frames.iter().take(MAX_OWN_FRAMES) {
        let method = frame.method as usize;
        let is_own = match tables.own_methods.get(&method) {
            Some(known) => *known,
            None => {
                let known = is_own_method(jvmti, env, frame.method)?;
                if tables.own_methods.len() < MAX_METHODS {
                    tables.own_methods.insert(method, known);
                }
                known
            }
        };
        if !is_own {
            break;
        }
        own += 1;
    }
    let mut key = Key {
        frames: [(0, 0); KEY_FRAMES],
        len: 0,
    };
    for frame in frames[own..].iter().take(KEY_FRAMES) {
        key.frames[key.len] = (frame.method as usize, frame.location);
        key.len += 1;
    }
    Some(key)
}

fn is_own_method(
    jvmti: *mut jvmtiEnv,
    env: &mut JNIEnv,
    method: jvmti_jni::jmethodID,
) -> Option<bool> {
    let mut class: jvmti_jni::jclass = std::ptr::null_mut();
    let mut signature: *mut c_char = std::ptr::null_mut();
    // SAFETY: JVMTI fills `class` with a local reference we delete, and `signature` with memory
    // it allocated, which we give back with Deallocate.
    unsafe {
        let functions = &*(*jvmti).functions;
        let declaring_class = functions.GetMethodDeclaringClass?;
        if declaring_class(jvmti, method, &mut class) != jvmtiError::NONE {
            return None;
        }
        let class_signature = functions.GetClassSignature?;
        let rc = class_signature(jvmti, class, &mut signature, std::ptr::null_mut());
        let _ = env.delete_local_ref(jni::objects::JObject::from_raw(class as jni::sys::jobject));
        if rc != jvmtiError::NONE || signature.is_null() {
            return None;
        }
        let own = CStr::from_ptr(signature)
            .to_str()
            .map(|s| OWN_CLASS_PREFIXES.iter().any(|p| s.starts_with(p)))
            .unwrap_or(false);
        if let Some(deallocate) = functions.Deallocate {
            deallocate(jvmti, signature as *mut u8);
        }
        Some(own)
    }
}

/// What the current stack's site is.
pub(crate) enum StackSite {
    /// Seen before: this site id.
    Known(u32),
    /// Not seen: walk it in Java for its text, then [`bind`] it.
    New,
    /// No JVMTI here: keep walking in Java.
    Unavailable,
}

/// The tables, emptied of site ids the registry has since evicted (they may name other stacks).
fn locked_tables() -> MutexGuard<'static, Tables> {
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| Mutex::new(Tables::default()));
    // The tables stay consistent across a panic (each insert is one step): keep using them.
    let mut tables = tables.lock().unwrap_or_else(|p| p.into_inner());
    let generation = crate::handles::registry().site_generation();
    if tables.generation != generation {
        tables.sites.clear();
        tables.generation = generation;
    }
    tables
}

pub(crate) fn site_of_current_stack(env: &mut JNIEnv) -> StackSite {
    let mut tables = locked_tables();
    let Some(key) = current_key(env, &mut tables) else {
        return StackSite::Unavailable;
    };
    match tables.sites.get(key.frames()) {
        Some(site) => StackSite::Known(*site),
        None => StackSite::New,
    }
}

/// Remembers `site` as the site of the current stack (its text was just interned).
pub(crate) fn bind(env: &mut JNIEnv, site: u32) {
    let mut tables = locked_tables();
    if let Some(key) = current_key(env, &mut tables) {
        if tables.sites.len() < MAX_KEYS {
            tables.sites.insert(key.frames().into(), site);
        }
    }
}
