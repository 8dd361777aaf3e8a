//! Creation sites by JVMTI stack key: the cheap half of recording where a handle was created.
//!
//! A `StackWalker` pass over 24 frames with method names costs 5–8 µs; the JVM can report the
//! same frames as (method id, bytecode index) pairs without building frame objects. Those pairs
//! identify a stack exactly, so they key a table of site ids: a known stack costs one walk and a
//! lookup, and only a new one is walked in Java for its text.
//!
//! Two walkers give those pairs. JVMTI `GetStackTrace` is the supported one, but it enters the VM
//! and builds a frame object per frame (about 2.5 µs at a depth of 20). `AsyncGetCallTrace`, the
//! walker async-profiler uses, reads the same frames in place, several times faster; it needs the
//! JVMTI ClassLoad event enabled (a small cost on every class load after) and reports a method
//! that has no method id yet as a null one. A process that records many stacks (level=full, a
//! test's scope) therefore switches to it after [`SWITCH_AFTER`] walks; a walk it cannot answer
//! exactly (a null method id, a GC running) is made by `GetStackTrace` instead, which also makes
//! the missing method ids. A key names its frames exactly whichever walker made it, so keys of
//! both walkers share one table.

use crate::jvmti::{Jvmti, NO_FRAME};
use crate::sampling::java_frames::jvm::{
    async_get_call_trace, AsyncGetCallTrace, CallFrame, CallTrace,
};
use jni::sys::jint;
use jni::JNIEnv;
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
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
/// `GetStackTrace` walks after which `AsyncGetCallTrace` takes over: a process that records a
/// stack now and then (level=sampled) never pays for the ClassLoad event it needs.
const SWITCH_AFTER: u32 = 256;

/// Classes whose frames are not part of a creation site, as JVMTI signatures. The same as
/// `CreationSites.isOurs` on the Java side, plus the class declaring this native method.
const OWN_CLASS_PREFIXES: [&str; 3] = [
    "Ldev/nativemem/handles/",
    "Ldev/nativemem/agent/",
    "Ldev/nativemem/internal/NativeBridge;",
];

/// A frame: its method id and bytecode index (-1 for a native method, whichever walker read it).
type Frame = (usize, i64);

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

/// Up to `N` frames on the stack: no allocation unless a key is remembered.
#[derive(Clone, Copy)]
struct Frames<const N: usize> {
    frames: [Frame; N],
    len: usize,
}

impl<const N: usize> Frames<N> {
    const EMPTY: Self = Frames {
        frames: [(0, 0); N],
        len: 0,
    };

    fn frames(&self) -> &[Frame] {
        &self.frames[..self.len]
    }
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

/// The two walkers of this process.
struct Walkers {
    jvmti: Jvmti,
    /// `GetStackTrace` walks so far, up to [`SWITCH_AFTER`].
    jvmti_walks: AtomicU32,
    /// `AsyncGetCallTrace` once switched to; None inside if this JVM cannot give it.
    fast: OnceLock<Option<AsyncGetCallTrace>>,
}

/// This process's walkers, or None if the JVM offers no JVMTI.
fn walkers(env: &JNIEnv) -> Option<&'static Walkers> {
    static WALKERS: OnceLock<Option<Walkers>> = OnceLock::new();
    WALKERS
        .get_or_init(|| {
            let vm = env.get_java_vm().ok()?.get_java_vm_pointer();
            // SAFETY: `vm` is this process's JavaVM.
            let jvmti = unsafe { Jvmti::new(vm.cast()) }.ok()?;
            Some(Walkers {
                jvmti,
                jvmti_walks: AtomicU32::new(0),
                fast: OnceLock::new(),
            })
        })
        .as_ref()
}

impl Walkers {
    /// The calling Java thread's top frames, or None if they cannot be read.
    fn walk(&self, env: &mut JNIEnv) -> Option<Walked> {
        let mut walked = Walked::EMPTY;
        let jni = env.get_raw();
        if let Some(Some(fast)) = self.fast.get() {
            // SAFETY: a JNI call runs on a Java thread, `jni` is its JNIEnv.
            if unsafe { fast_walk(*fast, jni.cast(), &mut walked) } {
                return Some(walked);
            }
        }
        let mut buffer = [NO_FRAME; WALK_FRAMES];
        // SAFETY: a JNI call runs on a Java thread.
        let frames = unsafe { self.jvmti.current_stack(&mut buffer) }?;
        for (slot, frame) in walked.frames.iter_mut().zip(frames) {
            *slot = (frame.method as usize, frame.location.max(-1));
        }
        walked.len = frames.len();
        if self.jvmti_walks.load(Ordering::Relaxed) < SWITCH_AFTER
            && self.jvmti_walks.fetch_add(1, Ordering::Relaxed) + 1 == SWITCH_AFTER
        {
            self.fast.get_or_init(|| {
                let vm = env.get_java_vm().ok()?.get_java_vm_pointer();
                // SAFETY: `vm` is this process's JavaVM, the calling thread attached to it.
                let fast = unsafe { async_get_call_trace(vm.cast()) }.ok()?;
                // SAFETY: the environment is live; the callback does nothing.
                unsafe { self.jvmti.enable_class_load_events() }.ok()?;
                Some(fast)
            });
        }
        Some(walked)
    }
}

