//! Pruning keeps the newest default-named dumps and never touches other files.

use super::{default_stamp, prune};
use std::path::{Path, PathBuf};

const NOBODY: u32 = 65534;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nativemem-prune-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn touch(path: &Path) {
    std::fs::File::create_new(path).unwrap();
}

#[test]
fn only_default_names_have_a_stamp() {
    let stamp = "20261130T010000.000Z";
    assert_eq!(
        default_stamp(&format!("nativemem-12-{stamp}.heap")),
        Some(stamp)
    );
    for other in [
        "app.heap",
        "nativemem-1-latest.heap",
        "nativemem--20261130T010000.000Z.heap",
        "nativemem-x-20261130T010000.000Z.heap",
        "nativemem-1-20261130T010000.000Z.heap.symbols",
        "nativemem-1-20261130T010000.00Z.heap",
        "nativemem-1-2026113OT010000.000Z.heap",
    ] {
        assert_eq!(default_stamp(other), None, "{other}");
    }
}

#[test]
fn keeps_the_newest_default_named_dumps_with_their_sidecars() {
    let dir = scratch("newest");
    // Two processes, interleaved in time; the stamp, not the pid, orders them.
    let stamps = [
        "20261130T010000.000Z",
        "20261130T010001.000Z",
        "20261130T010002.000Z",
        "20261130T010003.000Z",
    ];
    for (i, stamp) in stamps.iter().enumerate() {
        let pid = if i % 2 == 0 { 900 } else { 12 };
        let dump = dir.join(format!("nativemem-{pid}-{stamp}.heap"));
        touch(&dump);
        let sidecar = dir.join(format!("nativemem-{pid}-{stamp}.heap.symbols"));
        std::fs::create_dir(&sidecar).unwrap();
        touch(&sidecar.join("symbols.json"));
    }
    touch(&dir.join("app.heap"));
    touch(&dir.join("nativemem-1-latest.heap"));

    prune(&dir, "nativemem-12-20261130T010003.000Z.heap", 2);

    assert_eq!(
        names(&dir),
        [
            "app.heap",
            "nativemem-1-latest.heap",
            "nativemem-12-20261130T010003.000Z.heap",
            "nativemem-12-20261130T010003.000Z.heap.symbols",
            "nativemem-900-20261130T010002.000Z.heap",
            "nativemem-900-20261130T010002.000Z.heap.symbols",
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keeping_zero_still_keeps_the_dump_just_written() {
    let dir = scratch("zero");
    touch(&dir.join("nativemem-7-20261130T010000.000Z.heap"));
    touch(&dir.join("nativemem-7-20261130T010001.000Z.heap"));
    prune(&dir, "nativemem-7-20261130T010001.000Z.heap", 0);
    assert_eq!(names(&dir), ["nativemem-7-20261130T010001.000Z.heap"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Case 3 of issue 11: in a shared directory another user plants default-named files dated in
/// the future; they must neither push our fresh dump out nor be deleted (as root, they would be).
#[test]
fn files_of_other_users_neither_count_nor_get_deleted() {
    if crate::files::dir::my_uid() != 0 {
        return; // needs root to give files to another user
    }
    let dir = scratch("others");
    for i in 0..20 {
        let planted = dir.join(format!("nativemem-1-299901{}T000000.000Z.heap", 10 + i));
        touch(&planted);
        std::os::unix::fs::lchown(&planted, Some(NOBODY), None).unwrap();
    }
    let planted_sidecar = dir.join("nativemem-1-29990110T000000.000Z.heap.symbols");
    std::fs::create_dir(&planted_sidecar).unwrap();
    std::os::unix::fs::lchown(&planted_sidecar, Some(NOBODY), None).unwrap();
    touch(&dir.join("nativemem-5-20261130T000000.000Z.heap"));
    let fresh = "nativemem-5-20261130T010000.000Z.heap";
    touch(&dir.join(fresh));

    prune(&dir, fresh, 1);

    let left = names(&dir);
    assert!(
        left.iter().any(|n| n == fresh),
        "our fresh dump was deleted"
    );
    assert!(
        !left
            .iter()
            .any(|n| n == "nativemem-5-20261130T000000.000Z.heap"),
        "our old dump stayed"
    );
    assert_eq!(
        left.len(),
        22,
        "another user's files were deleted: {left:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
