//! Import rewriting: the GOT entries (`JUMP_SLOT`, `GLOB_DAT`) through which a loaded ELF object
//! calls the allocator, pointed at our hooks and back.
//!
//! Every object is walked with `dl_iterate_phdr`, and its entries are read and written inside
//! the walk's callback: the loader holds its list lock there, so an object being `dlclose`d is
//! either still listed and mapped, or gone. Read-only pages (RELRO) are made writable for the
//! write alone. Each entry changed is recorded with the value it held, and a restore writes that
//! value back wherever the entry still holds our hook.
//!
//! Other threads call through an object's entries while they are written, one at a time: each
//! object's entries are written in the order of the imports given, and restored in the reverse
//! order, so that the caller can choose which of its hooks are always in place when another is.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

/// One import to rewrite: its symbol name and our replacement.
#[derive(Clone, Copy)]
pub struct Import {
    pub name: &'static CStr,
    pub hook: usize,
}

/// An entry we changed, and what it held before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Changed {
    slot: usize,
    original: usize,
}

/// What one walk did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rewrite {
    /// Objects in which this walk changed at least one entry.
    pub objects: usize,
    /// Entries changed by this walk (entries already hooked are not counted again).
    pub entries: usize,
    /// Entries restored by this walk.
    pub restored: usize,
}

/// Every entry changed and not restored yet.
static CHANGED: Mutex<Vec<Changed>> = Mutex::new(Vec::new());

/// Objects whose imports are never rewritten: the ones that serve the allocator and the loader
/// (their calls stay internal), ours, and the kernel's vDSO.
pub struct Skip {
    /// Load bases (`dlpi_addr`) of objects to leave alone.
    pub bases: Vec<usize>,
}

impl Skip {
    /// The objects that hold `addresses` (our hook, the real `malloc`, the loader's entry).
    pub fn holding(addresses: &[usize]) -> Skip {
        let bases = addresses
            .iter()
            .filter_map(|&address| {
                // SAFETY: dladdr only fills `info` for an address in a loaded object.
                unsafe {
                    let mut info: libc::Dl_info = std::mem::zeroed();
                    (libc::dladdr(address as *const c_void, &mut info) != 0)
                        .then_some(info.dli_fbase as usize)
                }
            })
            .collect();
        Skip { bases }
    }

    fn skips(&self, info: &libc::dl_phdr_info) -> bool {
        let name = name_of(info);
        // dli_fbase is the lowest mapped address; dlpi_addr the load bias. They agree for
        // shared objects linked at 0, which every library the skip list names is.
        self.bases.contains(&(info.dlpi_addr as usize))
            || self
                .bases
                .iter()
                .any(|&base| lowest_load(info) == Some(base))
            || is_loader_or_libc(name)
            || name.to_bytes().starts_with(b"linux-vdso")
            || name.to_bytes().starts_with(b"linux-gate")
    }
}

/// The names glibc's own objects have; never rewritten even if dladdr cannot place them.
fn is_loader_or_libc(name: &CStr) -> bool {
    let base = name
        .to_bytes()
        .rsplit(|&b| b == b'/')
        .next()
        .unwrap_or_default();
    base.starts_with(b"libc.so") || base.starts_with(b"ld-linux") || base.starts_with(b"ld64.so")
}

fn name_of(info: &libc::dl_phdr_info) -> &CStr {
    if info.dlpi_name.is_null() {
        c""
    } else {
        // SAFETY: the loader gives a NUL-terminated name that lives as long as the object.
        unsafe { CStr::from_ptr(info.dlpi_name) }
    }
}

fn phdrs(info: &libc::dl_phdr_info) -> &[libc::Elf64_Phdr] {
    if info.dlpi_phdr.is_null() {
        return &[];
    }
    // SAFETY: the loader gives `dlpi_phnum` program headers at `dlpi_phdr`, mapped with the object.
    unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) }
}

