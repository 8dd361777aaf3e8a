//! Hundreds of dumps are merged with a few files open at a time: under a limit of 32 open files,
//! 300 dumps merge whole and no descriptor is left open. (Its own test binary: the limit and the
//! descriptor count are the process's.)

use nativemem::profile::{Format, Output, Request};

#[test]
fn three_hundred_dumps_under_a_32_file_limit() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet-open-files");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..300 {
        let dump = format!(
            "heap_v2/1\n  t*: 1: 1000 [0: 0]\n@ 0x1010\n  t*: 1: 1000 [0: 0]\n\nMAPPED_LIBRARIES:\n\
             00001000-00002000 r-xp 00000000 fe:00 1  /nonexistent/app{}\n",
            i % 2
        );
        std::fs::write(dir.join(format!("{i:03}.heap")), dump).unwrap();
    }
    let open = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let before = open();
    let limit = libc::rlimit {
        rlim_cur: 32,
        rlim_max: libc::RLIM_INFINITY,
    };
    let mut old = limit;
    // SAFETY: plain libc calls on valid rlimit structs.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let limit = libc::rlimit {
            rlim_max: old.rlim_max,
            ..limit
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    let request = Request {
        dumps: vec![dir.clone()],
        bases: Vec::new(),
        top: 5,
        report: true,
        by_process: false,
        outputs: vec![Output {
            format: Format::Text,
            path: None,
        }],
    };
    let outcome = request.run();
    // SAFETY: as above.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &old) };
    let report = outcome.unwrap().report.unwrap();
    assert_eq!(report.process_count, 300, "{:?}", report.warnings);
    assert_eq!(report.total_bytes, 300 * 1000);
    assert_eq!(open(), before, "a dump or sidecar left open");
    std::fs::remove_dir_all(&dir).unwrap();
}
