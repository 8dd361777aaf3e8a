//! This test binary links the crate, so its own `malloc` is the wrapper: every allocation below
//! goes through `conf::ensure` and the prefixed jemalloc, and tikv-jemalloc-ctl reads that same
//! jemalloc.

use crate::conf;
use std::ffi::CString;
use std::process::Command;
use tikv_jemalloc_ctl::{opt, raw};

fn read_bool(key: &str) -> bool {
    let key = CString::new(key).unwrap();
    unsafe { raw::read::<bool>(key.as_bytes_with_nul()) }.unwrap()
}

/// Runs one test of this binary in a child process with extra environment.
fn child(test: &str, env: &[(&str, &str)]) -> String {
    child_of(&std::env::current_exe().unwrap(), test, env)
}

/// Runs one test of `exe` (a copy of this binary) in a child process with extra environment;
/// through `NATIVEMEM_TEST_RUNNER` when set (qemu-user for another architecture's build, which
/// the kernel cannot start by itself unless binfmt_misc is set up).
fn child_of(exe: &std::path::Path, test: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = match std::env::var_os("NATIVEMEM_TEST_RUNNER") {
        Some(runner) => {
            let mut cmd = Command::new(runner);
            cmd.arg(exe);
            cmd
        }
        None => Command::new(exe),
    };
    cmd.args(["--exact", test, "--nocapture", "--include-ignored"])
        .env_remove("MALLOC_CONF")
        .env_remove("_RJEM_MALLOC_CONF")
        .env("NATIVEMEM_JEMALLOC_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Prints what jemalloc started with; run in children by the tests below.
#[test]
#[ignore = "run by other tests in a child process"]
fn report_options() {
    if std::env::var_os("NATIVEMEM_JEMALLOC_CHILD").is_none() {
        return;
    }
    println!("narenas={}", opt::narenas::read().unwrap());
    println!("prof={}", read_bool("opt.prof"));
    println!("prof_active={}", read_bool("opt.prof_active"));
    println!("lg_prof_sample={}", read_usize("opt.lg_prof_sample"));
    println!("dirty_decay_ms={}", read_i64("opt.dirty_decay_ms"));
    println!("background_thread={}", read_bool("opt.background_thread"));
    println!("malloc_conf={}", configured_string());
}

extern "C" {
    /// The string jemalloc read its options from (5.3.0 has no mallctl key for it).
    #[link_name = "_rjem_malloc_conf"]
    static CONFIGURED: *const std::ffi::c_char;
}

fn configured_string() -> String {
    // SAFETY: set once by conf.rs before jemalloc initialised; points to a NUL-terminated buffer.
    let ptr = unsafe { CONFIGURED };
    assert!(!ptr.is_null(), "_rjem_malloc_conf was never set");
    unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

fn read_i64(key: &str) -> i64 {
    let key = CString::new(key).unwrap();
    unsafe { raw::read::<isize>(key.as_bytes_with_nul()) }.unwrap() as i64
}

fn value<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

#[test]
fn defaults_take_effect_in_this_process() {
    let cpus = container_cpus::detect().effective;
    assert_eq!(
        opt::narenas::read().unwrap(),
        conf::narenas_for(cpus),
        "narenas from the container's CPUs"
    );
    assert!(read_bool("opt.prof"), "profiling ready");
    assert!(!read_bool("opt.prof_active"), "but not active");
    assert!(!read_bool("prof.active"));
    assert_eq!(read_i64("opt.dirty_decay_ms"), 1000);
    assert!(
        !read_bool("opt.background_thread"),
        "no background thread outside a JVM (this test binary)"
    );
    assert!(read_bool("config.prof"));
}

#[test]
fn malloc_conf_is_honoured_and_overrides_defaults() {
    let report = child(
        "tests::report_options",
        &[(
            "MALLOC_CONF",
            "narenas:3,prof_active:true,lg_prof_sample:12",
        )],
    );
    assert_eq!(value(&report, "narenas"), "3", "{report}");
    assert_eq!(value(&report, "prof_active"), "true", "{report}");
    assert_eq!(value(&report, "lg_prof_sample"), "12", "{report}");
    assert_eq!(value(&report, "prof"), "true", "defaults kept: {report}");
    assert!(
        value(&report, "malloc_conf").ends_with(",narenas:3,prof_active:true,lg_prof_sample:12"),
        "user's options after ours: {report}"
    );
}

#[test]
fn a_jvm_gets_background_threads() {
    // This binary under the JVM launcher's name: a hard link, which /proc/self/exe names as it
    // was run (a copy would be written while other tests fork: "text file busy" at its exec).
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .unwrap()
        .join(format!("jvm-named-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let java = dir.join("java");
    std::fs::hard_link(&exe, &java).unwrap();
    let report = child_of(&java, "tests::report_options", &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(value(&report, "background_thread"), "true", "{report}");
    let report = child("tests::report_options", &[]);
    assert_eq!(value(&report, "background_thread"), "false", "{report}");
}

#[test]
fn prof_can_be_switched_off_by_the_user() {
    let report = child("tests::report_options", &[("MALLOC_CONF", "prof:false")]);
    assert_eq!(value(&report, "prof"), "false", "{report}");
}

#[test]
fn prefixed_variable_still_wins_last() {
    let report = child(
        "tests::report_options",
        &[
            ("MALLOC_CONF", "narenas:3"),
            ("_RJEM_MALLOC_CONF", "narenas:5"),
        ],
    );
    assert_eq!(value(&report, "narenas"), "5", "{report}");
}

#[test]
fn compose_writes_defaults_then_user_options() {
    let mut buf = [0u8; 256];
    let user = CString::new("narenas:2").unwrap();
    let len = conf::compose(&mut buf, 3, true, Some(&user)).unwrap();
    let text = std::str::from_utf8(&buf[..len]).unwrap();
    assert_eq!(
        text,
        "prof:true,prof_active:false,narenas:12,\
         dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true,narenas:2"
    );
    assert_eq!(buf[len], 0);
    let len = conf::compose(&mut buf, 3, false, None).unwrap();
    assert_eq!(
        std::str::from_utf8(&buf[..len]).unwrap(),
        "prof:true,prof_active:false,narenas:12,dirty_decay_ms:1000,muzzy_decay_ms:0"
    );
    assert_eq!(conf::narenas_for(1), 1);
    let mut small = [0u8; 16];
    assert_eq!(conf::compose(&mut small, 3, true, None), None);
}

#[test]
fn allocation_family_round_trips() {
    use crate::exports as x;
    unsafe {
        let p = x::memalign(64, 100);
        assert_eq!(p as usize % 64, 0);
        assert!(x::malloc_usable_size(p) >= 100);
        x::free(p);
        let v = x::valloc(10);
        assert_eq!(v as usize % 4096, 0);
        x::free(v);
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let pv = x::pvalloc(10);
        assert_eq!(pv as usize % page, 0);
        assert!(x::malloc_usable_size(pv) >= page);
        x::free(pv);
        let c = x::calloc(10, 10) as *mut u8;
        assert!((0..100).all(|i| *c.add(i) == 0));
        let r = x::realloc(c.cast(), 1 << 20);
        assert!(x::malloc_usable_size(r) >= 1 << 20);
        x::free(r);
        let mut out = std::ptr::null_mut();
        assert_eq!(x::posix_memalign(&mut out, 256, 10), 0);
        assert_eq!(out as usize % 256, 0);
        x::free(out);
        let a = x::aligned_alloc(128, 256);
        assert_eq!(a as usize % 128, 0);
        x::free(a);
    }
}

fn read_usize(key: &str) -> usize {
    let key = CString::new(key).unwrap();
    unsafe { raw::read::<usize>(key.as_bytes_with_nul()) }.unwrap()
}

/// The aarch64 build assumes 64 KiB pages (configure cannot probe them when cross-compiling), so it
/// starts on 4, 16 and 64 KiB kernels alike; here it runs on the emulator's or the host's page.
#[test]
#[cfg(target_arch = "aarch64")]
fn the_aarch64_build_assumes_64_kib_pages_and_runs_on_smaller_ones() {
    let jemalloc_page: usize = unsafe { raw::read(b"arenas.page\0") }.unwrap();
    assert_eq!(jemalloc_page, 64 << 10);
    let kernel_page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    assert!(kernel_page <= jemalloc_page, "kernel page {kernel_page}");
    unsafe {
        let v = crate::exports::valloc(10);
        assert_eq!(v as usize % jemalloc_page, 0);
        crate::exports::free(v);
    }
}
