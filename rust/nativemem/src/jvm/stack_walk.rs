//! The calling Java thread's stack as (method id, bytecode index) pairs, without building frame
//! objects: pairs that identify a stack exactly, so that the handle registry's creation sites can
//! be keyed by them (`handles::site_keys`).
//!
//! Two walkers give those pairs. JVMTI `GetStackTrace` is the supported one, but it enters the VM
//! and builds a frame object per frame (about 2.5 µs at a depth of 20). `AsyncGetCallTrace`, the
//! walker async-profiler uses, reads the same frames in place, several times faster; it needs the
//! JVMTI ClassLoad event enabled (a small cost on every class load after) and reports a method
//! that has no method id yet as a null one. A process that walks many stacks (level=full, a
//! test's scope) therefore switches to it after [`SWITCH_AFTER`] walks; a walk it cannot answer
//! exactly (a null method id, a GC running) is made by `GetStackTrace` instead, which also makes
//! the missing method ids. Both report a frame the same way, so frames of either walker compare
//! equal.

use super::async_get_call_trace::{async_get_call_trace, AsyncGetCallTrace, CallFrame, CallTrace};
use super::jvmti::{Jvmti, NO_FRAME};
use jni::sys::jint;
use jni::JNIEnv;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// `GetStackTrace` walks after which `AsyncGetCallTrace` takes over: a process that walks a
/// stack now and then (level=sampled) never pays for the ClassLoad event it needs.
const SWITCH_AFTER: u32 = 256;

/// A frame: its method id and bytecode index (-1 for a native method, whichever walker read it).
pub type Frame = (usize, i64);

/// Up to `N` frames of a stack: no allocation.
#[derive(Clone, Copy)]
pub struct Frames<const N: usize> {
    frames: [Frame; N],
    len: usize,
}

impl<const N: usize> Frames<N> {
    pub const EMPTY: Self = Frames {
        frames: [(0, 0); N],
        len: 0,
    };

    /// The first `N` of `frames`.
    pub fn of(frames: &[Frame]) -> Self {
        let mut kept = Self::EMPTY;
        let len = frames.len().min(N);
        kept.frames[..len].copy_from_slice(&frames[..len]);
        kept.len = len;
        kept
    }

    pub fn frames(&self) -> &[Frame] {
        &self.frames[..self.len]
    }
}

/// The two walkers of this process.
pub struct StackWalkers {
    jvmti: Jvmti,
    /// `GetStackTrace` walks so far, up to [`SWITCH_AFTER`].
    jvmti_walks: AtomicU32,
    /// `AsyncGetCallTrace` once switched to; None inside if this JVM cannot give it.
    fast: OnceLock<Option<AsyncGetCallTrace>>,
}

impl StackWalkers {
    /// This process's walkers, or None if the JVM offers no JVMTI.
    pub fn get(env: &JNIEnv) -> Option<&'static StackWalkers> {
        static WALKERS: OnceLock<Option<StackWalkers>> = OnceLock::new();
        WALKERS
            .get_or_init(|| {
                let vm = env.get_java_vm().ok()?.get_java_vm_pointer();
                // SAFETY: `vm` is this process's JavaVM.
                let jvmti = unsafe { Jvmti::new(vm.cast()) }.ok()?;
                Some(StackWalkers {
                    jvmti,
                    jvmti_walks: AtomicU32::new(0),
                    fast: OnceLock::new(),
                })
            })
            .as_ref()
    }

    /// The calling Java thread's top `N` frames, or None if they cannot be read.
    pub fn walk<const N: usize>(&self, env: &mut JNIEnv) -> Option<Frames<N>> {
        let mut walked = Frames::<N>::EMPTY;
        let jni = env.get_raw();
        if let Some(Some(fast)) = self.fast.get() {
            // SAFETY: a JNI call runs on a Java thread, `jni` is its JNIEnv.
            if unsafe { fast_walk(*fast, jni.cast(), &mut walked) } {
                return Some(walked);
            }
        }
        let mut buffer = [NO_FRAME; N];
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

    /// The JVM signature of the class declaring the method of a walked frame
    /// (`Ldev/nativemem/agent/HandleHooks;`), or None if it cannot be told.
    pub fn declaring_class(&self, env: &mut JNIEnv, method: usize) -> Option<String> {
        let jni = env.get_raw().cast();
        // SAFETY: `jni` is this thread's JNIEnv; the method id came from the JVM.
        let (class, _) = unsafe { self.jvmti.declaring_class(jni, method as _, false) }.ok()?;
        class
    }
}

/// Reads the calling thread's frames with `AsyncGetCallTrace` into `walked`; false if it cannot
/// tell every frame exactly (a frame without a method id, a GC running, no frames), so that
/// `GetStackTrace` walks instead.
///
/// # Safety
/// The calling thread must be a Java thread in a JNI call and `jni` its JNIEnv.
unsafe fn fast_walk<const N: usize>(
    fast: AsyncGetCallTrace,
    jni: *mut jvmti_bindings::sys::jni::JNIEnv,
    walked: &mut Frames<N>,
) -> bool {
    let mut frames = [CallFrame {
        lineno: 0,
        method_id: std::ptr::null_mut(),
    }; N];
    let mut trace = CallTrace {
        env: jni,
        num_frames: 0,
        frames: frames.as_mut_ptr(),
    };
    // No signal context: a thread in a JNI call has its last Java frame recorded, which the
    // walk starts from.
    fast(&mut trace, N as jint, std::ptr::null_mut());
    let count = match usize::try_from(trace.num_frames) {
        Ok(count) if count > 0 => count.min(N),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

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
        let mut walked = Frames::<40>::EMPTY;
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
            let mut walked = Frames::<40>::EMPTY;
            // SAFETY: as above.
            let read = unsafe { fast_walk(fake_walker, std::ptr::null_mut(), &mut walked) };
            assert!(!read, "{why}: GetStackTrace walks instead");
        }
    }

    #[test]
    fn frames_keep_at_most_their_number() {
        let long: Vec<Frame> = (1..=37).map(|m| (m, 7)).collect();
        assert_eq!(Frames::<32>::of(&long).frames().len(), 32);
        assert_eq!(Frames::<32>::of(&long).frames()[0], (1, 7));
    }
}
