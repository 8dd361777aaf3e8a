//! The backtrace hook jemalloc calls for each sampled allocation
//! (`experimental.hooks.prof_backtrace`, jemalloc >= 5.3): the hook that was installed before
//! (jemalloc's own unwinder) captures the native frames, then the allocating thread's Java
//! frames are appended as synthetic addresses.
//!
//! It runs inside `malloc`, on any thread: no allocation, no lock, no thread-local storage (a
//! dlopen'ed library's TLS may be allocated on first use), at most `max_len` frames. jemalloc
//! raises its reentrancy level around the hook, so an allocation made by the JVM inside it is
//! never sampled; a small table of the threads inside the hook guards against re-entry anyway.

use super::table::{address_of, error_marker, Frame, FrameTable};
use crate::jvm::async_get_call_trace::{current_env, AsyncGetCallTrace, CallFrame, CallTrace};
use jvmti_bindings::sys::jni::JavaVM;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// jemalloc's `prof_backtrace_hook_t`.
pub type BacktraceHook = unsafe extern "C" fn(*mut *mut c_void, *mut c_uint, c_uint);

/// The most Java frames asked of one sample (jemalloc keeps at most 128 frames in all).
const MAX_JAVA_FRAMES: usize = 128;

/// Everything the hook reads, set before it is installed.
pub struct HookState {
    pub previous: AtomicUsize,
    pub vm: AtomicPtr<JavaVM>,
    pub agct: AtomicUsize,
    /// Our hook's code, `[start, end)`: frames up to it are the unwinder's and jemalloc's.
    pub own_code: (AtomicUsize, AtomicUsize),
    pub enabled: AtomicBool,
    pub frames: FrameTable,
    pub samples: AtomicU64,
    pub samples_with_java: AtomicU64,
    pub samples_busy: AtomicU64,
}

pub static STATE: HookState = HookState {
    previous: AtomicUsize::new(0),
    vm: AtomicPtr::new(std::ptr::null_mut()),
    agct: AtomicUsize::new(0),
    own_code: (AtomicUsize::new(0), AtomicUsize::new(0)),
    enabled: AtomicBool::new(false),
    frames: FrameTable::new(),
    samples: AtomicU64::new(0),
    samples_with_java: AtomicU64::new(0),
    samples_busy: AtomicU64::new(0),
};