/// Reads the calling thread's frames with `AsyncGetCallTrace` into `walked`; false if it cannot
/// tell every frame exactly (a frame without a method id, a GC running, no frames), so that
/// `GetStackTrace` walks instead.
///
/// # Safety
/// The calling thread must be a Java thread in a JNI call and `jni` its JNIEnv.
unsafe fn fast_walk(
    fast: AsyncGetCallTrace,
    jni: *mut jvmti_bindings::sys::jni::JNIEnv,
    walked: &mut Walked,
) -> bool {
    let mut frames = [CallFrame {
        lineno: 0,
        method_id: std::ptr::null_mut(),
    }; WALK_FRAMES];
    let mut trace = CallTrace {
        env: jni,
        num_frames: 0,
        frames: frames.as_mut_ptr(),
    };
    // No signal context: a thread in a JNI call has its last Java frame recorded, which the
    // walk starts from.
    fast(&mut trace, WALK_FRAMES as jint, std::ptr::null_mut());
    let count = match usize::try_from(trace.num_frames) {
        Ok(count) if count > 0 => count.min(WALK_FRAMES),
        _ => return false,
    };
    for (slot, frame) in walked.frames.iter_mut().zip(&frames[..count]) {
        if frame.method_id.is_null() {
            return false;
        }
        // A native method's frame is -3 here, -1 from GetStackTrace.
        *slot = (frame.method_id as usize, i64::from(frame.lineno).max(-1));
    }
    walked.len = count;
    true
}

/// The key of `walked` below nativemem's frames, or None if a frame's class cannot be told.
fn key_below_own(env: &mut JNIEnv, tables: &mut Tables, walked: &Walked) -> Option<Key> {
    let jvmti = walkers(env)?.jvmti;
    let jni = env.get_raw().cast();
    let mut own = 0;
    for &(method, _) in walked.frames().iter().take(MAX_OWN_FRAMES) {
        let is_own = match tables.own_methods.get(&method) {
            Some(known) => *known,
            None => {
                // SAFETY: `jni` is this thread's JNIEnv; the method id came from the JVM.
                let (class, _) = unsafe { jvmti.declaring_class(jni, method as _, false) }.ok()?;
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
    Some(key_of(&walked.frames()[own..]))
}

fn key_of(frames: &[Frame]) -> Key {
    let mut key = Key::EMPTY;
    let len = frames.len().min(KEY_FRAMES);
    key.frames[..len].copy_from_slice(&frames[..len]);
    key.len = len;
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
    // Walked outside the lock: threads walk in parallel.
    let Some(walked) = walkers(env).and_then(|w| w.walk(env)) else {
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
    let walked = walkers(env)?.walk(env)?;
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

    #[test]
    fn keys_keep_at_most_their_frames() {
        let long: Vec<usize> = (1..=KEY_FRAMES + 5).collect();
        assert_eq!(key(&long).frames().len(), KEY_FRAMES);
        assert_eq!(key(&long).frames()[0], (1, 7));
    }

    /// A stand-in for `AsyncGetCallTrace`: frames 10, 11, 12 (a native method on top), or what
    /// `FAKE_ANSWER` says.
    unsafe extern "C" fn fake_walker(trace: *mut CallTrace, depth: jint, _: *mut std::ffi::c_void) {
        let answer = FAKE_ANSWER.get();
        if answer < 0 {
            (*trace).num_frames = answer;
            return;
        }
        let frames = std::slice::from_raw_parts_mut((*trace).frames, depth as usize);
        for (i, frame) in frames.iter_mut().take(3).enumerate() {
            frame.method_id = (10 + i) as _;
            frame.lineno = if i == 0 { -3 } else { 5 * i as jint };
        }
        if answer == 1 {
            frames[1].method_id = std::ptr::null_mut();
        }
        (*trace).num_frames = 3;
    }

    thread_local! {
        static FAKE_ANSWER: Cell<jint> = const { Cell::new(0) };
    }

    #[test]
    fn the_fast_walker_reads_frames_as_jvmti_does_or_gives_way() {
        let mut walked = Walked::EMPTY;
        FAKE_ANSWER.set(0);
        // SAFETY: the fake walker touches only the trace it is given.
        assert!(unsafe { fast_walk(fake_walker, std::ptr::null_mut(), &mut walked) });
        assert_eq!(
            walked.frames(),
            &[(10, -1), (11, 5), (12, 10)],
            "a native method's frame is -1, as GetStackTrace reports it"
        );
        for (answer, why) in [
            (1, "a frame without a method id"),
            (-2, "a GC running"),
            (-1, "no ClassLoad event"),
        ] {
            FAKE_ANSWER.set(answer);
            let mut walked = Walked::EMPTY;
            // SAFETY: as above.
            let read = unsafe { fast_walk(fake_walker, std::ptr::null_mut(), &mut walked) };
            assert!(!read, "{why}: GetStackTrace walks instead");
        }
    }
}
