//! Native stacks without frame pointers: `.eh_frame` unwinding (framehop) over the unwind tables
//! the loaded objects carry in memory, with rule caches, allocating nothing during an unwind.
//!
//! The module list is built outside the hooks (at start, and after each `dlopen`/`dlclose`)
//! and published as a whole through an atomic pointer: the hook never calls
//! `dl_iterate_phdr` or `_Unwind_Find_FDE`, which take the loader's lock. A list replaced is
//! freed once no unwind is running; caches come from a fixed pool, claimed by swap.

#[cfg(target_arch = "aarch64")]
use framehop::aarch64::{
    CacheAarch64 as ArchCache, PtrAuthMask, UnwindRegsAarch64, UnwinderAarch64 as ArchUnwinder,
};
#[cfg(target_arch = "x86_64")]
use framehop::x86_64::{
    CacheX86_64 as ArchCache, UnwindRegsX86_64, UnwinderX86_64 as ArchUnwinder,
};
use framehop::{ExplicitModuleSectionInfo, Module, MustNotAllocateDuringUnwind, Unwinder};
use std::cell::Cell;
use std::ffi::{c_int, c_void, CStr};
use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Unwind data read in place from a loaded object.
#[derive(Clone, Copy, Default)]
pub struct Mapped(&'static [u8]);

impl Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0
    }
}

type Unwinding = ArchUnwinder<Mapped, MustNotAllocateDuringUnwind>;

/// The unwinder and the code ranges of the objects it knows, sorted: a frame outside all of them
/// is JIT-compiled or interpreted code, where the native stack ends (as jemalloc's does), so the
/// Java frames that follow continue it.
struct Engine {
    unwinder: Unwinding,
    code: Vec<Range<u64>>,
}

impl Engine {
    fn knows(&self, address: u64) -> bool {
        let at = self.code.partition_point(|r| r.end <= address);
        self.code.get(at).is_some_and(|r| r.contains(&address))
    }
}
type Cache = ArchCache<MustNotAllocateDuringUnwind>;

/// Threads that can unwind at the same moment; one more waits for no one: it records the
/// sample with its first frame only.
const CACHES: usize = 64;

static CURRENT: AtomicPtr<Engine> = AtomicPtr::new(std::ptr::null_mut());
static UNWINDING: AtomicUsize = AtomicUsize::new(0);
static RETIRED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static POOL: [AtomicPtr<Cache>; CACHES] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CACHES];
static MODULES: AtomicUsize = AtomicUsize::new(0);
/// Our own object's code, `[start, end)`: the hook's frames, dropped from every stack.
static OWN: (AtomicUsize, AtomicUsize) = (AtomicUsize::new(0), AtomicUsize::new(0));

thread_local! {
    /// The calling thread's stack top, found once per thread (0: not yet; 1: unknown).
    static STACK_TOP: Cell<usize> = const { Cell::new(0) };
}

/// Fills the cache pool once; reads the loaded objects' unwind tables.
pub fn prepare(own_address: usize) {
    for slot in &POOL {
        if slot.load(Ordering::Acquire).is_null() {
            let cache = Box::into_raw(Box::new(Cache::new_in()));
            if slot
                .compare_exchange(
                    std::ptr::null_mut(),
                    cache,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_err()
            {
                // SAFETY: never published.
                drop(unsafe { Box::from_raw(cache) });
            }
        }
    }
    let (start, end) = code_of(own_address);
    OWN.0.store(start, Ordering::Relaxed);
    OWN.1.store(end, Ordering::Relaxed);
    refresh();
}

/// Objects whose unwind tables are known.
pub fn modules() -> usize {
    MODULES.load(Ordering::Relaxed)
}

/// Rebuilds the module list from the objects loaded now and publishes it. Not from a hook.
pub fn refresh() {
    let mut found: Vec<Found> = Vec::new();
    // SAFETY: the callback gets `found` back for the walk's duration.
    unsafe {
        libc::dl_iterate_phdr(
            Some(each_object),
            &mut found as *mut Vec<Found> as *mut c_void,
        );
    }
    let mut unwinder = Unwinding::new();
    let mut code: Vec<Range<u64>> = Vec::with_capacity(found.len());
    MODULES.store(found.len(), Ordering::Relaxed);
    for object in found {
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: Some(object.text.clone()),
            eh_frame_svma: Some(object.eh_frame_svma.clone()),
            eh_frame: Some(object.eh_frame),
            eh_frame_hdr_svma: Some(object.eh_frame_hdr_svma.clone()),
            eh_frame_hdr: Some(object.eh_frame_hdr),
            ..Default::default()
        };
        let avma = object.text.start + object.base..object.text.end + object.base;
        code.push(avma.clone());
        unwinder.add_module(Module::new(object.name, avma, object.base, info));
    }
    code.sort_by_key(|r| r.start);
    let fresh = Box::into_raw(Box::new(Engine { unwinder, code }));
    let old = CURRENT.swap(fresh, Ordering::SeqCst);
    let mut retired = RETIRED.lock().unwrap_or_else(|p| p.into_inner());
    if !old.is_null() {
        retired.push(old as usize);
    }
    // A reader counts itself before it loads the pointer: with none counted now, none holds
    // a list older than `fresh`.
    if UNWINDING.load(Ordering::SeqCst) == 0 {
        for old in retired.drain(..) {
            // SAFETY: published by this function, replaced, and no unwind runs.
            drop(unsafe { Box::from_raw(old as *mut Engine) });
        }
    }
}

