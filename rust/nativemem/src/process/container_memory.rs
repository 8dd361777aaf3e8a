//! The memory cgroup of this process: limit (lowest up the hierarchy), usage, anon/file split
//! and OOM counters, for cgroup v1 and v2.

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Limits at or above this are "no limit" (v1 reports `LONG_MAX` rounded to a page).
const UNLIMITED: u64 = 1 << 62;

/// What the memory controller says about this process's cgroup, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerMemory {
    /// `v1` or `v2`.
    pub cgroup_version: &'static str,
    /// This process's cgroup, as `/proc/self/cgroup` names it.
    pub cgroup: String,
    /// The lowest limit from this cgroup up to the root visible here; `None` when unlimited.
    pub limit_bytes: Option<u64>,
    /// The directory whose limit is the lowest (relative to the controller's mount).
    pub limit_cgroup: Option<String>,
    /// v2 `memory.current`, v1 `memory.usage_in_bytes` (page cache included).
    pub usage_bytes: u64,
    /// v2 `anon`, v1 `total_rss` from `memory.stat`.
    pub anon_bytes: Option<u64>,
    /// v2 `file`, v1 `total_cache` from `memory.stat`.
    pub file_bytes: Option<u64>,
    /// v2 `memory.events` `oom`: times the limit was hit and reclaim failed.
    pub oom_events: Option<u64>,
    /// v2 `memory.events` `oom_kill`, v1 `memory.oom_control` `oom_kill`: processes killed.
    pub oom_kill_events: Option<u64>,
    /// v1 `memory.failcnt`: times usage hit the limit.
    pub failcnt: Option<u64>,
}

/// Reads the memory cgroup of this process from the real system. Like the JVM, it finds the
/// cgroup once per process and re-reads limits at most every 20 ms; usage is always fresh.
pub fn container_memory() -> Option<ContainerMemory> {
    static PLACE: OnceLock<Option<Place>> = OnceLock::new();
    static LIMIT: Mutex<Option<(Instant, LowestLimit)>> = Mutex::new(None);
    let place = PLACE.get_or_init(|| Place::find(Path::new("/"))).as_ref()?;
    let limit = {
        let mut cached = LIMIT.lock().unwrap_or_else(|p| p.into_inner());
        match cached.as_ref() {
            Some((at, limit)) if at.elapsed() < LIMIT_CACHE => limit.clone(),
            _ => {
                let limit = lowest_limit(place.version, &place.top, &place.dir);
                *cached = Some((Instant::now(), limit.clone()));
                limit
            }
        }
    };
    Some(place.read(limit))
}

/// The lowest limit and the cgroup that sets it; `None` when unlimited.
type LowestLimit = Option<(u64, String)>;

/// How long a limit read from the hierarchy stays valid (the JVM's container cache timeout).
const LIMIT_CACHE: Duration = Duration::from_millis(20);

/// Reads under `root`: a fixture tree with `proc/self/cgroup`, `proc/self/mountinfo` and the
/// cgroup files, or `/`. `None` when no memory controller is mounted for this process.
pub fn container_memory_under(root: &Path) -> Option<ContainerMemory> {
    let place = Place::find(root)?;
    Some(place.read(lowest_limit(place.version, &place.top, &place.dir)))
}

/// Where this process's memory cgroup lives.
struct Place {
    version: Version,
    /// The controller's mount point: the walk up the hierarchy stops here.
    top: PathBuf,
    dir: PathBuf,
    cgroup: String,
}

