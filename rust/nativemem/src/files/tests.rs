//! The handle operations against planted links, FIFOs and other users' entries.

use super::dir::Dir;
use super::walk::{open_dir, Missing};
use super::{listing, read_capped_at, space, tree, FileError};
use std::ffi::CString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nativemem-layer-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn c(name: &str) -> CString {
    CString::new(name).unwrap()
}

fn open(path: &Path) -> Dir {
    open_dir(path, Missing::Fail).unwrap().dir
}

fn lchown(path: &Path, uid: u32) -> bool {
    std::os::unix::fs::lchown(path, Some(uid), None).is_ok()
}

fn root() -> bool {
    super::dir::my_uid() == 0
}

#[test]
fn the_walk_follows_our_links_once_and_refuses_other_users_links() {
    let base = scratch("walk");
    std::fs::create_dir_all(base.join("real/inner")).unwrap();
    std::os::unix::fs::symlink(base.join("real"), base.join("ours")).unwrap();
    let dir = open(&base.join("ours/inner"));
    std::fs::write(base.join("real/inner/x"), b"x").unwrap();
    assert_eq!(read_capped_at(&dir, &c("x"), 10).unwrap(), b"x");
    // Re-pointed after the walk: the handle stays where it was.
    std::fs::remove_file(base.join("ours")).unwrap();
    std::fs::create_dir_all(base.join("other/inner")).unwrap();
    std::os::unix::fs::symlink(base.join("other"), base.join("ours")).unwrap();
    assert_eq!(read_capped_at(&dir, &c("x"), 10).unwrap(), b"x");
    let missing = open_dir(&base.join("nope/deeper"), Missing::Fail)
        .err()
        .unwrap();
    assert!(
        matches!(&missing, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{missing}"
    );
    let made = open_dir(&base.join("made/deeper"), Missing::Create)
        .unwrap()
        .dir;
    assert_eq!(made.stat().unwrap().mode & 0o777, 0o700);
    if root() {
        assert!(lchown(&base.join("ours"), 9999));
        let refused = open_dir(&base.join("ours/inner"), Missing::Fail)
            .err()
            .unwrap();
        let text = refused.to_string();
        assert!(
            text.contains("is a symbolic link of uid 9999") && text.contains("ours"),
            "{text}"
        );
    }
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn anchored_paths_start_from_the_descriptor() {
    let base = scratch("anchored");
    let dir = open(&base);
    let child = dir.make_private_child(&c("kid")).unwrap();
    std::fs::rename(&base, base.with_extension("moved")).unwrap();
    let again = open_dir(&child.anchored(""), Missing::Fail).unwrap();
    assert!(again.anchored);
    again.dir.write_new(&c("f"), b"1").unwrap();
    assert!(base.with_extension("moved").join("kid/f").is_file());
    std::fs::remove_dir_all(base.with_extension("moved")).unwrap();
}

#[test]
fn removal_takes_only_ours_and_follows_no_link() {
    let base = scratch("remove");
    let victim = scratch("remove-victim");
    std::fs::write(victim.join("precious"), b"p").unwrap();
    let dir = open(&base);
    let bundle = dir.make_private_child(&c("bundle")).unwrap();
    bundle.write_new(&c("a"), b"aa").unwrap();
    std::os::unix::fs::symlink(&victim, base.join("bundle/link")).unwrap();
    std::fs::create_dir(base.join("bundle/sub")).unwrap();
    std::fs::write(base.join("bundle/sub/b"), b"bbb").unwrap();
    assert_eq!(tree::bytes_of(&dir, &c("bundle")).unwrap(), 5);
    if root() {
        std::fs::write(base.join("bundle/sub/theirs"), b"t").unwrap();
        assert!(lchown(&base.join("bundle/sub/theirs"), 9999));
        assert!(
            !tree::remove_ours(&dir, &c("bundle")).unwrap(),
            "another user's file stays"
        );
        assert!(base.join("bundle/sub/theirs").exists());
        assert!(!base.join("bundle/a").exists());
        std::fs::remove_file(base.join("bundle/sub/theirs")).unwrap();
    }
    assert!(tree::remove_ours(&dir, &c("bundle")).unwrap());
    assert!(!base.join("bundle").exists());
    assert!(
        victim.join("precious").is_file(),
        "nothing followed through the link"
    );
    std::fs::remove_dir_all(&base).unwrap();
    std::fs::remove_dir_all(&victim).unwrap();
}

#[test]
fn private_children_are_checked_listing_sees_links_as_links_and_space_is_read() {
    let base = scratch("list");
    let dir = open(&base);
    let kid = dir.make_private_child(&c("kid")).unwrap();
    assert_eq!(kid.stat().unwrap().mode & 0o777, 0o700);
    assert!(
        dir.make_private_child(&c("kid")).is_err(),
        "never an existing name"
    );
    std::os::unix::fs::symlink("/etc", base.join("link")).unwrap();
    let mut entries = listing::entries(&dir).unwrap();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let kinds: Vec<_> = entries.iter().map(|e| (e.name.as_str(), e.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("kid", listing::Kind::Directory),
            ("link", listing::Kind::Link)
        ]
    );
    assert_eq!(entries[0].uid, std::fs::metadata(&base).unwrap().uid());
    let s = space::space(&dir).unwrap();
    assert!(s.total_bytes >= s.free_bytes && s.total_bytes > 0, "{s:?}");
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn reads_refuse_links_and_fifos_without_blocking() {
    let base = scratch("read");
    let dir = open(&base);
    std::os::unix::fs::symlink("/etc/hostname", base.join("link")).unwrap();
    let fifo = CString::new(base.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let link = read_capped_at(&dir, &c("link"), 100).unwrap_err();
    assert!(link.to_string().contains("symbolic link"), "{link}");
    let fifo = read_capped_at(&dir, &c("fifo"), 100).unwrap_err();
    assert!(fifo.to_string().contains("a FIFO"), "{fifo}");
    dir.write_new(&c("big"), &[0u8; 11]).unwrap();
    assert!(read_capped_at(&dir, &c("big"), 10)
        .unwrap_err()
        .to_string()
        .contains("more than the 10"));
    std::fs::remove_dir_all(&base).unwrap();
}
