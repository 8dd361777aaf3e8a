//! The engine in this test process, against planted allocations of known size, count and
//! function: a small C library (built here with the system's `cc`, frame pointers omitted, full
//! RELRO) allocates through its own imports, as a JNI library does.

use super::*;
use crate::profile::parse::{self, HeapDump};
use crate::profile::unbias::unbias;
use std::ffi::{c_char, c_int, c_long, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The engine is one per process: its tests take turns (and so does the unwinder's, whose own
/// code range a start sets).
pub(super) static TURN: Mutex<()> = Mutex::new(());

/// This test's turn and the planted libraries; None (the test is skipped, saying why) when
/// this machine has no C compiler.
fn turn_with_plants() -> Option<(
    std::sync::MutexGuard<'static, ()>,
    &'static (PathBuf, PathBuf),
)> {
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    match plants() {
        Some(paths) => Some((turn, paths)),
        None => {
            eprintln!("skipped: no C compiler (cc) to build the planted library");
            None
        }
    }
}

const PLANT_C: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *kept[1 << 16];
__attribute__((noinline)) void plant_blocks(int n, size_t size) {
    for (int i = 0; i < n; i++) kept[i] = malloc(size);
    __asm__ volatile("");
}
__attribute__((noinline)) void plant_outer(int n, size_t size) {
    plant_blocks(n, size);
    __asm__ volatile("");
}
void plant_free(int n) { for (int i = 0; i < n; i++) { free(kept[i]); kept[i] = 0; } }
void *plant_malloc(size_t s) { return malloc(s); }
void *plant_calloc(size_t n, size_t s) { return calloc(n, s); }
void *plant_realloc(void *p, size_t s) { return realloc(p, s); }
void *plant_aligned(size_t a, size_t s) { void *p = 0; return posix_memalign(&p, a, s) == 0 ? p : 0; }
void plant_release(void *p) { free(p); }
void *plant_dlopen(const char *path) { return dlopen(path, RTLD_NOW); }
int plant_dlclose(void *h) { return dlclose(h); }
long plant_getline(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t cap = 8;
    char *line = malloc(cap);
    long total = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) total += n;
    free(line);
    fclose(f);
    return total;
}
"#;

/// `source` compiled into a shared library per `(name, flags)` in a directory of this process's
/// named after `tag`; None when this machine has no C compiler. The target's C compiler when
/// cross-testing (aarch64-linux-gnu-gcc under qemu-user, build/cross-aarch64.sh), else the
/// machine's own.
fn c_libraries<const N: usize>(
    tag: &str,
    source: &str,
    libraries: [(&str, &[&str]); N],
) -> Option<[PathBuf; N]> {
    let dir = std::env::temp_dir().join(format!("nativemem-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let c = dir.join(format!("{tag}.c"));
    std::fs::write(&c, source).ok()?;
    let cc = std::env::var_os("NATIVEMEM_TEST_CC").unwrap_or_else(|| "cc".into());
    let mut built = Vec::with_capacity(N);
    for (name, flags) in libraries {
        let out = dir.join(name);
        let ok = std::process::Command::new(&cc)
            .args(["-O2", "-fPIC", "-shared", "-o"])
            .arg(&out)
            .arg(&c)
            .args(flags)
            .status()
            .is_ok_and(|s| s.success());
        built.push(ok.then_some(out)?);
    }
    built.try_into().ok()
}

/// `libplant.so` (full RELRO, bound now) and `liblater.so` (the same code, lazy binding),
/// built once; None when this machine has no C compiler.
fn plants() -> Option<&'static (PathBuf, PathBuf)> {
    static BUILT: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    const UNWIND: [&str; 2] = ["-fomit-frame-pointer", "-fasynchronous-unwind-tables"];
    BUILT
        .get_or_init(|| {
            let [plant, later] = c_libraries(
                "plant",
                PLANT_C,
                [
                    (
                        "libplant.so",
                        &[UNWIND[0], UNWIND[1], "-Wl,-z,relro,-z,now", "-ldl"],
                    ),
                    (
                        "liblater.so",
                        &[UNWIND[0], UNWIND[1], "-Wl,-z,lazy", "-ldl"],
                    ),
                ],
            )?;
            Some((plant, later))
        })
        .as_ref()
}

/// A loaded plant library and its functions.
struct Plant {
    handle: *mut c_void,
}

impl Plant {
    fn open(path: &Path) -> Plant {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW) };
        assert!(!handle.is_null(), "cannot load {}", path.display());
        Plant { handle }
    }

    fn symbol(&self, name: &CStr) -> usize {
        // SAFETY: a loaded handle and a NUL-terminated name.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) } as usize;
        assert_ne!(address, 0, "{name:?} not found");
        address
    }

    fn plant_outer(&self, n: c_int, size: usize) {
        let f: extern "C" fn(c_int, usize) =
            unsafe { std::mem::transmute(self.symbol(c"plant_outer")) };
        f(n, size)
    }

    fn plant_free(&self, n: c_int) {
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(self.symbol(c"plant_free")) };
        f(n)
    }

    fn malloc(&self, size: usize) -> *mut c_void {
        let f: extern "C" fn(usize) -> *mut c_void =
            unsafe { std::mem::transmute(self.symbol(c"plant_malloc")) };
        f(size)
    }

    fn calloc(&self, n: usize, size: usize) -> *mut c_void {
        let f: extern "C" fn(usize, usize) -> *mut c_void =
            unsafe { std::mem::transmute(self.symbol(c"plant_calloc")) };
        f(n, size)
    }

    fn realloc(&self, block: *mut c_void, size: usize) -> *mut c_void {
        let f: extern "C" fn(*mut c_void, usize) -> *mut c_void =
            unsafe { std::mem::transmute(self.symbol(c"plant_realloc")) };
        f(block, size)
    }

    fn aligned(&self, align: usize, size: usize) -> *mut c_void {
        let f: extern "C" fn(usize, usize) -> *mut c_void =
            unsafe { std::mem::transmute(self.symbol(c"plant_aligned")) };
        f(align, size)
    }

    fn free(&self, block: *mut c_void) {
        let f: extern "C" fn(*mut c_void) =
            unsafe { std::mem::transmute(self.symbol(c"plant_release")) };
        f(block)
    }

    fn dlopen(&self, path: &Path) -> *mut c_void {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let f: extern "C" fn(*const c_char) -> *mut c_void =
            unsafe { std::mem::transmute(self.symbol(c"plant_dlopen")) };
        f(c.as_ptr())
    }

    fn dlclose(&self, handle: *mut c_void) -> c_int {
        let f: extern "C" fn(*mut c_void) -> c_int =
            unsafe { std::mem::transmute(self.symbol(c"plant_dlclose")) };
        f(handle)
    }

    fn getline(&self, path: &Path) -> c_long {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let f: extern "C" fn(*const c_char) -> c_long =
            unsafe { std::mem::transmute(self.symbol(c"plant_getline")) };
        f(c.as_ptr())
    }
}