/// The hook installed into jemalloc.
///
/// # Safety
/// Called by jemalloc with `vec` holding `max_len` entries and `*len` frames filled.
pub unsafe extern "C" fn backtrace_hook(vec: *mut *mut c_void, len: *mut c_uint, max_len: c_uint) {
    let state = &STATE;
    let previous = state.previous.load(Ordering::Acquire);
    if previous != 0 {
        std::mem::transmute::<usize, BacktraceHook>(previous)(vec, len, max_len);
    }
    if vec.is_null() || len.is_null() {
        return;
    }
    drop_own_frames(state, vec, len);
    if !state.enabled.load(Ordering::Acquire) {
        return;
    }
    state.samples.fetch_add(1, Ordering::Relaxed);
    let Some(_inside) = Inside::enter() else {
        state.samples_busy.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let room = (max_len.saturating_sub(*len) as usize).min(MAX_JAVA_FRAMES);
    if room == 0 {
        return;
    }
    // Frames are pointer-sized words: the hook's `*mut c_void`s are the u64 addresses.
    let out = std::slice::from_raw_parts_mut(vec.add(*len as usize) as *mut u64, room);
    *len += java_frames_into(state, out) as c_uint;
}

/// Appends the calling Java thread's frames (AsyncGetCallTrace) to `out` as synthetic addresses,
/// for the in-process engine's hook (`sampling::glibc`); 0 frames when Java frames are off or
/// the thread is not a Java thread. Same rules as the backtrace hook: no allocation, no lock.
///
/// # Safety
/// Called from an allocation hook of the calling thread, never from a signal handler.
pub unsafe fn append_java_frames(out: &mut [u64]) -> usize {
    let state = &STATE;
    if !state.enabled.load(Ordering::Acquire) || out.is_empty() {
        return 0;
    }
    state.samples.fetch_add(1, Ordering::Relaxed);
    let room = out.len().min(MAX_JAVA_FRAMES);
    java_frames_into(state, &mut out[..room])
}

/// Writes the Java frames of the calling thread into `out` (at most `out.len()`, which is at
/// most [`MAX_JAVA_FRAMES`]); the number written.
unsafe fn java_frames_into(state: &HookState, out: &mut [u64]) -> usize {
    let room = out.len().min(MAX_JAVA_FRAMES);
    let vm = state.vm.load(Ordering::Acquire);
    let agct = state.agct.load(Ordering::Acquire);
    if vm.is_null() || agct == 0 || room == 0 {
        return 0;
    }
    let Some(env) = current_env(vm) else {
        return 0; // not a Java thread: native frames only
    };
    let agct = std::mem::transmute::<usize, AsyncGetCallTrace>(agct);
    let mut frames = [CallFrame {
        lineno: 0,
        method_id: std::ptr::null_mut(),
    }; MAX_JAVA_FRAMES];
    let mut trace = CallTrace {
        env,
        num_frames: 0,
        frames: frames.as_mut_ptr(),
    };
    // The thread's own state, as a signal handler interrupting it here would pass: a thread in
    // native or VM code is walked from its last Java frame anchor; the context is read only for
    // one in Java code (a leaf runtime call), where a null one would be dereferenced.
    let mut context: libc::ucontext_t = std::mem::zeroed();
    if libc::getcontext(&mut context) != 0 {
        return 0;
    }
    agct(
        &mut trace,
        room as i32,
        &mut context as *mut libc::ucontext_t as *mut c_void,
    );
    if trace.num_frames < 0 {
        if !worth_a_marker(trace.num_frames) {
            return 0;
        }
        out[0] = address_of(error_marker(trace.num_frames));
        return 1;
    }
    let count = (trace.num_frames as usize).min(room);
    for (slot, frame) in out.iter_mut().zip(&frames[..count]) {
        let index = state.frames.intern(Frame {
            method: frame.method_id as u64,
            bci: frame.lineno,
        });
        *slot = address_of(index);
    }
    if count > 0 {
        state.samples_with_java.fetch_add(1, Ordering::Relaxed);
    }
    count
}

/// Whether an AsyncGetCallTrace failure hides Java frames the thread has (GC active, a frame not
/// walkable, deoptimization, safepoint...). Not for -3 (no Java frame: a compiler or JVM thread,
/// or a thread entering native code) nor -8 (a thread exiting): nothing is missing there.
fn worth_a_marker(code: i32) -> bool {
    !matches!(code, -3 | -8)
}

/// Removes the frames the unwinder saw up to and including this hook's: they are jemalloc's
/// and ours, so the stack starts at `prof_backtrace` as it does without the hook.
unsafe fn drop_own_frames(state: &HookState, vec: *mut *mut c_void, len: *mut c_uint) {
    let start = state.own_code.0.load(Ordering::Relaxed);
    let end = state.own_code.1.load(Ordering::Relaxed);
    if start == 0 {
        return;
    }
    let frames = std::slice::from_raw_parts_mut(vec, *len as usize);
    let Some(own) = frames
        .iter()
        .take(8)
        .position(|&pc| (start..end).contains(&(pc as usize)))
    else {
        return;
    };
    frames.copy_within(own + 1.., 0);
    *len -= (own + 1) as c_uint;
}

/// Marks the calling thread as inside the hook (by `pthread_self`, a register read): a thread
/// found already inside does not walk its stack again.
struct Inside(&'static AtomicUsize);

const GUARD_SLOTS: usize = 256;
const GUARD_PROBES: usize = 16;
static INSIDE: [AtomicUsize; GUARD_SLOTS] = [const { AtomicUsize::new(0) }; GUARD_SLOTS];

impl Inside {
    fn enter() -> Option<Inside> {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let start = (me >> 12).wrapping_mul(0x9e37_79b9) % GUARD_SLOTS;
        if (0..GUARD_SLOTS).any(|i| INSIDE[i].load(Ordering::Acquire) == me) {
            return None;
        }
        (0..GUARD_PROBES)
            .map(|probe| &INSIDE[(start + probe) % GUARD_SLOTS])
            .find(|slot| {
                slot.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })
            .map(Inside)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}
