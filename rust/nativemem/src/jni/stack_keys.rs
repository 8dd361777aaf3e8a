//! Creation sites by JVMTI stack key: the cheap half of recording where a handle was created.
//!
//! A `StackWalker` pass over 24 frames with method names costs 5–8 µs; JVMTI `GetStackTrace`
//! returns the same frames as (method id, bytecode index) pairs without building frame objects.
//! Those pairs identify a stack exactly, so they key a table of site ids: a known stack costs one
//! `GetStackTrace` and a lookup, and only a new one is walked in Java for its text.

use crate::jvmti::{FrameInfo, Jvmti, NO_FRAME};
use jni::JNIEnv;
use rustc_hash::FxHashMap;
use std::cell::Cell;
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
#[derive(Clone, Copy)]
struct Key {
    frames: [Frame; KEY_FRAMES],
    len: usize,
}

impl Key {
    fn frames(&self) -> &[Frame] {
        &self.frames[..self.len]
    }
}

thread_local! {
    /// The key of this thread's last new stack, walked by [`site_of_current_stack`] and taken by
    /// [`bind`] once Java has interned its text: the stack is walked through JVMTI once.
    static PENDING: Cell<Option<Key>> = const { Cell::new(None) };
}

/// This process's JVMTI environment for stack keys, or None if the JVM has none.
fn jvmti(env: &JNIEnv) -> Option<Jvmti> {
    static JVMTI: OnceLock<Option<Jvmti>> = OnceLock::new();
    *JVMTI.get_or_init(|| {
        let vm = env.get_java_vm().ok()?.get_java_vm_pointer();
        // SAFETY: `vm` is this process's JavaVM.
        unsafe { Jvmti::new(vm.cast()) }.ok()
    })
}

/// The key of the calling Java thread's stack below nativemem's frames, or None if the JVM
/// offers no JVMTI or the stack cannot be read.
fn current_key(env: &mut JNIEnv, tables: &mut Tables) -> Option<Key> {
    let jvmti = jvmti(env)?;
    let mut buffer = [NO_FRAME; KEY_FRAMES + MAX_OWN_FRAMES];
    // SAFETY: a JNI call runs on a Java thread.
    let frames = unsafe { jvmti.current_stack(&mut buffer) }?;
    let jni = env.get_raw().cast();
    let mut own = 0;
    for frame in frames.iter().take(MAX_OWN_FRAMES) {
        let method = frame.method as usize;
        let is_own = match tables.own_methods.get(&method) {
            Some(known) => *known,
            None => {
                // SAFETY: `jni` is this thread's JNIEnv; the method id came from the JVM.
                let (class, _) = unsafe { jvmti.declaring_class(jni, frame.method, false) }.ok()?;
                let known = is_own_class(&class?);
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
    Some(key_of(&frames[own..]))
}

fn key_of(frames: &[FrameInfo]) -> Key {
    let mut key = Key {
        frames: [(0, 0); KEY_FRAMES],
        len: 0,
    };
    for frame in frames.iter().take(KEY_FRAMES) {
        key.frames[key.len] = (frame.method as usize, frame.location);
        key.len += 1;
    }
    key
}

fn is_own_class(signature: &str) -> bool {
    OWN_CLASS_PREFIXES.iter().any(|p| signature.starts_with(p))
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

/// The site of the current stack; a new one is kept as this thread's pending key for [`bind`].
pub(crate) fn site_of_current_stack(env: &mut JNIEnv) -> StackSite {
    let mut tables = locked_tables();
    let Some(key) = current_key(env, &mut tables) else {
        return StackSite::Unavailable;
    };
    lookup(&tables, key)
}

fn lookup(tables: &Tables, key: Key) -> StackSite {
    match tables.sites.get(key.frames()) {
        Some(site) => {
            PENDING.set(None);
            StackSite::Known(*site)
        }
        None => {
            PENDING.set(Some(key));
            StackSite::New
        }
    }
}

/// Remembers `site` as the site of the current stack (its text was just interned): the key
/// [`site_of_current_stack`] found new on this thread, or, without one, the stack walked now.
pub(crate) fn bind(env: &mut JNIEnv, site: u32) {
    let mut tables = locked_tables();
    if let Some(key) = pending_or(|| current_key(env, &mut tables)) {
        remember(&mut tables, key, site);
    }
}

/// This thread's pending key, or else what `walk` finds.
fn pending_or(walk: impl FnOnce() -> Option<Key>) -> Option<Key> {
    PENDING.take().or_else(walk)
}

fn remember(tables: &mut Tables, key: Key, site: u32) {
    if tables.sites.len() < MAX_KEYS {
        tables.sites.insert(key.frames().into(), site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(methods: &[usize]) -> Key {
        let frames: Vec<FrameInfo> = methods
            .iter()
            .map(|&m| FrameInfo {
                method: m as _,
                location: 7,
            })
            .collect();
        key_of(&frames)
    }

    #[test]
    fn a_new_stack_is_bound_by_the_key_found_new() {
        let mut tables = Tables::default();
        PENDING.set(None);
        assert!(matches!(lookup(&tables, key(&[1, 2, 3])), StackSite::New));
        // What bind takes: the pending key, with no second walk.
        let pending = pending_or(|| panic!("the stack was walked again"))
            .expect("a new stack leaves its key pending");
        assert_eq!(pending.frames(), key(&[1, 2, 3]).frames());
        let mut walks = 0;
        assert!(pending_or(|| {
            walks += 1;
            None
        })
        .is_none());
        assert_eq!(walks, 1, "without a pending key, bind walks the stack");
        remember(&mut tables, pending, 42);
        assert!(matches!(
            lookup(&tables, key(&[1, 2, 3])),
            StackSite::Known(42)
        ));
        PENDING.set(Some(key(&[9])));
        assert!(matches!(
            lookup(&tables, key(&[1, 2, 3])),
            StackSite::Known(42)
        ));
        assert!(
            PENDING.take().is_none(),
            "a known stack clears an older pending key"
        );
    }

    #[test]
    fn keys_keep_at_most_their_frames() {
        let long: Vec<usize> = (1..=KEY_FRAMES + 5).collect();
        assert_eq!(key(&long).frames().len(), KEY_FRAMES);
        assert_eq!(key(&long).frames()[0], (1, 7));
    }
}
