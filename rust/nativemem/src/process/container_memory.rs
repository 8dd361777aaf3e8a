//! The memory cgroup of this process, or of another (the JVM `attach` answers for from outside):
//! limit (lowest up the hierarchy), usage, anon/file split and OOM counters, for cgroup v1 and v2.
//! Every file is read as one another process may have planted (another process's are reached
//! through its root): regular files only, never blocking, capped.

use crate::files::{self, Links};
use container_cpus::{CgroupVersion, Mounts};
use serde::Serialize;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
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
    /// The process's cgroup, as its `/proc/<pid>/cgroup` names it.
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
    static LIMIT: Mutex<Option<(Instant, LowestLimit)>> = Mutex::new(None);
    let place = own_place()?;
    let limit = {
        let mut cached = LIMIT.lock().unwrap_or_else(|p| p.into_inner());
        match cached.as_ref() {
            Some((at, limit)) if at.elapsed() < LIMIT_CACHE => limit.clone(),
            _ => {
                let limit = place.lowest_limit();
                *cached = Some((Instant::now(), limit.clone()));
                limit
            }
        }
    };
    Some(place.read(limit))
}

/// This process's memory cgroup, found once per process.
fn own_place() -> Option<&'static Place> {
    static PLACE: OnceLock<Option<Place>> = OnceLock::new();
    PLACE
        .get_or_init(|| Place::find(Path::new("/"), None))
        .as_ref()
}

/// Pressure stall information of this process's memory cgroup (v2 `memory.pressure`): the share
/// of the last 10 s in which some task waited for memory, in percent. `None` on v1, without PSI
/// (kernels before 4.20, or `psi=0`) or without a memory cgroup.
pub fn memory_pressure() -> Option<f64> {
    own_place()?.pressure_some_avg10()
}

/// [`memory_pressure`] under a fixture `root` (see [`container_memory_under`]).
pub fn memory_pressure_under(root: &Path) -> Option<f64> {
    Place::find(root, None)?.pressure_some_avg10()
}

/// `some avg10=<percent> ...` from a PSI file's text.
fn some_avg10(text: &str) -> Option<f64> {
    let rest = text.lines().find_map(|line| line.strip_prefix("some "))?;
    rest.split_whitespace()
        .find_map(|field| field.strip_prefix("avg10="))?
        .parse()
        .ok()
}

/// The lowest limit and the cgroup that sets it; `None` when unlimited.
type LowestLimit = Option<(u64, String)>;

/// How long a limit read from the hierarchy stays valid (the JVM's container cache timeout).
const LIMIT_CACHE: Duration = Duration::from_millis(20);

/// Reads under `root`: a fixture tree with `proc/self/cgroup`, `proc/self/mountinfo` and the
/// cgroup files, or `/`. `None` when no memory controller is mounted for this process.
pub fn container_memory_under(root: &Path) -> Option<ContainerMemory> {
    let place = Place::find(root, None)?;
    Some(place.read(place.lowest_limit()))
}

/// Reads the memory cgroup of process `pid` (not this one), as it sees it: found through its own
/// mounts and read through its root (`/proc/<pid>/root`), so that a JVM in a container is read
/// in its container's tree; where that root cannot be entered, through the hierarchy mounted here.
/// `None` when neither shows a memory controller for it.
pub fn container_memory_of(pid: u32) -> Option<ContainerMemory> {
    container_memory_of_under(Path::new("/"), pid)
}

/// [`container_memory_of`] under a fixture `root` holding `proc/<pid>/cgroup`,
/// `proc/<pid>/mountinfo` and the cgroup files under `proc/<pid>/root/` (its mounts), or
/// `proc/self/mountinfo` and the files under `root` (ours).
pub fn container_memory_of_under(root: &Path, pid: u32) -> Option<ContainerMemory> {
    let place = [Mounts::Its, Mounts::Ours]
        .into_iter()
        .filter_map(|mounts| Place::find(root, Some((pid, mounts))))
        .find(|place| {
            place
                .number(&place.dir.join(usage_file(place.version)))
                .is_some()
        })?;
    Some(place.read(place.lowest_limit()))
}

/// Where a process's memory cgroup lives.
struct Place {
    version: CgroupVersion,
    /// The controller's mount point: the walk up the hierarchy stops here.
    top: PathBuf,
    dir: PathBuf,
    cgroup: String,
    /// Another process's root (`/proc/<pid>/root`) that every read stays inside: its container's
    /// files are its owner's to arrange, links included. `None` for this process's own tree.
    within: Option<PathBuf>,
}