fn lowest_load(info: &libc::dl_phdr_info) -> Option<usize> {
    phdrs(info)
        .iter()
        .filter(|p| p.p_type == libc::PT_LOAD)
        .map(|p| info.dlpi_addr as usize + p.p_vaddr as usize)
        .min()
        .map(|a| a & !(page_size() - 1))
}

/// Called after each entry a walk changed, with the object's name and load base and the
/// import's name: a test acts there, between two writes of one walk.
#[cfg(test)]
pub type Probe = fn(object: &CStr, base: usize, import: &CStr);

#[cfg(test)]
pub static BETWEEN_WRITES: Mutex<Option<Probe>> = Mutex::new(None);

#[cfg(test)]
fn between_writes(info: &libc::dl_phdr_info, import: &CStr) {
    if let Some(probe) = *BETWEEN_WRITES.lock().unwrap_or_else(|p| p.into_inner()) {
        probe(name_of(info), info.dlpi_addr as usize, import);
    }
}

#[cfg(not(test))]
#[inline(always)]
fn between_writes(_: &libc::dl_phdr_info, _: &CStr) {}

/// Points every import of `imports` in every object not skipped at its hook, each object's
/// entries in the order of `imports`.
pub fn hook_all(imports: &[Import], skip: &Skip) -> Rewrite {
    walk(imports, skip, Mode::Hook)
}

/// Writes back every entry that still holds one of `imports`' hooks, in objects still loaded,
/// each object's entries in the reverse order of `imports`; forgets the entries of objects
/// that are gone.
pub fn restore_all(imports: &[Import], skip: &Skip) -> Rewrite {
    walk(imports, skip, Mode::Restore)
}

/// What the entries of `imports` in every object not skipped point at now, other than the
/// imports' own hooks: each distinct address once. Read inside the walk, as a rewrite reads them;
/// nothing is written.
pub fn targets(imports: &[Import], skip: &Skip) -> Vec<usize> {
    let mut walk = Walk {
        imports,
        skip,
        mode: Mode::Read,
        done: Rewrite::default(),
        changed: CHANGED.lock().unwrap_or_else(|p| p.into_inner()),
        targets: Vec::new(),
    };
    walk.run();
    walk.targets
}

fn walk(imports: &[Import], skip: &Skip, mode: Mode) -> Rewrite {
    let mut walk = Walk {
        imports,
        skip,
        mode,
        done: Rewrite::default(),
        changed: CHANGED.lock().unwrap_or_else(|p| p.into_inner()),
        targets: Vec::new(),
    };
    walk.run();
    if mode == Mode::Restore {
        walk.changed.clear();
    }
    walk.done
}

/// Entries currently recorded as changed.
pub fn changed_entries() -> usize {
    CHANGED.lock().unwrap_or_else(|p| p.into_inner()).len()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Hook,
    Restore,
    /// Only reads the entries' targets ([`targets`]).
    Read,
}

struct Walk<'a> {
    imports: &'a [Import],
    skip: &'a Skip,
    mode: Mode,
    done: Rewrite,
    changed: std::sync::MutexGuard<'static, Vec<Changed>>,
    /// What the entries read point at ([`Mode::Read`]).
    targets: Vec<usize>,
}

