//! The options jemalloc starts with.
//!
//! jemalloc reads its options once, at its first allocation, from (in order, later wins) its
//! build-time string, the `malloc_conf` symbol, `/etc/malloc.conf` and an environment variable.
//! The prefixed build names the symbol `_rjem_malloc_conf` and the variable `_RJEM_MALLOC_CONF`,
//! so the standard `MALLOC_CONF` would be ignored. Before jemalloc's first call we therefore
//! point `_rjem_malloc_conf` at `<our defaults>,<MALLOC_CONF>`: the user's options come later and
//! override ours. Nothing here may allocate: this runs inside the process's first `malloc`.

use core::ffi::{c_char, CStr};
use core::sync::atomic::{AtomicU8, Ordering};

extern "C" {
    /// jemalloc's weak `const char *malloc_conf`; a plain pointer variable we may set before
    /// jemalloc reads it.
    #[link_name = "_rjem_malloc_conf"]
    static mut JEMALLOC_CONF: *const c_char;
}

/// Freed dirty pages go back to the OS after about a second; muzzy pages are released at once
/// (jemalloc 5.3's own muzzy default).
const DECAY: &[u8] = b"dirty_decay_ms:1000,muzzy_decay_ms:0";
/// In a JVM, jemalloc's background threads purge instead of application threads.
///
/// Only in a JVM: an image's `ENV LD_PRELOAD` reaches every process of the container, and a
/// background thread makes each of them multi-threaded from its first `malloc`. A tool that drops
/// privileges (`setpriv`, `su`, `runuser`, `su-exec`) changes its uid thread by thread through
/// glibc's setxid broadcast; once the uid is dropped the background thread may no longer change
/// its gid, and glibc aborts the process (SIGABRT) — before the JVM ever starts.
const BACKGROUND: &[u8] = b",background_thread:true";
/// The launcher of every JVM this allocator is documented for (`java`, Flink's and Kafka's
/// scripts, Spring Boot's buildpacks all exec it).
const JVM_LAUNCHER: &[u8] = b"java";
/// Sampling compiled in and enabled but inactive: `prof.active` starts it at run time.
const PROFILING: &[u8] = b"prof:true,prof_active:false";

const UNCONFIGURED: u8 = 0;
const CONFIGURING: u8 = 1;
const CONFIGURED: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNCONFIGURED);

/// Large enough for our defaults plus any sensible `MALLOC_CONF`.
const CONF_CAPACITY: usize = 8192;
static mut CONF: [u8; CONF_CAPACITY] = [0; CONF_CAPACITY];

/// jemalloc initialises itself from a constructor of its own (`jemalloc_constructor`), which may
/// run before any allocation reaches our wrappers. A constructor with an explicit priority runs
/// before the unprioritised ones of the same object, so ours sets the options first.
#[used]
#[link_section = ".init_array.00099"]
static CONFIGURE_AT_LOAD: extern "C" fn() = configure_at_load;

extern "C" fn configure_at_load() {
    ensure();
}

/// Makes sure jemalloc's options are set before its first call. Cheap after the first time.
#[inline(always)]
pub(crate) fn ensure() {
    if STATE.load(Ordering::Acquire) != CONFIGURED {
        configure();
    }
}

#[cold]
#[inline(never)]
fn configure() {
    match STATE.compare_exchange(
        UNCONFIGURED,
        CONFIGURING,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            let cpus = container_cpus::detect().effective;
            let user = user_conf();
            let jvm = is_jvm();
            // SAFETY: only the thread that won the exchange writes CONF and JEMALLOC_CONF, and
            // jemalloc has not run yet: every entry point calls `ensure` first.
            unsafe {
                let buf = &mut *core::ptr::addr_of_mut!(CONF);
                JEMALLOC_CONF = match compose(buf, cpus, jvm, user) {
                    Some(_) => buf.as_ptr().cast(),
                    // A MALLOC_CONF too long to combine: the user's options alone.
                    None => user.map_or(core::ptr::null(), |u| u.as_ptr()),
                };
            }
            STATE.store(CONFIGURED, Ordering::Release);
        }
        Err(_) => {
            // Another thread is configuring (a few microseconds): wait, do not race jemalloc.
            while STATE.load(Ordering::Acquire) != CONFIGURED {
                core::hint::spin_loop();
            }
        }
    }
}

/// Whether this process's executable is named `java`; reads `/proc/self/exe` into a stack buffer
/// (nothing here may allocate).
fn is_jvm() -> bool {
    let mut path = [0u8; 4096];
    // SAFETY: readlink writes at most `path.len()` bytes into the buffer and allocates nothing.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            path.as_mut_ptr().cast(),
            path.len(),
        )
    };
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    let path = &path[..n.min(path.len())];
    path.rsplit(|&b| b == b'/').next() == Some(JVM_LAUNCHER)
}

/// `MALLOC_CONF` from the environment, if set and not empty.
fn user_conf() -> Option<&'static CStr> {
    // SAFETY: getenv does not allocate; environment strings live for the process (nothing has
    // called setenv before the first malloc).
    let ptr = unsafe { libc::getenv(c"MALLOC_CONF".as_ptr()) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: getenv returns a NUL-terminated string.
    let conf = unsafe { CStr::from_ptr(ptr) };
    (!conf.is_empty()).then_some(conf)
}

/// jemalloc's own rule, applied to the container's CPUs instead of the affinity mask.
pub(crate) fn narenas_for(cpus: u32) -> u32 {
    if cpus > 1 {
        cpus.saturating_mul(4)
    } else {
        1
    }
}

/// Writes `<profiling>,narenas:<n>,<decay>[,background_thread:true][,<user>]` and a NUL into
/// `buf`; returns the length without the NUL, or `None` if it does not fit.
pub(crate) fn compose(buf: &mut [u8], cpus: u32, jvm: bool, user: Option<&CStr>) -> Option<usize> {
    let mut w = Writer { buf, len: 0 };
    w.put(PROFILING)?;
    w.put(b",narenas:")?;
    w.put_u32(narenas_for(cpus))?;
    w.put(b",")?;
    w.put(DECAY)?;
    if jvm {
        w.put(BACKGROUND)?;
    }
    if let Some(user) = user {
        w.put(b",")?;
        w.put(user.to_bytes())?;
    }
    let len = w.len;
    w.put(b"\0")?;
    Some(len)
}

struct Writer<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.len.checked_add(bytes.len())?;
        self.buf.get_mut(self.len..end)?.copy_from_slice(bytes);
        self.len = end;
        Some(())
    }

    fn put_u32(&mut self, mut n: u32) -> Option<()> {
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.put(&digits[i..])
    }
}
