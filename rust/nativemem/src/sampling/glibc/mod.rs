//! Heap profiling on any allocator, glibc's included, started in a running process: the
//! allocation imports of every loaded object are rewritten to our hooks ([`imports`],
//! [`hooks`]), a Poisson byte sampler picks allocations as jemalloc's profiler does
//! ([`sampler`]), their stacks are unwound through `.eh_frame` ([`unwind`]) with the Java frames
//! above them, and the sampled blocks live in a lock-free table until freed ([`live`],
//! [`stacks`]). A dump is a jemalloc `heap_v2` dump ([`heap_v2`]): every analysis reads it as
//! it reads jemalloc's.
//!
//! Sees what goes through an object's imports; not what libc allocates for itself inside
//! (`fopen`'s buffer, `strdup`), nor allocators linked statically into an object.

mod copies;
mod heap_v2;
mod hooks;
mod imports;
mod live;
mod region;
mod sampler;
mod stacks;
mod unwind;

use super::SamplingError;
use imports::{Import, Skip};
use live::{Block, LiveHeap};
use serde::Serialize;
use stacks::{Stacks, MAX_FRAMES};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The engine's name where status and dumps say which engine runs.
pub const ENGINE: &str = "import-rewriting";

/// Blocks the live table holds: 2^20 (16 MiB reserved, resident as used).
const LIVE_BUCKETS: usize = 1 << 18;
/// Distinct stacks, and frames kept for all of them.
const STACK_SLOTS: usize = 1 << 18;
const STACK_FRAMES: usize = 1 << 22;
/// Native frames kept before the Java frames.
const MAX_NATIVE_FRAMES: usize = 64;

/// The engine runs: from the start, before any import is rewritten, until the stop. What a
/// `dlopen` loads meanwhile is rewritten too.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Hooks record samples only while this is on: from when every import is rewritten (each
/// sampled block's `realloc` and `free` are hooked then) until the stop.
static RECORDING: AtomicBool = AtomicBool::new(false);
/// Samples being recorded now: a stop waits for them, so that none lands after it (in a table
/// the next start is clearing, for a block whose `free` no hook will see).
static RECORDS_UNDER_WAY: AtomicUsize = AtomicUsize::new(0);
static TABLES: OnceLock<Tables> = OnceLock::new();
static SAMPLES: AtomicU64 = AtomicU64::new(0);
/// Start, stop and the `dlopen`/`dlclose` follow-up, one at a time.
/// The last answer of the check for another copy's engine, and when: a status is read on every
/// metrics scrape, and the check walks every import entry of every loaded object (some 120 µs in
/// a JVM, against 8 µs for the rest of a status); another copy starts its engine rarely, so an
/// answer serves a status for [`CHECK_SERVES`]. `start()` always checks afresh and leaves its
/// answer here.
static LAST_CHECK: Mutex<Option<(Instant, Option<String>)>> = Mutex::new(None);
const CHECK_SERVES: Duration = Duration::from_secs(1);

static CONTROL: Mutex<Control> = Mutex::new(Control {
    objects: 0,
    skip: None,
});

struct Control {
    /// Objects whose imports point at our hooks.
    objects: usize,
    skip: Option<Skip>,
}

struct Tables {
    live: LiveHeap,
    stacks: Stacks,
}

fn tables() -> Option<&'static Tables> {
    TABLES.get()
}

/// What the engine is doing, and what it costs.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GlibcProfilerStatus {
    pub engine: &'static str,
    pub active: bool,
    pub sample_interval_bytes: u64,
    /// Loaded objects whose allocation imports are rewritten, and the entries changed.
    pub hooked_objects: u64,
    pub hooked_entries: u64,
    /// Objects whose unwind tables the unwinder knows.
    pub unwinder_objects: u64,
    /// Samples taken since the start.
    pub samples: u64,
    /// Sampled blocks still live, and their bytes as sampled (not unbiased).
    pub live_samples: u64,
    pub live_sampled_bytes: u64,
    pub distinct_stacks: u64,
    /// Samples not kept (table full), and samples kept without their stack.
    pub dropped_samples: u64,
    pub samples_without_stack: u64,
    /// Memory reserved for the tables, and how much of it is resident now.
    pub table_reserved_bytes: u64,
    pub table_resident_bytes: u64,
}

