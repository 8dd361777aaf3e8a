//! Creation sites by stack key: the cheap half of recording where a handle was created.
//!
//! A `StackWalker` pass over 24 frames with method names costs 5–8 µs; the JVM can report the
//! same frames as (method id, bytecode index) pairs without building frame objects
//! ([`crate::jvm::stack_walk`]). Those pairs identify a stack exactly, so they key a table of site
//! ids: a known stack costs one walk and a lookup, and only a new one is walked in Java for its
//! text. A key names its frames exactly whichever walker read them, so keys of both walkers share
//! one table.

use crate::jvm::stack_walk::{Frame, Frames, StackWalkers};
use jni::JNIEnv;
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Frames of a key. More than the 24 frames the site text shows: the JVM also reports frames
/// that `StackWalker` hides (lambda forms), and a key must cover every frame the text shows.
const KEY_FRAMES: usize = 32;
/// Frames of nativemem itself above the creation (hooks, tracker, this native method).
const MAX_OWN_FRAMES: usize = 8;
/// Frames walked: a key's and nativemem's own above them, no deeper.
const WALK_FRAMES: usize = KEY_FRAMES + MAX_OWN_FRAMES;
/// Stacks remembered (a 128-bit fingerprint and a site id each, at most about 1 MiB with the
/// table's free slots); past this, new stacks are walked in Java every time.
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

/// Keys are JVM method ids and bytecode indexes, never chosen by an adversary: a fast hash.
#[derive(Default)]
struct Tables {
    /// Whether a method (by JVMTI method id, stable while its class lives) is nativemem's own.
    own_methods: FxHashMap<usize, bool>,
    /// Site ids by the fingerprint of their key's frames ([`fingerprint`]), not the frames
    /// themselves: a key of 32 frames would take half a KiB.
    sites: FxHashMap<u128, u32>,
    /// The registry's site generation the `sites` ids belong to.
    generation: u64,
}

/// A stack key: the frames below nativemem's own.
type Key = Frames<KEY_FRAMES>;
/// The frames one walk read, nativemem's own included.
type Walked = Frames<WALK_FRAMES>;

thread_local! {
    /// The key of this thread's last new stack, walked by [`site_of_current_stack`] and taken by
    /// [`bind`] once Java has interned its text: the stack is walked once.
    static PENDING: Cell<Option<Key>> = const { Cell::new(None) };
}

/// The key of `walked` below nativemem's frames, or None if a frame's class cannot be told.
fn key_below_own(env: &mut JNIEnv, tables: &mut Tables, walked: &Walked) -> Option<Key> {
    let walker = StackWalkers::get(env)?;
    let mut own = 0;
    for &(method, _) in walked.frames().iter().take(MAX_OWN_FRAMES) {
        let is_own = match tables.own_methods.get(&method) {
            Some(known) => *known,
            None => {
                let known = is_own_class(&walker.declaring_class(env, method)?);
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
    Some(Key::of(&walked.frames()[own..]))
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
    let generation = super::registry().site_generation();
    if tables.generation != generation {
        tables.sites.clear();
        tables.generation = generation;
    }
    tables
}

/// The site of the current stack; a new one is kept as this thread's pending key for [`bind`].
pub(crate) fn site_of_current_stack(env: &mut JNIEnv) -> StackSite {
    // Walked outside the lock: threads walk in parallel.
    let Some(walked) = StackWalkers::get(env).and_then(|w| w.walk(env)) else {
        return StackSite::Unavailable;
    };
    let mut tables = locked_tables();
    match key_below_own(env, &mut tables, &walked) {
        Some(key) => lookup(&tables, key),
        None => StackSite::Unavailable,
    }
}

/// The key of the calling thread's stack below nativemem's frames.
fn current_key(env: &mut JNIEnv) -> Option<Key> {
    let walked = StackWalkers::get(env)?.walk(env)?;
    key_below_own(env, &mut locked_tables(), &walked)
}

fn lookup(tables: &Tables, key: Key) -> StackSite {
    match tables.sites.get(&fingerprint(key.frames())) {
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
    if let Some(key) = pending_or(|| current_key(env)) {
        remember(&mut locked_tables(), key, site);
    }
}

/// This thread's pending key, or else what `walk` finds.
fn pending_or(walk: impl FnOnce() -> Option<Key>) -> Option<Key> {
    PENDING.take().or_else(walk)
}

/// 128 bits of two independent hashes of a key's frames: two of the at most [`MAX_KEYS`] keys
/// share one with a chance far below 1 in 10^29.
fn fingerprint(frames: &[Frame]) -> u128 {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let mut sip = DefaultHasher::new(); // SipHash with fixed keys
    let mut fx = rustc_hash::FxHasher::default();
    frames.hash(&mut sip);
    frames.hash(&mut fx);
    (u128::from(sip.finish()) << 64) | u128::from(fx.finish())
}

fn remember(tables: &mut Tables, key: Key, site: u32) {
    if tables.sites.len() < MAX_KEYS {
        tables.sites.insert(fingerprint(key.frames()), site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(methods: &[usize]) -> Key {
        let frames: Vec<Frame> = methods.iter().map(|&m| (m, 7)).collect();
        Key::of(&frames)
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
    fn keys_are_remembered_by_fingerprint_within_a_bound() {
        let mut tables = Tables::default();
        for i in 0..(MAX_KEYS + 10) {
            remember(&mut tables, key(&[i, i + 1, 7]), i as u32);
        }
        assert_eq!(tables.sites.len(), MAX_KEYS);
        PENDING.set(None);
        assert!(matches!(
            lookup(&tables, key(&[5, 6, 7])),
            StackSite::Known(5)
        ));
        assert!(matches!(lookup(&tables, key(&[6, 5, 7])), StackSite::New));
        let slot = std::mem::size_of::<(u128, u32)>() + 1;
        assert!(
            tables.sites.capacity() * slot <= 5 << 18,
            "{} slots",
            tables.sites.capacity()
        );
    }
}