impl Walk<'_> {
    fn run(&mut self) {
        // SAFETY: the callback gets `self` back as its data pointer, for the walk's duration.
        unsafe {
            libc::dl_iterate_phdr(Some(each_object), self as *mut Walk as *mut c_void);
        }
    }

    /// # Safety
    /// `info` describes a loaded object, and the loader's list lock is held (inside the walk).
    unsafe fn object(&mut self, info: &libc::dl_phdr_info) {
        if self.skip.skips(info) {
            return;
        }
        let Some(dynamic) = Dynamic::of(info) else {
            return;
        };
        let relro = relro_range(info);
        // (rank in `imports`, entry, hook), written in rank order: ascending for a hook,
        // descending for a restore (a sort by rank alone keeps the relocations' order within it).
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for table in [dynamic.jmprel, dynamic.rela] {
            let Some((start, size)) = table else {
                continue;
            };
            let count = size / std::mem::size_of::<libc::Elf64_Rela>();
            let relas = std::slice::from_raw_parts(start as *const libc::Elf64_Rela, count);
            for rela in relas {
                let kind = (rela.r_info & 0xffff_ffff) as u32;
                if kind != R_JUMP_SLOT && kind != R_GLOB_DAT {
                    continue;
                }
                let symbol = (rela.r_info >> 32) as usize;
                let Some(name) = dynamic.symbol_name(symbol) else {
                    continue;
                };
                let Some(rank) = self.imports.iter().position(|i| i.name == name) else {
                    continue;
                };
                let slot = info.dlpi_addr as usize + rela.r_offset as usize;
                found.push((rank, slot, self.imports[rank].hook));
            }
        }
        match self.mode {
            Mode::Hook => found.sort_by_key(|&(rank, _, _)| rank),
            Mode::Restore => found.sort_by_key(|&(rank, _, _)| std::cmp::Reverse(rank)),
            Mode::Read => {}
        }
        let mut touched = false;
        for (rank, slot, hook) in found {
            let changed = self.entry(slot, hook, relro);
            if changed {
                between_writes(info, self.imports[rank].name);
            }
            touched |= changed;
        }
        if touched {
            self.done.objects += 1;
        }
    }

    /// Rewrites or restores one entry; true when this call changed it.
    unsafe fn entry(&mut self, slot: usize, hook: usize, relro: Option<(usize, usize)>) -> bool {
        let current = std::ptr::read_volatile(slot as *const usize);
        match self.mode {
            Mode::Hook => {
                if current == hook {
                    return false;
                }
                if write_entry(slot, hook, relro) {
                    self.changed.push(Changed {
                        slot,
                        original: current,
                    });
                    self.done.entries += 1;
                    return true;
                }
                false
            }
            Mode::Restore => {
                if current != hook {
                    return false;
                }
                let Some(original) = self
                    .changed
                    .iter()
                    .rev()
                    .find(|c| c.slot == slot)
                    .map(|c| c.original)
                else {
                    return false;
                };
                let written = write_entry(slot, original, relro);
                if written {
                    self.done.restored += 1;
                }
                written
            }
            Mode::Read => {
                if current != hook && current != 0 && !self.targets.contains(&current) {
                    self.targets.push(current);
                }
                false
            }
        }
    }
}

unsafe extern "C" fn each_object(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    if let (Some(info), Some(walk)) = (info.as_ref(), (data as *mut Walk).as_mut()) {
        walk.object(info);
    }
    0
}

#[cfg(target_arch = "x86_64")]
const R_GLOB_DAT: u32 = 6;
#[cfg(target_arch = "x86_64")]
const R_JUMP_SLOT: u32 = 7;
#[cfg(target_arch = "aarch64")]
const R_GLOB_DAT: u32 = 1025;
#[cfg(target_arch = "aarch64")]
const R_JUMP_SLOT: u32 = 1026;

const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_STRSZ: i64 = 10;
const DT_JMPREL: i64 = 23;
/// Bounds a dynamic section that has no `DT_NULL` where it should.
const MAX_DYNAMIC_ENTRIES: usize = 4096;

/// An entry of the dynamic section (`Elf64_Dyn`).
#[repr(C)]
struct Elf64Dyn {
    d_tag: i64,
    d_un: u64,
}

/// What the dynamic section says about an object's relocations and symbols.
struct Dynamic {
    strtab: usize,
    strsz: usize,
    symtab: usize,
    jmprel: Option<(usize, usize)>,
    rela: Option<(usize, usize)>,
}