/// Starts sampling every `interval_bytes` bytes on average (1: every allocation). Starting
/// again while running changes the interval and keeps the samples.
pub fn start(interval_bytes: u64) -> Result<GlibcProfilerStatus, SamplingError> {
    let mut control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    sampler::set_interval(interval_bytes);
    if ACTIVE.load(Ordering::Acquire) {
        return Ok(status_locked(&control));
    }
    if !hooks::resolve() {
        return Err(SamplingError::Unavailable(
            "the process has no malloc, calloc, realloc and free to hook (dlsym found none)".into(),
        ));
    }
    // Never on top of another copy's engine: its profile would lose what ours took over.
    let other = copies::another_copy(&imports(), &skip(), own_address()).map(|o| o.refusal());
    *LAST_CHECK.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), other.clone()));
    if let Some(refusal) = other {
        return Err(SamplingError::Unavailable(refusal));
    }
    let tables = match TABLES.get() {
        Some(tables) => tables,
        None => {
            let made = LiveHeap::new(LIVE_BUCKETS)
                .zip(Stacks::new(STACK_SLOTS, STACK_FRAMES))
                .map(|(live, stacks)| Tables { live, stacks })
                .ok_or_else(|| {
                    SamplingError::Unavailable(
                        "cannot map memory for the heap profile's tables; check the process's \
                         address-space limit (ulimit -v)"
                            .into(),
                    )
                })?;
            TABLES.get_or_init(|| made)
        }
    };
    tables.live.clear();
    tables.stacks.clear();
    SAMPLES.store(0, Ordering::Relaxed);
    pin_this_library();
    unwind::prepare(own_address());
    let skip = skip();
    ACTIVE.store(true, Ordering::Release);
    let done = imports::hook_all(&imports(), &skip);
    control.objects = done.objects;
    control.skip = Some(skip);
    // Objects loaded before the start whose files may still be deleted.
    super::kept::refresh();
    // Only now: while the walk was rewriting the imports, a block allocated through an object's
    // hooked `malloc` could still be freed through another's real `free`.
    RECORDING.store(true, Ordering::SeqCst);
    Ok(status_locked(&control))
}

/// Stops: every rewritten import gets its former target back, so the process runs at its
/// former cost. The samples stay readable (a dump shows what was live at the stop).
pub fn stop() -> GlibcProfilerStatus {
    let mut control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    RECORDING.store(false, Ordering::SeqCst);
    // A hook that found recording on may still be unwinding its stack: its sample is one taken
    // before the stop, and is in the table when the stop returns.
    while RECORDS_UNDER_WAY.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
    ACTIVE.store(false, Ordering::Release);
    if let Some(skip) = control.skip.take() {
        imports::restore_all(&imports(), &skip);
    }
    control.objects = 0;
    status_locked(&control)
}

/// Discards every sample; with `interval_bytes`, samples at that mean interval from now on.
/// A running engine is stopped and started again around the discard.
pub fn reset(interval_bytes: Option<u64>) -> Result<GlibcProfilerStatus, SamplingError> {
    let interval = interval_bytes.unwrap_or_else(sampler::interval);
    if ACTIVE.load(Ordering::Acquire) {
        stop();
        return start(interval);
    }
    sampler::set_interval(interval);
    let control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tables) = tables() {
        tables.live.clear();
        tables.stacks.clear();
    }
    SAMPLES.store(0, Ordering::Relaxed);
    Ok(status_locked(&control))
}

/// Why this copy's engine cannot start while it is stopped: another copy of nativemem's
/// library profiles this process through its own hooks ([`copies`]). None when it can, when it
/// runs, or when the process has nothing to hook (the start says so).
pub fn why_not_startable() -> Option<String> {
    let _control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    if ACTIVE.load(Ordering::Acquire) || !hooks::resolve() {
        return None;
    }
    let mut last = LAST_CHECK.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, answer)) = last.as_ref() {
        if at.elapsed() < CHECK_SERVES {
            return answer.clone();
        }
    }
    let answer =
        copies::another_copy(&imports(), &skip(), own_address()).map(|other| other.refusal());
    *last = Some((Instant::now(), answer.clone()));
    answer
}

/// Whether the hooks record samples now.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Mean bytes between samples in effect.
pub fn interval() -> u64 {
    sampler::interval()
}

pub fn status() -> GlibcProfilerStatus {
    status_locked(&CONTROL.lock().unwrap_or_else(|p| p.into_inner()))
}

fn status_locked(control: &Control) -> GlibcProfilerStatus {
    let tables = tables();
    let (live_samples, live_sampled_bytes) = tables.map_or((0, 0), |t| t.live.live());
    GlibcProfilerStatus {
        engine: ENGINE,
        active: ACTIVE.load(Ordering::Acquire),
        sample_interval_bytes: sampler::interval(),
        hooked_objects: control.objects as u64,
        hooked_entries: imports::changed_entries() as u64,
        unwinder_objects: unwind::modules() as u64,
        samples: SAMPLES.load(Ordering::Relaxed),
        live_samples,
        live_sampled_bytes,
        distinct_stacks: tables.map_or(0, |t| t.stacks.count() as u64),
        dropped_samples: tables.map_or(0, |t| t.live.dropped()),
        samples_without_stack: tables.map_or(0, |t| t.stacks.dropped()),
        table_reserved_bytes: tables
            .map_or(0, |t| t.live.reserved_bytes() + t.stacks.reserved_bytes()),
        table_resident_bytes: tables
            .map_or(0, |t| t.live.resident_bytes() + t.stacks.resident_bytes()),
    }
}