/// Captures the calling thread's native stack into `out` (return addresses; the engine's own
/// frames left out). Allocation-free and lock-free. Returns the number of frames.
#[inline(never)]
pub fn capture(out: &mut [u64]) -> usize {
    let (ip, sp, regs) = registers();
    let top = stack_top();
    if top <= sp as usize {
        return 0;
    }
    UNWINDING.fetch_add(1, Ordering::SeqCst);
    let filled = walk(ip, sp, regs, top as u64, out);
    UNWINDING.fetch_sub(1, Ordering::SeqCst);
    filled
}

/// This point's instruction and stack pointers and the registers the unwinder starts from.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn registers() -> (u64, u64, UnwindRegsX86_64) {
    let (ip, sp, bp): (u64, u64, u64);
    // SAFETY: reads three registers, touches no memory.
    unsafe {
        std::arch::asm!(
            "lea {ip}, [rip]",
            "mov {sp}, rsp",
            "mov {bp}, rbp",
            ip = out(reg) ip,
            sp = out(reg) sp,
            bp = out(reg) bp,
            options(nomem, nostack, preserves_flags)
        );
    }
    (ip, sp, UnwindRegsX86_64::new(ip, sp, bp))
}

/// This point's program counter and stack pointer, and the link register and frame pointer
/// the unwinder starts from.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn registers() -> (u64, u64, UnwindRegsAarch64) {
    let (pc, sp, fp, lr): (u64, u64, u64, u64);
    // SAFETY: reads four registers, touches no memory.
    unsafe {
        std::arch::asm!(
            "adr {pc}, .",
            "mov {sp}, sp",
            "mov {fp}, x29",
            "mov {lr}, x30",
            pc = out(reg) pc,
            sp = out(reg) sp,
            fp = out(reg) fp,
            lr = out(reg) lr,
            options(nomem, nostack, preserves_flags)
        );
    }
    // Linux's user addresses fit 48 bits: a return address signed by pointer authentication
    // carries its signature above them.
    let mask = PtrAuthMask(u64::MAX >> 16);
    (
        pc,
        sp,
        UnwindRegsAarch64::new_with_ptr_auth_mask(mask, lr, sp, fp),
    )
}

#[cfg(target_arch = "x86_64")]
type Regs = UnwindRegsX86_64;
#[cfg(target_arch = "aarch64")]
type Regs = UnwindRegsAarch64;