impl Place {
    fn find(root: &Path) -> Option<Place> {
        let cgroups = std::fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
        let mountinfo = std::fs::read_to_string(root.join("proc/self/mountinfo")).ok()?;
        let (v1_path, v2_path) = memory_cgroup_paths(&cgroups);
        let (mut v1_mount, mut v2_mount) = (None, None);
        for line in mountinfo.lines() {
            if let Some((mount_root, point, fstype, options)) = parse_mountinfo(line) {
                if fstype == "cgroup" && options.split(',').any(|o| o == "memory") {
                    v1_mount = Some((mount_root, point));
                } else if fstype == "cgroup2" {
                    v2_mount = Some((mount_root, point));
                }
            }
        }
        // Like the JVM, prefer a v1 memory controller on hybrid hierarchies.
        let (version, (mount_root, point), cgroup) = match (v1_path, v1_mount, v2_path, v2_mount) {
            (Some(path), Some(mount), _, _) => (Version::V1, mount, path),
            (_, _, Some(path), Some(mount))
                if has_memory_controller(root, mount.1, mount.0, path) =>
            {
                (Version::V2, mount, path)
            }
            _ => return None,
        };
        let top = root.join(point.trim_start_matches('/'));
        let dir = top.join(relative_to_mount(cgroup, mount_root).trim_start_matches('/'));
        Some(Place {
            version,
            top,
            dir,
            cgroup: cgroup.into(),
        })
    }

    fn read(&self, limit: LowestLimit) -> ContainerMemory {
        self.version.read(&self.dir, &self.cgroup, limit)
    }
}

#[derive(Clone, Copy)]
enum Version {
    V1,
    V2,
}

impl Version {
    fn read(self, dir: &Path, cgroup: &str, limit: LowestLimit) -> ContainerMemory {
        let (limit_bytes, limit_cgroup) = match limit {
            Some((limit, at)) => (Some(limit), Some(at)),
            None => (None, None),
        };
        let stat = std::fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
        match self {
            Version::V2 => {
                let events = std::fs::read_to_string(dir.join("memory.events")).unwrap_or_default();
                ContainerMemory {
                    cgroup_version: "v2",
                    cgroup: cgroup.into(),
                    limit_bytes,
                    limit_cgroup,
                    usage_bytes: read_number(&dir.join("memory.current")).unwrap_or(0),
                    anon_bytes: keyed(&stat, "anon"),
                    file_bytes: keyed(&stat, "file"),
                    oom_events: keyed(&events, "oom"),
                    oom_kill_events: keyed(&events, "oom_kill"),
                    failcnt: None,
                }
            }
            Version::V1 => {
                let oom =
                    std::fs::read_to_string(dir.join("memory.oom_control")).unwrap_or_default();
                ContainerMemory {
                    cgroup_version: "v1",
                    cgroup: cgroup.into(),
                    limit_bytes,
                    limit_cgroup,
                    usage_bytes: read_number(&dir.join("memory.usage_in_bytes")).unwrap_or(0),
                    anon_bytes: keyed(&stat, "total_rss").or_else(|| keyed(&stat, "rss")),
                    file_bytes: keyed(&stat, "total_cache").or_else(|| keyed(&stat, "cache")),
                    oom_events: None,
                    oom_kill_events: keyed(&oom, "oom_kill"),
                    failcnt: read_number(&dir.join("memory.failcnt")),
                }
            }
        }
    }

    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }
}

/// The lowest limit from `dir` up to `top`, and where it is set (relative to `top`).
fn lowest_limit(version: Version, top: &Path, dir: &Path) -> LowestLimit {
    let mut lowest: LowestLimit = None;
    let mut at = dir.to_path_buf();
    loop {
        if let Some(limit) = read_number(&at.join(version.limit_file())).filter(|&l| l < UNLIMITED)
        {
            if lowest.as_ref().is_none_or(|(l, _)| limit < *l) {
                let name = at.strip_prefix(top).unwrap_or(&at).to_string_lossy();
                lowest = Some((limit, format!("/{name}")));
            }
        }
        if at == top || !at.starts_with(top) || !at.pop() {
            break;
        }
    }
    lowest
}

/// The v1 `memory` controller's path and the v2 unified path from `/proc/self/cgroup`.
fn memory_cgroup_paths(cgroups: &str) -> (Option<&str>, Option<&str>) {
    let (mut v1, mut v2) = (None, None);
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2 = Some(path);
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path);
        }
    }
    (v1, v2)
}