impl Place {
    /// This process's place (`of` None), or process `pid`'s found through `mounts`.
    fn find(root: &Path, of: Option<(u32, Mounts)>) -> Option<Place> {
        // The lookup appends `/proc/…` to the root: the real system's `/` is the empty prefix.
        let root = root.as_os_str().as_bytes();
        let root = root.strip_suffix(b"/").unwrap_or(root);
        let found = match of {
            None => container_cpus::cgroup_dir(root, b"memory")?,
            Some((pid, mounts)) => container_cpus::cgroup_dir_of(root, pid, mounts, b"memory")?,
        };
        let path = |bytes: &[u8]| PathBuf::from(OsStr::from_bytes(bytes));
        let within = match of {
            Some((pid, Mounts::Its)) => {
                let mut at = root.to_vec();
                at.extend_from_slice(format!("/proc/{pid}/root").as_bytes());
                Some(path(&at))
            }
            _ => None,
        };
        let place = Place {
            version: found.version(),
            top: path(found.mount_point()),
            dir: path(found.dir()),
            cgroup: String::from_utf8_lossy(found.cgroup()).into_owned(),
            within,
        };
        // Hybrid systems mount an empty v2 tree next to the v1 controllers: a v2 hierarchy serves
        // memory only if `memory` is among its controllers.
        let serves_memory = place.version == CgroupVersion::V1
            || place.text(&place.dir.join("memory.max")).is_some()
            || place.text(&place.dir.join("memory.current")).is_some()
            || place
                .text(&place.top.join("cgroup.controllers"))
                .is_some_and(|c| c.split_whitespace().any(|w| w == "memory"));
        serves_memory.then_some(place)
    }

    fn pressure_some_avg10(&self) -> Option<f64> {
        if self.version != CgroupVersion::V2 {
            return None;
        }
        some_avg10(&self.text(&self.dir.join("memory.pressure"))?)
    }

    fn read(&self, limit: LowestLimit) -> ContainerMemory {
        let Place {
            version,
            dir,
            cgroup,
            ..
        } = self;
        let (limit_bytes, limit_cgroup) = match limit {
            Some((limit, at)) => (Some(limit), Some(at)),
            None => (None, None),
        };
        let stat = self.text(&dir.join("memory.stat")).unwrap_or_default();
        match version {
            CgroupVersion::V2 => {
                let events = self.text(&dir.join("memory.events")).unwrap_or_default();
                ContainerMemory {
                    cgroup_version: "v2",
                    cgroup: cgroup.into(),
                    limit_bytes,
                    limit_cgroup,
                    usage_bytes: self.number(&dir.join(usage_file(*version))).unwrap_or(0),
                    anon_bytes: keyed(&stat, "anon"),
                    file_bytes: keyed(&stat, "file"),
                    oom_events: keyed(&events, "oom"),
                    oom_kill_events: keyed(&events, "oom_kill"),
                    failcnt: None,
                }
            }
            CgroupVersion::V1 => {
                let oom = self
                    .text(&dir.join("memory.oom_control"))
                    .unwrap_or_default();
                ContainerMemory {
                    cgroup_version: "v1",
                    cgroup: cgroup.into(),
                    limit_bytes,
                    limit_cgroup,
                    usage_bytes: self.number(&dir.join(usage_file(*version))).unwrap_or(0),
                    anon_bytes: keyed(&stat, "total_rss").or_else(|| keyed(&stat, "rss")),
                    file_bytes: keyed(&stat, "total_cache").or_else(|| keyed(&stat, "cache")),
                    oom_events: None,
                    oom_kill_events: keyed(&oom, "oom_kill"),
                    failcnt: self.number(&dir.join("memory.failcnt")),
                }
            }
        }
    }

    /// The lowest limit from `dir` up to `top`, and where it is set (relative to `top`).
    fn lowest_limit(&self) -> LowestLimit {
        let (top, version) = (&self.top, self.version);
        let mut lowest: LowestLimit = None;
        let mut at = self.dir.clone();
        loop {
            if let Some(limit) = self
                .number(&at.join(limit_file(version)))
                .filter(|&l| l < UNLIMITED)
            {
                if lowest.as_ref().is_none_or(|(l, _)| limit < *l) {
                    let name = at.strip_prefix(top).unwrap_or(&at).to_string_lossy();
                    lowest = Some((limit, format!("/{name}")));
                }
            }
            if at == *top || !at.starts_with(top) || !at.pop() {
                break;
            }
        }
        lowest
    }

    /// A cgroup file's text: a regular file of at most [`MAX_CGROUP_FILE_BYTES`], no link as its
    /// last component (and, inside another process's root, none anywhere on its path, nor `..`
    /// out of it); `None` otherwise or when unreadable.
    fn text(&self, path: &Path) -> Option<String> {
        let bytes = match &self.within {
            None => files::read_capped(path, Links::Refuse, MAX_CGROUP_FILE_BYTES),
            Some(root) => {
                let beneath = path.strip_prefix(root).ok()?;
                files::read_capped_in_root(root, beneath, MAX_CGROUP_FILE_BYTES)
            }
        };
        String::from_utf8(bytes.ok()?).ok()
    }