fn walk(ip: u64, sp: u64, regs: Regs, top: u64, out: &mut [u64]) -> usize {
    let engine = CURRENT.load(Ordering::SeqCst);
    // SAFETY: published by `refresh` and not freed while UNWINDING counts us.
    let Some(engine) = (unsafe { engine.as_ref() }) else {
        return 0;
    };
    let Some((slot, cache)) = claim_cache() else {
        return 0;
    };
    // SAFETY: claimed from the pool by swap: this thread alone uses it until it is put back.
    let cache_ref = unsafe { &mut *cache };
    let mut read_stack = |address: u64| {
        if address < sp || address.saturating_add(8) > top || address % 8 != 0 {
            return Err(());
        }
        // SAFETY: inside this thread's own stack, above its stack pointer.
        Ok(unsafe { std::ptr::read_volatile(address as *const u64) })
    };
    let (own_start, own_end) = (
        OWN.0.load(Ordering::Relaxed) as u64,
        OWN.1.load(Ordering::Relaxed) as u64,
    );
    let mut frames = engine
        .unwinder
        .iter_frames(ip, regs, cache_ref, &mut read_stack);
    let mut filled = 0;
    let mut leading = true;
    while filled < out.len() {
        let Ok(Some(frame)) = frames.next() else {
            break;
        };
        let address = frame.address();
        if leading && (own_start..own_end).contains(&address) {
            continue;
        }
        leading = false;
        out[filled] = address;
        filled += 1;
        // The first frame in no object's code (the interpreter's, a JIT's) is the last native one.
        if !engine.knows(address.saturating_sub(1)) {
            break;
        }
    }
    POOL[slot].store(cache, Ordering::Release);
    filled
}

fn claim_cache() -> Option<(usize, *mut Cache)> {
    // SAFETY: pthread_self has no preconditions.
    let start = (unsafe { libc::pthread_self() } as usize >> 8) % CACHES;
    (0..CACHES).map(|i| (start + i) % CACHES).find_map(|slot| {
        let cache = POOL[slot].swap(std::ptr::null_mut(), Ordering::AcqRel);
        (!cache.is_null()).then_some((slot, cache))
    })
}

/// The top (highest address) of the calling thread's stack, found once per thread.
fn stack_top() -> usize {
    STACK_TOP.with(|top| {
        if top.get() == 0 {
            top.set(find_stack_top().unwrap_or(1));
        }
        top.get()
    })
}

fn find_stack_top() -> Option<usize> {
    // SAFETY: the attribute object is initialized by pthread_getattr_np and destroyed after.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut base: *mut c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut base, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0).then(|| base as usize + size)
    }
}

/// The executable range of the object holding `address`.
fn code_of(address: usize) -> (usize, usize) {
    let mut found: Vec<Found> = Vec::new();
    // SAFETY: as in `refresh`.
    unsafe {
        libc::dl_iterate_phdr(
            Some(each_object),
            &mut found as *mut Vec<Found> as *mut c_void,
        );
    }
    found
        .iter()
        .map(|o| (o.text.start + o.base, o.text.end + o.base))
        .find(|(start, end)| (*start..*end).contains(&(address as u64)))
        .map_or((0, 0), |(s, e)| (s as usize, e as usize))
}

/// An object's unwind tables, in place.
struct Found {
    name: String,
    base: u64,
    text: Range<u64>,
    eh_frame_hdr_svma: Range<u64>,
    eh_frame_hdr: Mapped,
    eh_frame_svma: Range<u64>,
    eh_frame: Mapped,
}

unsafe extern "C" fn each_object(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    if let (Some(info), Some(found)) = (info.as_ref(), (data as *mut Vec<Found>).as_mut()) {
        if let Some(object) = tables_of(info) {
            found.push(object);
        }
    }
    0
}

const DW_EH_PE_ABSPTR: u8 = 0x00;
const DW_EH_PE_UDATA4: u8 = 0x03;
const DW_EH_PE_SDATA4: u8 = 0x0b;
const DW_EH_PE_SDATA8: u8 = 0x0c;
const DW_EH_PE_PCREL: u8 = 0x10;