/// A v2 hierarchy serves memory only if `memory` is among its controllers (hybrid systems
/// mount an empty v2 tree next to v1 controllers).
fn has_memory_controller(root: &Path, point: &str, mount_root: &str, cgroup: &str) -> bool {
    let top = root.join(point.trim_start_matches('/'));
    let dir = top.join(relative_to_mount(cgroup, mount_root).trim_start_matches('/'));
    dir.join("memory.max").exists()
        || dir.join("memory.current").exists()
        || std::fs::read_to_string(top.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
}

/// Inside a container the mount's root is the container's own cgroup: strip it.
fn relative_to_mount<'a>(cgroup: &'a str, mount_root: &str) -> &'a str {
    if mount_root == "/" {
        cgroup
    } else {
        cgroup.strip_prefix(mount_root).unwrap_or("")
    }
}

/// `36 35 98:0 /root /mount/point rw - fstype source super,options` → (root, point, fstype, opts).
fn parse_mountinfo(line: &str) -> Option<(&str, &str, &str, &str)> {
    let mut fields = line.split(' ');
    let mount_root = fields.nth(3)?;
    let point = fields.next()?;
    let mut rest = fields.skip_while(|f| *f != "-");
    rest.next()?;
    let fstype = rest.next()?;
    let _source = rest.next()?;
    Some((mount_root, point, fstype, rest.next()?))
}