impl Dynamic {
    unsafe fn of(info: &libc::dl_phdr_info) -> Option<Dynamic> {
        let base = info.dlpi_addr as usize;
        let phdr = phdrs(info).iter().find(|p| p.p_type == libc::PT_DYNAMIC)?;
        let entries = (base + phdr.p_vaddr as usize) as *const Elf64Dyn;
        let (mut strtab, mut strsz, mut symtab) = (0, 0, 0);
        let (mut jmprel, mut pltrelsz, mut rela, mut relasz) = (0, 0, 0, 0);
        for i in 0..MAX_DYNAMIC_ENTRIES {
            let entry = &*entries.add(i);
            let value = entry.d_un as usize;
            match entry.d_tag {
                DT_NULL => break,
                DT_STRTAB => strtab = value,
                DT_STRSZ => strsz = value,
                DT_SYMTAB => symtab = value,
                DT_JMPREL => jmprel = value,
                DT_PLTRELSZ => pltrelsz = value,
                DT_RELA => rela = value,
                DT_RELASZ => relasz = value,
                _ => {}
            }
        }
        // glibc relocates these addresses in place when the section is writable; the vDSO's
        // and some others' keep them relative to the load base.
        let absolute = |address: usize| {
            if address != 0 && address < base {
                address + base
            } else {
                address
            }
        };
        if strtab == 0 || symtab == 0 {
            return None;
        }
        let table = |address: usize, size: usize| {
            (address != 0 && size != 0).then_some((absolute(address), size))
        };
        Some(Dynamic {
            strtab: absolute(strtab),
            strsz,
            symtab: absolute(symtab),
            jmprel: table(jmprel, pltrelsz),
            rela: table(rela, relasz),
        })
    }

    unsafe fn symbol_name(&self, index: usize) -> Option<&CStr> {
        let symbol = &*(self.symtab as *const libc::Elf64_Sym).add(index);
        let offset = symbol.st_name as usize;
        if offset == 0 || (self.strsz != 0 && offset >= self.strsz) {
            return None;
        }
        Some(CStr::from_ptr((self.strtab + offset) as *const c_char))
    }
}

/// `[start, end)` of the pages the loader made read-only for RELRO: as glibc's
/// `_dl_protect_relro`, both ends rounded down (the last, partial page stays writable).
fn relro_range(info: &libc::dl_phdr_info) -> Option<(usize, usize)> {
    let page = page_size();
    phdrs(info)
        .iter()
        .find(|p| p.p_type == libc::PT_GNU_RELRO)
        .map(|p| {
            let start = info.dlpi_addr as usize + p.p_vaddr as usize;
            let end = start + p.p_memsz as usize;
            (start & !(page - 1), end & !(page - 1))
        })
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// Writes `value` into the entry at `slot`; a slot under RELRO is made writable for the write
/// alone and read-only again after it.
unsafe fn write_entry(slot: usize, value: usize, relro: Option<(usize, usize)>) -> bool {
    let protected = relro.is_some_and(|(start, end)| (start..end).contains(&slot));
    let page = slot & !(page_size() - 1);
    if protected
        && libc::mprotect(
            page as *mut c_void,
            page_size(),
            libc::PROT_READ | libc::PROT_WRITE,
        ) != 0
    {
        return false;
    }
    // Other threads call through the entry meanwhile: one aligned word-sized store, so they
    // see the old target or the new one, never a torn pointer.
    let atomic = &*(slot as *const std::sync::atomic::AtomicUsize);
    atomic.store(value, std::sync::atomic::Ordering::SeqCst);
    if protected {
        libc::mprotect(page as *mut c_void, page_size(), libc::PROT_READ);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_objects_are_recognized_by_name() {
        assert!(is_loader_or_libc(c"/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(is_loader_or_libc(c"/lib64/ld-linux-x86-64.so.2"));
        assert!(is_loader_or_libc(c"/lib/ld-linux-aarch64.so.1"));
        assert!(!is_loader_or_libc(c"/usr/lib/libcrypto.so.3"));
        assert!(!is_loader_or_libc(c"/tmp/librocksdbjni123.so"));
    }
}
