//! The watch directory's jobs against planted entries: links, look-alikes, other users' files,
//! temporaries of dead and live processes, a shared directory.

use super::placement::{self, FIX};
use super::retention::{self, STALE_TEMPORARY};
use super::{open, prune, ready, OpenRequest, PruneRequest, ReadyRequest};
use crate::files::dir::{my_uid, Dir};
use crate::files::walk::{open_dir, Missing};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nativemem-watch-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

fn bundle(dir: &Path, name: &str, bytes: usize) -> String {
    fs::create_dir(dir.join(name)).unwrap();
    fs::write(dir.join(name).join("timeline.json"), vec![b' '; bytes]).unwrap();
    name.to_owned()
}

fn handle(dir: &Path) -> Dir {
    open_dir(dir, Missing::Fail).unwrap().dir
}

#[test]
fn pruning_removes_our_oldest_bundles_and_nothing_else() {
    let dir = scratch("prune");
    let b1 = bundle(&dir, "nativemem-incident-11-20261130T100000Z-limit", 10);
    let b2 = bundle(&dir, "nativemem-incident-22-20261130T110000Z-growth", 10);
    let b3 = bundle(&dir, "nativemem-incident-11-20261130T120000Z-on-demand", 10);
    let b4 = bundle(
        &dir,
        "nativemem-incident-33-20261130T130000Z-leaked-handles",
        10,
    );
    // Planted: a file and a link named like bundles, a look-alike of another trigger, another.
    let outside = scratch("prune-outside");
    fs::write(outside.join("precious"), [42]).unwrap();
    let planted_file = dir.join("nativemem-incident-1-20200101T000000Z-limit");
    fs::write(&planted_file, [1]).unwrap();
    let planted_link = dir.join("nativemem-incident-2-20200101T000000Z-limit");
    std::os::unix::fs::symlink(&outside, &planted_link).unwrap();
    let look_alike = dir.join("nativemem-incident-3-20200101T000000Z-other");
    fs::create_dir(&look_alike).unwrap();
    fs::create_dir(dir.join("keep-me")).unwrap();

    let held = handle(&dir);
    let removed = prune(&PruneRequest {
        directory: held.fd_number(),
        keep: 2,
        max_bytes: u64::MAX,
        newest: Some(b3.clone()),
    })
    .unwrap();
    assert_eq!(
        removed,
        [b1, b2],
        "the two oldest of ours, by the stamp in the name"
    );
    assert_eq!(retention::bundles(&held).unwrap(), [b3, b4]);
    for kept in [
        &planted_file,
        &planted_link,
        &look_alike,
        &dir.join("keep-me"),
    ] {
        assert!(
            fs::symlink_metadata(kept).is_ok(),
            "{} untouched",
            kept.display()
        );
    }
    assert!(
        outside.join("precious").exists(),
        "nothing followed through the link"
    );
}

#[test]
fn the_byte_bound_removes_the_oldest_but_never_the_newest() {
    let dir = scratch("bytes");
    let b1 = bundle(&dir, "nativemem-incident-11-20261130T100000Z-limit", 600);
    let b2 = bundle(&dir, "nativemem-incident-11-20261130T110000Z-limit", 600);
    let b3 = bundle(&dir, "nativemem-incident-11-20261130T120000Z-limit", 2000);
    let held = handle(&dir);
    let removed = retention::prune(&held, 10, 1000, Some(&b3)).unwrap();
    assert_eq!(removed, [b1, b2], "b3 alone exceeds the bound but stays");
    assert_eq!(retention::size(&held, &b3).unwrap(), 2000);
}