/// A file holding one number; `max` (v2 unlimited) and unreadable files are `None`.
fn read_number(path: &PathBuf) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `key value` lines, as in `memory.stat` and `memory.events`.
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str, files: &[(&str, &str)]) -> Tree {
            let dir = std::env::temp_dir().join(format!("nm-cgroup-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            for (path, content) in files {
                let file = dir.join(path);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, content).unwrap();
            }
            Tree(dir)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const V2_MOUNTINFO: &str = "22 1 0:21 / /proc rw - proc proc rw\n\
        30 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    const V1_MOUNTINFO: &str = "22 1 0:21 / /proc rw - proc proc rw\n\
        33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw shared:14 - cgroup cgroup rw,cpu,cpuacct\n\
        34 25 0:30 / /sys/fs/cgroup/memory rw shared:15 - cgroup cgroup rw,memory\n\
        41 25 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    const V2_STAT: &str = "anon 104857600\nfile 52428800\nkernel 1000\nshmem 0\n";
    const V2_EVENTS: &str = "low 0\nhigh 0\nmax 17\noom 3\noom_kill 2\noom_group_kill 0\n";

    #[test]
    fn v2_unlimited() {
        let t = Tree::new(
            "v2-unlimited",
            &[
                ("proc/self/cgroup", "0::/app\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n"),
                ("sys/fs/cgroup/app/memory.max", "max\n"),
                ("sys/fs/cgroup/app/memory.current", "157286400\n"),
                ("sys/fs/cgroup/app/memory.stat", V2_STAT),
                ("sys/fs/cgroup/app/memory.events", V2_EVENTS),
            ],
        );
        let m = container_memory_under(&t.0).unwrap();
        assert_eq!(m.cgroup_version, "v2");
        assert_eq!(m.cgroup, "/app");
        assert_eq!(m.limit_bytes, None);
        assert_eq!(m.usage_bytes, 157286400);
        assert_eq!(m.anon_bytes, Some(100 << 20));
        assert_eq!(m.file_bytes, Some(50 << 20));
        assert_eq!((m.oom_events, m.oom_kill_events), (Some(3), Some(2)));
        assert_eq!(m.failcnt, None);
    }

    #[test]
    fn v2_nested_lowest_limit_wins_and_is_named() {
        let t = Tree::new(
            "v2-nested",
            &[
                ("proc/self/cgroup", "0::/kubepods/pod1/ctr\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "max\n"),
                ("sys/fs/cgroup/kubepods/pod1/ctr/memory.current", "1000\n"),
                ("sys/fs/cgroup/kubepods/pod1/memory.max", "536870912\n"),
                ("sys/fs/cgroup/kubepods/memory.max", "1073741824\n"),
            ],
        );
        let m = container_memory_under(&t.0).unwrap();
        assert_eq!(m.limit_bytes, Some(512 << 20));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/kubepods/pod1"));
        assert_eq!(m.anon_bytes, None, "no memory.stat: unknown, not zero");
    }

    #[test]
    fn v2_inside_a_container_namespace_strips_the_mount_root() {
        let mountinfo = "30 22 0:26 /kubepods/pod1/ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let t = Tree::new(
            "v2-ns",
            &[
                ("proc/self/cgroup", "0::/kubepods/pod1/ctr\n"),
                ("proc/self/mountinfo", mountinfo),
                ("sys/fs/cgroup/memory.max", "268435456\n"),
                ("sys/fs/cgroup/memory.current", "1000\n"),
            ],
        );
        let m = container_memory_under(&t.0).unwrap();
        assert_eq!(m.limit_bytes, Some(256 << 20));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/"));
    }

    #[test]
    fn v1_limited_nested_and_unlimited() {
        let stat = "cache 1\nrss 2\ntotal_cache 41943040\ntotal_rss 83886080\n";
        let t = Tree::new(
            "v1",
            &[
                (
                    "proc/self/cgroup",
                    "4:memory:/job/task\n3:cpu,cpuacct:/job\n0::/\n",
                ),
                ("proc/self/mountinfo", V1_MOUNTINFO),
                (
                    "sys/fs/cgroup/memory/job/task/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
                (
                    "sys/fs/cgroup/memory/job/task/memory.usage_in_bytes",
                    "125829120\n",
                ),
                ("sys/fs/cgroup/memory/job/task/memory.stat", stat),
                ("sys/fs/cgroup/memory/job/task/memory.failcnt", "5\n"),
                (
                    "sys/fs/cgroup/memory/job/task/memory.oom_control",
                    "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
                ),
                (
                    "sys/fs/cgroup/memory/job/memory.limit_in_bytes",
                    "2147483648\n",
                ),
                (
                    "sys/fs/cgroup/memory/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
            ],
        );
        let m = container_memory_under(&t.0).unwrap();
        assert_eq!(
            m.cgroup_version, "v1",
            "v1 memory wins over the empty unified tree"
        );
        assert_eq!(m.limit_bytes, Some(2 << 30));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/job"));
        assert_eq!(m.usage_bytes, 120 << 20);
        assert_eq!(
            (m.anon_bytes, m.file_bytes),
            (Some(80 << 20), Some(40 << 20))
        );
        assert_eq!(
            (m.failcnt, m.oom_kill_events, m.oom_events),
            (Some(5), Some(1), None)
        );

        std::fs::write(
            t.0.join("sys/fs/cgroup/memory/job/memory.limit_in_bytes"),
            "9223372036854771712\n",
        )
        .unwrap();
        let m = container_memory_under(&t.0).unwrap();
        assert_eq!((m.limit_bytes, m.limit_cgroup), (None, None));
    }

    #[test]
    fn no_memory_controller_is_none() {
        let t = Tree::new(
            "none",
            &[
                ("proc/self/cgroup", "3:cpu:/\n"),
                (
                    "proc/self/mountinfo",
                    "22 1 0:21 / /proc rw - proc proc rw\n",
                ),
            ],
        );
        assert_eq!(container_memory_under(&t.0), None);
    }

    #[test]
    fn real_system_usage_covers_own_rss() {
        let Some(m) = container_memory() else {
            return; // no memory controller mounted: nothing to compare
        };
        let own = crate::process::memory().unwrap();
        // The cgroup charges at least this process's anonymous memory.
        assert!(m.usage_bytes >= own.rss_anon_bytes, "{m:?} vs {own:?}");
    }
}