    /// A file holding one number; `max` (v2 unlimited) and unreadable files are `None`.
    fn number(&self, path: &Path) -> Option<u64> {
        self.text(path)?.trim().parse().ok()
    }
}

fn limit_file(version: CgroupVersion) -> &'static str {
    match version {
        CgroupVersion::V1 => "memory.limit_in_bytes",
        CgroupVersion::V2 => "memory.max",
    }
}

fn usage_file(version: CgroupVersion) -> &'static str {
    match version {
        CgroupVersion::V1 => "memory.usage_in_bytes",
        CgroupVersion::V2 => "memory.current",
    }
}

/// The most read of one cgroup file (`memory.stat` is a few KiB).
const MAX_CGROUP_FILE_BYTES: u64 = 64 << 10;

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
    fn v2_pressure_is_read_from_the_own_cgroup() {
        let pressure = "some avg10=12.34 avg60=5.00 avg300=1.00 total=123456\n\
                        full avg10=3.21 avg60=1.00 avg300=0.50 total=4567\n";
        let t = Tree::new(
            "v2-psi",
            &[
                ("proc/self/cgroup", "0::/app\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/cgroup.controllers", "memory\n"),
                ("sys/fs/cgroup/app/memory.max", "536870912\n"),
                ("sys/fs/cgroup/app/memory.current", "1000\n"),
                ("sys/fs/cgroup/app/memory.pressure", pressure),
                (
                    "sys/fs/cgroup/memory.pressure",
                    "some avg10=99.00 avg60=0 avg300=0 total=0\n",
                ),
            ],
        );
        assert_eq!(memory_pressure_under(&t.0), Some(12.34));
        std::fs::remove_file(t.0.join("sys/fs/cgroup/app/memory.pressure")).unwrap();
        assert_eq!(memory_pressure_under(&t.0), None, "no PSI: unknown");
    }

    #[test]
    fn v1_has_no_cgroup_pressure() {
        let t = Tree::new(
            "v1-psi",
            &[
                ("proc/self/cgroup", "4:memory:/job\n"),
                ("proc/self/mountinfo", V1_MOUNTINFO),
                ("sys/fs/cgroup/memory/job/memory.usage_in_bytes", "1\n"),
                (
                    "sys/fs/cgroup/memory/job/memory.pressure",
                    "some avg10=1.00\n",
                ),
            ],
        );
        assert_eq!(memory_pressure_under(&t.0), None);
    }

    #[test]
    fn pressure_lines_parse_or_are_unknown() {
        assert_eq!(
            some_avg10("some avg10=0.50 avg60=0.10 avg300=0 total=1\n"),
            Some(0.5)
        );
        assert_eq!(some_avg10("full avg10=0.50\n"), None);
        assert_eq!(some_avg10("some avg10=x\n"), None);
        assert_eq!(some_avg10(""), None);
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
    fn another_process_v2_is_read_through_its_root_with_its_own_mounts() {
        // A container's JVM (pid 4242): its cgroup namespace root is its cgroup, its files under
        // its root. Our own tree has a different limit at the same place: it must not be read.
        let its = "30 22 0:26 /kubepods/pod1/ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let t = Tree::new(
            "of-v2",
            &[
                ("proc/4242/cgroup", "0::/kubepods/pod1/ctr\n"),
                ("proc/4242/mountinfo", its),
                ("proc/4242/root/sys/fs/cgroup/memory.max", "268435456\n"),
                ("proc/4242/root/sys/fs/cgroup/memory.current", "157286400\n"),
                ("proc/4242/root/sys/fs/cgroup/memory.stat", V2_STAT),
                ("proc/4242/root/sys/fs/cgroup/memory.events", V2_EVENTS),
                ("proc/self/cgroup", "0::/\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/memory.max", "1073741824\n"),
                ("sys/fs/cgroup/memory.current", "1\n"),
            ],
        );
        let m = container_memory_of_under(&t.0, 4242).unwrap();
        assert_eq!(m.cgroup_version, "v2");
        assert_eq!(m.cgroup, "/kubepods/pod1/ctr");
        assert_eq!(m.limit_bytes, Some(256 << 20));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/"));
        assert_eq!(m.usage_bytes, 150 << 20);
        assert_eq!(m.anon_bytes, Some(100 << 20));
        assert_eq!((m.oom_events, m.oom_kill_events), (Some(3), Some(2)));

        // Its root not entered (no files there): the hierarchy mounted here, at its full path.
        std::fs::remove_dir_all(t.0.join("proc/4242/root")).unwrap();
        let host = [
            ("sys/fs/cgroup/kubepods/memory.max", "536870912\n"),
            ("sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "max\n"),
            ("sys/fs/cgroup/kubepods/pod1/ctr/memory.current", "4096\n"),
        ];
        for (path, content) in host {
            let file = t.0.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        let m = container_memory_of_under(&t.0, 4242).unwrap();
        assert_eq!(m.limit_bytes, Some(512 << 20));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/kubepods"));
        assert_eq!(m.usage_bytes, 4096);
        assert_eq!(
            container_memory_of_under(&t.0, 4243),
            None,
            "no such process"
        );
    }

    #[test]
    fn another_process_v1_and_its_planted_files() {
        let t = Tree::new(
            "of-v1",
            &[
                (
                    "proc/7/cgroup",
                    "4:memory:/job/task\n3:cpu,cpuacct:/job\n0::/\n",
                ),
                ("proc/7/mountinfo", V1_MOUNTINFO),
                (
                    "proc/7/root/sys/fs/cgroup/memory/job/task/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
                (
                    "proc/7/root/sys/fs/cgroup/memory/job/task/memory.usage_in_bytes",
                    "125829120\n",
                ),
                (
                    "proc/7/root/sys/fs/cgroup/memory/job/memory.limit_in_bytes",
                    "2147483648\n",
                ),
            ],
        );
        let task = t.0.join("proc/7/root/sys/fs/cgroup/memory/job/task");
        // A FIFO where memory.stat should be (it would block a plain read), an oversized
        // memory.oom_control, and a link to a file of ours as memory.failcnt: none is read.
        let fifo = std::ffi::CString::new(task.join("memory.stat").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let big = format!("oom_kill 9\n{}", " ".repeat(1 << 20));
        std::fs::write(task.join("memory.oom_control"), big).unwrap();
        std::fs::write(t.0.join("ours"), "77\n").unwrap();
        std::os::unix::fs::symlink(t.0.join("ours"), task.join("memory.failcnt")).unwrap();

        let m = container_memory_of_under(&t.0, 7).unwrap();
        assert_eq!(m.cgroup_version, "v1");
        assert_eq!(m.cgroup, "/job/task");
        assert_eq!(m.limit_bytes, Some(2 << 30));
        assert_eq!(m.limit_cgroup.as_deref(), Some("/job"));
        assert_eq!(m.usage_bytes, 120 << 20);
        assert_eq!(
            (m.anon_bytes, m.file_bytes),
            (None, None),
            "the FIFO is not read"
        );
        assert_eq!(m.oom_kill_events, None, "the oversized file is not read");
        assert_eq!(m.failcnt, None, "the link is not followed");
    }

    #[test]
    fn a_link_anywhere_in_another_process_tree_leads_nowhere_out_of_it() {
        // The target's /sys/fs/cgroup/memory/job is a link to a tree of ours, and a second limit
        // file is reached by `..` from a link: reading them would report our numbers as its.
        let t = Tree::new(
            "of-links",
            &[
                (
                    "proc/7/cgroup",
                    "4:memory:/job/task
0::/
",
                ),
                ("proc/7/mountinfo", V1_MOUNTINFO),
                (
                    "ours/task/memory.usage_in_bytes",
                    "125829120
",
                ),
                (
                    "ours/memory.limit_in_bytes",
                    "2147483648
",
                ),
                ("proc/7/root/sys/fs/cgroup/memory/.keep", ""),
            ],
        );
        let memory = t.0.join("proc/7/root/sys/fs/cgroup/memory");
        std::os::unix::fs::symlink(t.0.join("ours"), memory.join("job")).unwrap();
        assert!(
            std::fs::read(memory.join("job/task/memory.usage_in_bytes")).is_ok(),
            "the link itself works for a plain read"
        );
        assert_eq!(
            container_memory_of_under(&t.0, 7),
            None,
            "nothing read through the link"
        );

        // The same files as a real directory of the target: read.
        std::fs::remove_file(memory.join("job")).unwrap();
        std::fs::create_dir_all(memory.join("job/task")).unwrap();
        std::fs::write(memory.join("job/task/memory.usage_in_bytes"), "4096\n").unwrap();
        let m = container_memory_of_under(&t.0, 7).unwrap();
        assert_eq!((m.usage_bytes, m.limit_bytes), (4096, None));
    }

    #[test]
    fn the_real_system_reads_another_process_as_it_reads_itself() {
        let Some(own) = container_memory() else {
            return; // no memory controller mounted: nothing to compare
        };
        let of = container_memory_of(std::process::id()).unwrap();
        assert_eq!(
            (of.cgroup_version, &of.cgroup, of.limit_bytes),
            (own.cgroup_version, &own.cgroup, own.limit_bytes)
        );
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