/// Writes the live samples as a `heap_v2` dump with this process's maps; the sampled
/// (objects, bytes) written.
pub fn write_dump(out: &mut impl std::io::Write) -> std::io::Result<(u64, u64)> {
    let maps = std::fs::read("/proc/self/maps")?;
    match tables() {
        Some(t) => heap_v2::write(out, sampler::interval(), &t.live, &t.stacks, &maps),
        None => {
            let empty = (LiveHeap::new(1), Stacks::new(1, 1));
            match empty {
                (Some(live), Some(stacks)) => {
                    heap_v2::write(out, sampler::interval(), &live, &stacks, &maps)
                }
                _ => Err(std::io::Error::other("cannot map memory for an empty dump")),
            }
        }
    }
}

/// The objects never rewritten: ours, the one serving the real `malloc`, the loader's.
fn skip() -> Skip {
    Skip::holding(&[
        own_address(),
        hooks::REAL.malloc.load(Ordering::Acquire),
        hooks::REAL.dlopen.load(Ordering::Acquire),
    ])
}

fn imports() -> Vec<Import> {
    hooks::table()
        .into_iter()
        .filter(|(_, real, _)| real.load(Ordering::Acquire) != 0)
        .map(|(name, _, hook)| Import { name, hook })
        .collect()
}

/// An address in this library's code: the object whose imports stay as they are and whose
/// frames (the hooks') are dropped from every stack.
fn own_address() -> usize {
    record as *const () as usize
}

/// Records a sampled block: its stack (native, then Java), its size. Called from a hook.
fn record(address: usize, size: usize) {
    let Some(_inside) = sampler::Inside::enter() else {
        return;
    };
    let Some(_under_way) = UnderWay::enter() else {
        return;
    };
    let Some(tables) = tables() else {
        return;
    };
    let mut frames = [0u64; MAX_FRAMES];
    let native = unwind::capture(&mut frames[..MAX_NATIVE_FRAMES]);
    // SAFETY: called from an allocation hook on the allocating thread.
    let java = unsafe { super::java_frames::append_java_frames(&mut frames[native..]) };
    let stack = tables.stacks.intern(&frames[..native + java]);
    SAMPLES.fetch_add(1, Ordering::Relaxed);
    tables.live.insert(
        address,
        Block {
            size: size as u64,
            stack,
        },
    );
}

/// A sample being recorded, counted in [`RECORDS_UNDER_WAY`] until dropped.
struct UnderWay(());

impl UnderWay {
    /// None when recording is off: either a stop sees this record under way and waits for it,
    /// or this record sees the stop (both sequentially consistent).
    fn enter() -> Option<UnderWay> {
        RECORDS_UNDER_WAY.fetch_add(1, Ordering::SeqCst);
        let under_way = UnderWay(());
        RECORDING.load(Ordering::SeqCst).then_some(under_way)
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        RECORDS_UNDER_WAY.fetch_sub(1, Ordering::SeqCst);
    }
}

/// After a `dlopen` returned: rewrite what it loaded, tell the unwinder, keep a descriptor of
/// what it loaded while its file is still there (a JNI library may delete it at once).
fn after_load() {
    let mut control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    if let Some(skip) = &control.skip {
        let done = imports::hook_all(&imports(), skip);
        control.objects += done.objects;
    }
    unwind::refresh();
    super::kept::refresh();
}

/// After a `dlclose` returned: forget what it unloaded.
fn after_unload() {
    let _control = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
    if ACTIVE.load(Ordering::Acquire) {
        unwind::refresh();
        super::kept::refresh();
    }
}

/// Keeps this library mapped for the life of the process: a thread may still be inside a hook
/// after the stop, and the tables are read by them.
fn pin_this_library() {
    // SAFETY: dladdr fills `info` for an address in a loaded object; dlopen with RTLD_NOLOAD
    // only takes another reference to it, and RTLD_NODELETE keeps it.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(own_address() as *const libc::c_void, &mut info) != 0
            && !info.dli_fname.is_null()
        {
            libc::dlopen(
                info.dli_fname,
                libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            );
        }
    }
}

#[cfg(test)]
mod tests;