#[test]
fn temporaries_of_dead_processes_go_those_of_live_ones_stay() {
    let dir = scratch("temporaries");
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let me = std::process::id();
    let stale = dir.join(format!(
        ".nativemem-incident-{dead}-20261130T100000Z-limit.tmp-1a2b"
    ));
    let live = dir.join(format!(
        ".nativemem-incident-{me}-20261130T100000Z-limit.tmp-3c4d"
    ));
    let recent = dir.join(format!(
        ".nativemem-incident-{dead}-20261130T100001Z-limit.tmp-5e6f"
    ));
    let old = SystemTime::now() - STALE_TEMPORARY - std::time::Duration::from_secs(60);
    for made in [&stale, &live, &recent] {
        fs::create_dir(made).unwrap();
    }
    for aged in [&stale, &live] {
        fs::File::open(aged).unwrap().set_modified(old).unwrap();
    }
    retention::prune(&handle(&dir), 10, u64::MAX, None).unwrap();
    let mut left: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    left.sort();
    let mut expected = vec![live, recent];
    expected.sort();
    assert_eq!(left, expected);
}

#[test]
fn ready_names_this_process_s_newest_bundle_and_room_enough() {
    let dir = scratch("ready");
    bundle(&dir, "nativemem-incident-11-20261130T100000Z-limit", 10);
    let newest = bundle(&dir, "nativemem-incident-11-20261130T110000Z-growth", 10);
    bundle(&dir, "nativemem-incident-12-20261130T120000Z-limit", 10);
    let held = handle(&dir);
    let ready = ready(&ReadyRequest {
        directory: held.fd_number(),
        pid: 11,
        profile: false,
    })
    .unwrap();
    assert_eq!(ready.previous.as_deref(), Some(newest.as_str()));
    assert_eq!(
        ready.room.skipped, None,
        "a temporary directory has 1 MiB free"
    );
    assert!(ready.room.removed.is_empty());
}

#[test]
fn a_directory_others_can_write_is_refused_before_a_capture() {
    let dir = scratch("opened-up");
    let held = handle(&dir);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let err = placement::check(&held).unwrap_err().to_string();
    assert!(err.contains("is no longer this user's alone"), "{err}");
    assert!(err.ends_with(FIX), "{err}");
}

#[test]
fn an_own_private_directory_is_used_as_it_is() {
    let dir = scratch("own");
    let opened = open(&OpenRequest { path: dir.clone() }).unwrap();
    let held = Dir::held(opened.directory).unwrap();
    assert_eq!(opened.path, dir.display().to_string());
    assert!(
        opened.placement.contains("this user's, mode 700"),
        "{}",
        opened.placement
    );
    drop(std::mem::ManuallyDrop::into_inner(held));
}

#[test]
fn a_shared_directory_gets_a_private_child_and_a_planted_one_is_refused() {
    let shared = scratch("shared");
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let opened = open(&OpenRequest {
        path: shared.clone(),
    })
    .unwrap();
    let child = shared.join(format!("nativemem-{}", my_uid()));
    assert_eq!(opened.path, child.display().to_string());
    assert!(
        opened.placement.contains("is shared"),
        "{}",
        opened.placement
    );
    let mode = fs::metadata(&child).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o700);
    drop(std::mem::ManuallyDrop::into_inner(
        Dir::held(opened.directory).unwrap(),
    ));

    // Reused when it is ours and private; refused when it is a link or opened up.
    let again = open(&OpenRequest {
        path: shared.clone(),
    })
    .unwrap();
    drop(std::mem::ManuallyDrop::into_inner(
        Dir::held(again.directory).unwrap(),
    ));
    fs::remove_dir(&child).unwrap();
    let elsewhere = scratch("shared-elsewhere");
    std::os::unix::fs::symlink(&elsewhere, &child).unwrap();
    let err = open(&OpenRequest {
        path: shared.clone(),
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("is not a directory nativemem can use"),
        "{err}"
    );
    fs::remove_file(&child).unwrap();
    fs::create_dir(&child).unwrap();
    fs::set_permissions(&child, fs::Permissions::from_mode(0o755)).unwrap();
    let err = open(&OpenRequest { path: shared })
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("is not this user's private directory"),
        "{err}"
    );
    assert!(err.ends_with(FIX), "{err}");
}