/// # Safety
/// `info` describes a loaded object (inside `dl_iterate_phdr`).
unsafe fn tables_of(info: &libc::dl_phdr_info) -> Option<Found> {
    if info.dlpi_phdr.is_null() {
        return None;
    }
    let base = info.dlpi_addr;
    let phdrs = std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
    let hdr = phdrs.iter().find(|p| p.p_type == libc::PT_GNU_EH_FRAME)?;
    let text = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_X != 0)
        .map(|p| p.p_vaddr..p.p_vaddr + p.p_memsz)
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))?;
    let hdr_svma = hdr.p_vaddr..hdr.p_vaddr + hdr.p_memsz;
    let hdr_bytes =
        std::slice::from_raw_parts((base + hdr.p_vaddr) as *const u8, hdr.p_memsz as usize);
    if hdr_bytes.len() < 8 || hdr_bytes[0] != 1 {
        return None;
    }
    let encoding = hdr_bytes[1];
    let field = (base + hdr.p_vaddr + 4) as u64;
    let value = match encoding & 0x0f {
        DW_EH_PE_ABSPTR if hdr_bytes.len() >= 12 => {
            u64::from_ne_bytes(hdr_bytes[4..12].try_into().ok()?)
        }
        DW_EH_PE_UDATA4 => u32::from_ne_bytes(hdr_bytes[4..8].try_into().ok()?) as u64,
        DW_EH_PE_SDATA4 => i32::from_ne_bytes(hdr_bytes[4..8].try_into().ok()?) as i64 as u64,
        DW_EH_PE_SDATA8 if hdr_bytes.len() >= 12 => {
            u64::from_ne_bytes(hdr_bytes[4..12].try_into().ok()?)
        }
        _ => return None,
    };
    let eh_frame_avma = match encoding & 0x70 {
        DW_EH_PE_PCREL => field.wrapping_add(value),
        0 => value,
        _ => return None,
    };
    // The table runs at most to the end of the segment that holds it.
    let eh_frame_svma_start = eh_frame_avma.checked_sub(base)?;
    let segment = phdrs.iter().find(|p| {
        p.p_type == libc::PT_LOAD
            && (p.p_vaddr..p.p_vaddr + p.p_filesz).contains(&eh_frame_svma_start)
    })?;
    let eh_frame_len = (segment.p_vaddr + segment.p_filesz - eh_frame_svma_start) as usize;
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        CStr::from_ptr(info.dlpi_name)
            .to_string_lossy()
            .into_owned()
    };
    Some(Found {
        name,
        base,
        text,
        eh_frame_hdr_svma: hdr_svma,
        eh_frame_hdr: Mapped(hdr_bytes),
        eh_frame_svma: eh_frame_svma_start..eh_frame_svma_start + eh_frame_len as u64,
        eh_frame: Mapped(std::slice::from_raw_parts(
            eh_frame_avma as *const u8,
            eh_frame_len,
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn three(out: &mut [u64]) -> usize {
        let n = capture(out);
        std::hint::black_box(n)
    }
    #[inline(never)]
    fn two(out: &mut [u64]) -> usize {
        std::hint::black_box(three(out))
    }
    #[inline(never)]
    fn one(out: &mut [u64]) -> usize {
        std::hint::black_box(two(out))
    }

    #[test]
    fn a_frame_in_no_objects_code_is_unknown() {
        let engine = Engine {
            unwinder: Unwinding::new(),
            code: vec![0x1000..0x2000, 0x5000..0x6000],
        };
        assert!(engine.knows(0x1000) && engine.knows(0x1fff) && engine.knows(0x5800));
        assert!(!engine.knows(0x0fff) && !engine.knows(0x2000) && !engine.knows(0x7000));
    }

    #[test]
    fn unwinds_through_functions_without_frame_pointers() {
        // A start meanwhile would make this test's own object the engine's, whose frames are
        // left out of every stack: the engine's tests' turn.
        let _turn = super::super::tests::TURN
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // The truth: each return address lies just after the start of the function that
        // called (these are a few dozen bytes each), in call order.
        prepare(0);
        let mut out = [0u64; 64];
        let n = one(&mut out);
        // Which of the three each frame lies in: the nearest start below it.
        let starts = [
            three as *const () as u64,
            two as *const () as u64,
            one as *const () as u64,
        ];
        let owner = |address: u64| {
            (0..3)
                .filter(|&k| starts[k] < address && address - starts[k] < 512)
                .min_by_key(|&k| address - starts[k])
        };
        let order: Vec<usize> = out[..n].iter().filter_map(|&a| owner(a)).collect();
        let mut calls = order.clone();
        calls.dedup();
        // (The test function itself may follow `one` closely enough to look like it.)
        assert_eq!(
            calls.get(..3),
            Some(&[0, 1, 2][..]),
            "frames {:x?} starts {starts:x?}",
            &out[..n]
        );
        assert!(n > 4, "the walk stopped at the test itself: {n} frames");
    }
}