unsafe impl Send for Plant {}
unsafe impl Sync for Plant {}

/// The dump of the live samples, read back by the analysis's reader.
fn live_dump() -> HeapDump {
    let mut text = Vec::new();
    write_dump(&mut text).unwrap();
    parse::parse(Path::new("engine.heap"), &text[..]).unwrap()
}

/// The function a return address lies in, from the object's dynamic symbols.
fn function_of(address: u64) -> String {
    // SAFETY: dladdr only fills `info` for an address in a loaded object.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr((address - 1) as *const c_void, &mut info) == 0 || info.dli_sname.is_null()
        {
            return String::new();
        }
        CStr::from_ptr(info.dli_sname)
            .to_string_lossy()
            .into_owned()
    }
}

/// Unbiased bytes of the stacks whose frames name `function`, as jeprof would count them.
fn unbiased_bytes_under(dump: &HeapDump, function: &str) -> f64 {
    dump.stacks
        .iter()
        .filter(|s| s.addresses.iter().any(|&a| function_of(a) == function))
        .map(|s| unbias(s.counts.objects, s.counts.bytes, dump.sample_interval).1)
        .sum()
}

#[test]
fn planted_blocks_are_attributed_to_their_function_within_ten_percent() {
    let Some((_turn, (plant_path, _))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    start(4096).unwrap();
    // 3,000 blocks of 7,168 bytes (a zlib inflate state's size): 21,504,000 B planted.
    let (count, size) = (3000, 7168usize);
    plant.plant_outer(count, size);
    let truth = (count as usize * size) as f64;
    let dump = live_dump();
    let estimate = unbiased_bytes_under(&dump, "plant_blocks");
    assert!(
        (estimate - truth).abs() <= truth * 0.10,
        "estimated {estimate:.0} B under plant_blocks, planted {truth} B"
    );
    // Unwound without frame pointers: plant_blocks, then its caller plant_outer.
    let stack = dump
        .stacks
        .iter()
        .find(|s| {
            s.addresses
                .iter()
                .any(|&a| function_of(a) == "plant_blocks")
        })
        .unwrap();
    let names: Vec<String> = stack.addresses.iter().map(|&a| function_of(a)).collect();
    let blocks = names.iter().position(|n| n == "plant_blocks").unwrap();
    assert_eq!(
        names.get(blocks + 1).map(String::as_str),
        Some("plant_outer"),
        "{names:?}"
    );
    // Freed: the live estimate falls back to nothing under that function.
    plant.plant_free(count);
    let after = unbiased_bytes_under(&live_dump(), "plant_blocks");
    stop();
    assert!(
        after < truth * 0.01,
        "{after:.0} B left after every block was freed"
    );
}

#[test]
fn every_allocation_entry_is_sampled_at_interval_one_and_realloc_moves_the_sample() {
    let Some((_turn, (plant_path, _))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    start(1).unwrap();
    let before = status().live_samples;
    let a = plant.malloc(100);
    let b = plant.calloc(10, 30);
    let c = plant.aligned(4096, 5000);
    assert_eq!(status().live_samples - before, 3);
    assert_eq!(status().live_sampled_bytes, 100 + 300 + 5000);
    let a2 = plant.realloc(a, 20_000);
    assert_eq!(status().live_samples - before, 3);
    assert_eq!(status().live_sampled_bytes, 20_000 + 300 + 5000);
    // What users read (`SamplingStatus`): the same figures, and memory within what is reserved.
    let shown = crate::sampling::status().unwrap();
    assert_eq!((shown.engine.as_str(), shown.active), (ENGINE, true));
    assert_eq!(shown.live_sampled_bytes, 20_000 + 300 + 5000);
    assert!(shown.hooked_entries > 0, "{shown:?}");
    assert!(
        shown.table_resident_bytes > 0 && shown.table_resident_bytes <= shown.table_reserved_bytes,
        "{shown:?}"
    );
    for block in [a2, b, c] {
        plant.free(block);
    }
    assert_eq!(
        (status().live_samples, status().live_sampled_bytes),
        (before, 0)
    );
    stop();
}

#[test]
fn a_library_loaded_after_the_start_is_hooked_and_stop_restores_every_entry() {
    let Some((_turn, (plant_path, later_path))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    start(1).unwrap();
    let hooked = status().hooked_entries;
    assert!(hooked > 0);
    // Loaded by a hooked library's dlopen (as System.load does through libjvm).
    let handle = plant.dlopen(later_path);
    assert!(!handle.is_null());
    let later = Plant { handle };
    assert!(status().hooked_entries > hooked, "{:?}", status());
    let block = later.malloc(333);
    assert!(status().live_sampled_bytes >= 333);
    later.free(block);
    let samples = status().samples;
    let stopped = stop();
    assert_eq!(stopped.hooked_entries, 0, "{stopped:?}");
    // Unhooked: nothing more is sampled, and the libraries work as before.
    let block = plant.malloc(1000);
    let block2 = later.malloc(1000);
    plant.free(block);
    later.free(block2);
    assert_eq!(status().samples, samples);
    assert_eq!(plant.dlclose(later.handle), 0);
}

/// As zstd-jni does: a library extracted to the temp directory, loaded, and deleted at once.
/// The descriptor kept after its `dlopen` returned still reads the whole file, for a sidecar
/// written by a user who cannot open `/proc/self/map_files`.
#[test]
fn a_library_deleted_right_after_its_dlopen_stays_readable_through_its_kept_descriptor() {
    use std::io::Read;
    let Some((_turn, (plant_path, later_path))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    let dir = std::env::temp_dir().join(format!("nativemem-extracted-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let extracted = dir.join("libextracted-1.5.so");
    std::fs::copy(later_path, &extracted).unwrap();
    let bytes = std::fs::read(&extracted).unwrap();
    start(4096).unwrap();
    let handle = plant.dlopen(&extracted);
    assert!(!handle.is_null());
    std::fs::remove_file(&extracted).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let object = crate::sampling::maps::executable_objects(&maps)
        .into_iter()
        .find(|o| Path::new(&o.path) == extracted)
        .expect("the extracted library mapped");
    assert!(object.deleted, "{object:?}");
    let kept = crate::sampling::kept::kept(&object);
    stop();
    let mut read = Vec::new();
    kept.expect("a descriptor kept after the dlopen")
        .read_to_end(&mut read)
        .unwrap();
    assert!(read == bytes, "the kept descriptor reads another file");
    assert_eq!(plant.dlclose(handle), 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// What [`probe_between_writes`] knows and found: each plant's path with the offsets of its
/// `plant_malloc`, `plant_realloc` and `plant_release`; the writes it ran after, by plant; and
/// the samples it found left for blocks gone.
struct Probe {
    plants: Vec<(PathBuf, [usize; 3])>,
    writes: Vec<usize>,
    left: Vec<String>,
}

static PROBE: Mutex<Option<Probe>> = Mutex::new(None);

/// The offset of a function a library exports, from its dynamic symbols.
fn exported(path: &Path, name: &str) -> usize {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let symbol = file
        .dynamic_symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("{name} not in {}", path.display()));
    symbol.address() as usize
}

/// Run by the walk after each entry it writes: when that entry is a plant's, a block is
/// allocated, reallocated and freed through the plant's imports as they are at that moment
/// (and, before recording is on, one allocated there is freed elsewhere), and no sample of
/// those addresses may be left. Never panics: it runs inside the loader's `dl_iterate_phdr`
/// callback.
fn probe_between_writes(object: &CStr, base: usize, import: &CStr) {
    let mut probe = PROBE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(probe) = probe.as_mut() else {
        return;
    };
    let Some(plant) = probe
        .plants
        .iter()
        .position(|(path, _)| path.as_os_str().as_encoded_bytes() == object.to_bytes())
    else {
        return;
    };
    let [malloc, realloc, release] = probe.plants[plant].1.map(|offset| base + offset);
    // SAFETY: the plant's own functions, at its load base plus their symbols' offsets.
    let (block, moved, elsewhere) = unsafe {
        let malloc: extern "C" fn(usize) -> *mut c_void = std::mem::transmute(malloc);
        let realloc: extern "C" fn(*mut c_void, usize) -> *mut c_void =
            std::mem::transmute(realloc);
        let release: extern "C" fn(*mut c_void) = std::mem::transmute(release);
        let block = malloc(100);
        let moved = realloc(block, 5000);
        release(moved);
        // Until a start's walk is done, a block allocated here may be freed through an object
        // it has not reached yet, whose `free` is the real one still: libc's stands for it.
        let elsewhere = (!RECORDING.load(Ordering::SeqCst)).then(|| {
            let elsewhere = malloc(200);
            libc::free(elsewhere);
            elsewhere as usize
        });
        (block as usize, moved as usize, elsewhere)
    };
    probe.writes[plant] += 1;
    if let Some(tables) = tables() {
        tables.live.for_each(|address, sample| {
            if address == block || address == moved || Some(address) == elsewhere {
                probe.left.push(format!(
                    "after {import:?} of {object:?}: a sample of {} B at {address:#x}, freed",
                    sample.size
                ));
            }
        });
    }
}

#[test]
fn no_sample_outlives_its_block_while_the_imports_are_rewritten_one_by_one() {
    let Some((_turn, (plant_path, later_path))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    let offsets = |path: &Path| {
        ["plant_malloc", "plant_realloc", "plant_release"].map(|name| exported(path, name))
    };
    *PROBE.lock().unwrap() = Some(Probe {
        plants: vec![
            (plant_path.clone(), offsets(plant_path)),
            (later_path.clone(), offsets(later_path)),
        ],
        writes: vec![0, 0],
        left: Vec::new(),
    });
    *imports::BETWEEN_WRITES.lock().unwrap() = Some(probe_between_writes);
    // Every allocation sampled: the plant's entries rewritten by the start, then (recording)
    // those of a library loaded meanwhile, then both restored by the stop.
    start(1).unwrap();
    let handle = plant.dlopen(later_path);
    assert!(!handle.is_null());
    stop();
    *imports::BETWEEN_WRITES.lock().unwrap() = None;
    let probe = PROBE.lock().unwrap().take().unwrap();
    assert_eq!(plant.dlclose(handle), 0);
    // free, realloc, malloc, calloc, posix_memalign, dlopen and dlclose: hooked and restored.
    assert!(
        probe.writes.iter().all(|&writes| writes >= 14),
        "writes probed in each plant: {:?}",
        probe.writes
    );
    assert!(probe.left.is_empty(), "{:#?}", probe.left);
}

#[test]
fn threads_churning_with_start_and_stop_end_back_at_the_baseline() {
    let Some((_turn, (plant_path, later_path))) = turn_with_plants() else {
        return;
    };
    let plant = std::sync::Arc::new(Plant::open(plant_path));
    let lines = std::env::temp_dir().join(format!("nativemem-lines-{}", std::process::id()));
    std::fs::write(&lines, "x".repeat(300) + "\n" + &"y".repeat(5000) + "\n").unwrap();
    let stop_flag = std::sync::Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let (plant, stop_flag, lines, later) = (
                plant.clone(),
                stop_flag.clone(),
                lines.clone(),
                later_path.clone(),
            );
            std::thread::spawn(move || {
                let mut round = 0usize;
                while !stop_flag.load(Ordering::Relaxed) {
                    // Short-lived threads, too.
                    let plant2 = plant.clone();
                    std::thread::spawn(move || {
                        let mut held = Vec::new();
                        for i in 0..200 {
                            let block = plant2.malloc(16 + (i * 37) % 9000);
                            held.push(plant2.realloc(block, 64 + (i * 91) % 20000));
                        }
                        for block in held {
                            plant2.free(block);
                        }
                    })
                    .join()
                    .unwrap();
                    assert!(plant.getline(&lines) > 5000);
                    if t == 0 && round % 8 == 0 {
                        let handle = plant.dlopen(&later);
                        assert!(!handle.is_null());
                        plant.dlclose(handle);
                    }
                    round += 1;
                }
            })
        })
        .collect();
    for _ in 0..30 {
        start(4096).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        stop();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // A last run: the workers stop, everything they held is freed.
    start(4096).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    stop_flag.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().unwrap();
    }
    let end = status();
    stop();
    std::fs::remove_file(&lines).ok();
    assert!(end.samples > 0, "{end:?}");
    // getline's first buffer (8 bytes) grows inside libc, a realloc no hook sees: its sample
    // stays until the address is sampled again or freed through a hook. Nothing else may stay.
    let mut left = Vec::new();
    if let Some(tables) = tables() {
        tables.live.for_each(|_, block| left.push(block.size));
    }
    assert!(
        left.iter().all(|&size| size == 8),
        "left: {left:?} ({end:?})"
    );
}

#[test]
fn a_dump_with_its_sidecar_is_read_by_the_analysis_with_the_planted_bytes_under_their_function() {
    let Some((_turn, (plant_path, _))) = turn_with_plants() else {
        return;
    };
    let plant = Plant::open(plant_path);
    start(4096).unwrap();
    let (count, size) = (2000, 10_000usize);
    plant.plant_outer(count, size);
    let dir = std::env::temp_dir().join(format!("nativemem-engine-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("app.heap");
    let request = crate::sampling::DumpRequest {
        target: target.clone(),
        save_from: vec![plant_path.parent().unwrap().to_owned()],
        perf_map: None,
    };
    let dumped =
        crate::sampling::dump::dump_from(&request, || Ok(crate::sampling::dump::Source::Imports));
    plant.plant_free(count);
    stop();
    let dumped = dumped.unwrap();
    assert!(Path::new(&dumped.symbols_dir)
        .join("symbols.json")
        .is_file());
    // The analysis names the function from the saved object's own symbol table.
    let analysis = crate::profile::Analysis::open(&target, None).unwrap();
    let report = analysis.report(50);
    let site = report
        .top_cumulative
        .iter()
        .find(|s| s.name.contains("plant_blocks"))
        .unwrap_or_else(|| panic!("no plant_blocks in {:?}", report.top_cumulative));
    let truth = (count as usize * size) as f64;
    assert!(
        (site.cumulative_bytes as f64 - truth).abs() <= truth * 0.10,
        "{} B under plant_blocks, planted {truth} B",
        site.cumulative_bytes
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Stands for another copy of nativemem's library, as an attach command's class loader loads
/// one beside the application's: it exports nativemem's JNI entry point and has hooks of its
/// own (here they only pass the call on). Built twice: as `libnativemem-other.so`, and without
/// the entry point as `libwrapper.so`, an object that wraps `malloc` and is not nativemem.
const OTHER_COPY_C: &str = r#"
#include <stdlib.h>
#ifdef NATIVEMEM
const char *Java_dev_nativemem_internal_NativeBridge_version(void *env, void *cls) { return 0; }
#endif
void *other_malloc(size_t s) { return malloc(s); }
void other_free(void *p) { free(p); }
"#;

/// `libnativemem-other.so` and `libwrapper.so` ([`OTHER_COPY_C`]), built once beside the plants.
fn other_objects() -> Option<&'static (PathBuf, PathBuf)> {
    static BUILT: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let relro: &[&str] = &["-Wl,-z,relro,-z,now"];
            let [other, wrapper] = c_libraries(
                "other",
                OTHER_COPY_C,
                [
                    ("libnativemem-other.so", &[relro[0], "-DNATIVEMEM"]),
                    ("libwrapper.so", relro),
                ],
            )?;
            Some((other, wrapper))
        })
        .as_ref()
}

/// Points the `free` and `malloc` entries of every object but ours and `object`'s at `object`'s
/// `other_free` and `other_malloc`, as another engine's start does, with this engine's own
/// rewriting; [`OtherHooks::remove`] points them at libc's again.
struct OtherHooks {
    imports: [Import; 2],
    skip: Skip,
}

impl OtherHooks {
    fn install(object: &Plant) -> OtherHooks {
        let imports = [
            Import {
                name: c"free",
                hook: object.symbol(c"other_free"),
            },
            Import {
                name: c"malloc",
                hook: object.symbol(c"other_malloc"),
            },
        ];
        // Its own imports stay libc's: its hooks call through them.
        let skip = Skip::holding(&[own_address(), imports[1].hook]);
        let done = imports::hook_all(&imports, &skip);
        assert!(done.entries > 0, "{done:?}");
        OtherHooks { imports, skip }
    }

    /// Whether some entry holds this object's `other_malloc` now.
    fn in_place(&self) -> bool {
        let malloc = [Import {
            name: c"malloc",
            hook: 0,
        }];
        imports::targets(&malloc, &self.skip).contains(&self.imports[1].hook)
    }

    /// Every entry back at libc's function, and forgotten: the engine's own stop may have
    /// restored these hooks after its record of them was cleared.
    fn remove(self) {
        let real = [
            Import {
                name: c"free",
                hook: hooks::REAL.free.load(Ordering::Acquire),
            },
            Import {
                name: c"malloc",
                hook: hooks::REAL.malloc.load(Ordering::Acquire),
            },
        ];
        assert!(real.iter().all(|i| i.hook != 0));
        imports::hook_all(&real, &self.skip);
        imports::restore_all(&[], &self.skip);
    }
}

#[test]
fn another_copys_engine_refuses_the_start_naming_it_and_status_says_why() {
    let Some((_turn, (plant_path, _))) = turn_with_plants() else {
        return;
    };
    let Some((other_path, _)) = other_objects() else {
        return;
    };
    let plant = Plant::open(plant_path);
    let other = Plant::open(other_path);
    let hooks = OtherHooks::install(&other);
    assert!(hooks.in_place());
    // The plant allocates through the other copy's hooks now.
    plant.free(plant.malloc(100));
    let refused = start(1);
    let shown = crate::sampling::status().unwrap();
    let active = is_active();
    hooks.remove();
    let refused = refused.expect_err("started on top of another copy's engine");
    assert!(!active, "the engine runs after its refusal");
    let said = refused.to_string();
    for part in [
        "another copy of nativemem",
        &other_path.display().to_string(),
        "NativeMemory.profiling()",
        "-javaagent:nativemem.jar",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    // Not "ready (inactive)": the status gives the same reason.
    assert!(!shown.available, "{shown:?}");
    assert_eq!(shown.unavailable_reason, said);
    // The other copy gone, this copy's engine starts, samples and stops.
    start(1).unwrap();
    let block = plant.malloc(1234);
    let sampled = status().live_sampled_bytes;
    plant.free(block);
    stop();
    assert!(sampled >= 1234, "{sampled}");
    assert!(crate::sampling::status().unwrap().available);
}

#[test]
fn the_engines_own_hooks_and_a_plain_malloc_wrapper_are_not_another_copy() {
    let Some((_turn, (plant_path, _))) = turn_with_plants() else {
        return;
    };
    let Some((_, wrapper_path)) = other_objects() else {
        return;
    };
    let plant = Plant::open(plant_path);
    // Our own hooks in place: what a start sees is ours.
    start(1).unwrap();
    assert_eq!(
        copies::another_copy(&imports(), &skip(), own_address()),
        None
    );
    assert!(crate::sampling::status().unwrap().available);
    // Stopped and started again, and again through a reset.
    stop();
    start(1).unwrap();
    reset(Some(1)).unwrap();
    assert!(is_active());
    stop();
    // An object that wraps malloc without being nativemem (a leak checker's) is no reason to
    // refuse: the engine starts on top of it, and the stop gives its entries back.
    let wrapper = Plant::open(wrapper_path);
    let hooks = OtherHooks::install(&wrapper);
    let started = start(1);
    let taken_over = !hooks.in_place();
    let block = plant.malloc(100);
    plant.free(block);
    stop();
    let given_back = hooks.in_place();
    hooks.remove();
    started.unwrap();
    assert!(taken_over && given_back, "{taken_over} {given_back}");
}
