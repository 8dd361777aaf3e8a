//! Finds this process's cgroup directory for a controller, and the lowest CPU quota from the CPU
//! controller's directory up to the hierarchy's root.

use crate::text::{for_each_line, parse_i64, read_small, trim, PathBuf};

/// Which cgroup interface holds a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

/// A CFS bandwidth limit: `quota_us` of CPU time per `period_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
}

impl CpuQuota {
    /// `ceil(quota / period)`: whole CPUs, as the JVM rounds.
    pub fn ceil_cpus(&self) -> u32 {
        let cpus = self.quota_us.div_ceil(self.period_us.max(1));
        u32::try_from(cpus).unwrap_or(u32::MAX)
    }

    /// The quota in thousandths of a CPU.
    pub fn millicpus(&self) -> u64 {
        self.quota_us.saturating_mul(1000) / self.period_us.max(1)
    }

    fn is_lower_than(&self, other: &CpuQuota) -> bool {
        u128::from(self.quota_us) * u128::from(other.period_us)
            < u128::from(other.quota_us) * u128::from(self.period_us)
    }
}

/// The CPU controller in use and the lowest quota up the hierarchy (`None`: unlimited).
/// Returns `None` when no CPU controller is mounted for this process.
pub(crate) fn lowest_quota(root: &[u8]) -> Option<(CgroupVersion, Option<CpuQuota>)> {
    let CgroupDir {
        version,
        mut dir,
        mount_len,
        ..
    } = cgroup_dir(root, b"cpu")?;
    let mut lowest: Option<CpuQuota> = None;
    loop {
        if let Some(q) = quota_at(version, &mut dir) {
            if lowest.is_none_or(|l| q.is_lower_than(&l)) {
                lowest = Some(q);
            }
        }
        if dir.as_bytes().len() <= mount_len {
            break;
        }
        let parent = dir.as_bytes().iter().rposition(|&b| b == b'/').unwrap_or(0);
        dir.truncate(parent.max(mount_len));
    }
    Some((version, lowest))
}

/// Where a controller's files for this process are, found by [`cgroup_dir`].
pub struct CgroupDir {
    version: CgroupVersion,
    /// `root`, the controller's mount point, then this process's cgroup below the mount's root.
    dir: PathBuf,
    /// How much of `dir` is `root` and the mount point: walks up the hierarchy stop there.
    mount_len: usize,
    cgroup: PathBuf,
}

impl CgroupDir {
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// The directory holding this process's files for the controller.
    pub fn dir(&self) -> &[u8] {
        self.dir.as_bytes()
    }

    /// The controller's mount point under `root`: the top of the hierarchy visible here.
    pub fn mount_point(&self) -> &[u8] {
        &self.dir.as_bytes()[..self.mount_len]
    }

    /// This process's cgroup as `/proc/self/cgroup` names it.
    pub fn cgroup(&self) -> &[u8] {
        self.cgroup.as_bytes()
    }
}

/// Finds this process's cgroup directory for `controller` (`b"cpu"`, `b"memory"`, …) under `root`
/// (a fixture tree holding `proc/self/cgroup`, `proc/self/mountinfo` and the cgroup files; empty
/// for the real system). v1: the hierarchy listing the controller and the `cgroup` mount whose
/// super options name it; otherwise v2: the unified hierarchy and the `cgroup2` mount, whether or
/// not that hierarchy enables the controller (callers that care check its files). `None` when
/// neither is there. Allocation-free: the preload allocator calls this before its heap exists.
pub fn cgroup_dir(root: &[u8], controller: &[u8]) -> Option<CgroupDir> {
    find(root, &ProcEntry::own(), Mounts::Its, controller)
}

/// Whose mounts find the cgroup's files, for [`cgroup_dir_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mounts {
    /// The process's own (`/proc/<pid>/mountinfo`), its files read through its root
    /// (`/proc/<pid>/root`): right for a process in another mount namespace, a container's.
    Its,
    /// This process's (`/proc/self/mountinfo`) and its files: where the other process's root
    /// cannot be entered, and the hierarchy is mounted here too (the host's mount).
    Ours,
}

/// Finds process `pid`'s cgroup directory for `controller`, as [`cgroup_dir`] finds this
/// process's: from `/proc/<pid>/cgroup` (paths as this process's cgroup namespace names them) and
/// the mounts `mounts` says. `root` as for [`cgroup_dir`]: a fixture tree then holds
/// `proc/<pid>/cgroup`, `proc/<pid>/mountinfo` and, for [`Mounts::Its`], the cgroup files under
/// `proc/<pid>/root/`.
pub fn cgroup_dir_of(
    root: &[u8],
    pid: u32,
    mounts: Mounts,
    controller: &[u8],
) -> Option<CgroupDir> {
    find(root, &ProcEntry::of(pid), mounts, controller)
}

/// `self` or a pid in decimal: the `/proc` entry of the process looked up.
struct ProcEntry {
    name: [u8; 10],
    len: usize,
    own: bool,
}

impl ProcEntry {
    fn own() -> Self {
        let mut name = [0u8; 10];
        name[..4].copy_from_slice(b"self");
        ProcEntry {
            name,
            len: 4,
            own: true,
        }
    }

    fn of(pid: u32) -> Self {
        let mut digits = [0u8; 10];
        let mut len = 0;
        let mut rest = pid;
        loop {
            digits[len] = b'0' + (rest % 10) as u8;
            len += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        digits[..len].reverse();
        ProcEntry {
            name: digits,
            len,
            own: false,
        }
    }

    fn name(&self) -> &[u8] {
        &self.name[..self.len]
    }

    /// `<root>/proc/<entry>/<file>`.
    fn path(&self, root: &[u8], file: &[u8]) -> Option<PathBuf> {
        let mut path = PathBuf::new();
        (path.push(root)
            && path.push(b"/proc/")
            && path.push(self.name())
            && path.push(b"/")
            && path.push(file))
        .then_some(path)
    }
}

fn find(root: &[u8], entry: &ProcEntry, mounts: Mounts, controller: &[u8]) -> Option<CgroupDir> {
    let mut v1_path = PathBuf::new();
    let mut v2_path = PathBuf::new();
    let (mut has_v1, mut has_v2) = (false, false);
    let mut file = entry.path(root, b"cgroup")?;
    for_each_line(&mut file, |line| {
        // hierarchy-ID:controller-list:cgroup-path
        let mut parts = line.splitn(3, |&b| b == b':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return true;
        };
        if id == b"0" && controllers.is_empty() {
            has_v2 = v2_path.replace(path);
        } else if controllers.split(|&b| b == b',').any(|c| c == controller) {
            has_v1 = v1_path.replace(path);
        }
        true
    })?;

    let mut v1_mount = Mount::new();
    let mut v2_mount = Mount::new();
    // Another process's files are read through its root when its own mounts are used.
    let through_its_root = !entry.own && mounts == Mounts::Its;
    let mut file = match mounts {
        Mounts::Its => entry.path(root, b"mountinfo")?,
        Mounts::Ours => ProcEntry::own().path(root, b"mountinfo")?,
    };
    for_each_line(&mut file, |line| {
        if let Some(m) = parse_mountinfo(line) {
            if m.fstype == b"cgroup"
                && m.super_options
                    .split(|&b| b == b',')
                    .any(|o| o == controller)
            {
                v1_mount.set(m.root, m.mount_point);
            } else if m.fstype == b"cgroup2" {
                v2_mount.set(m.root, m.mount_point);
            }
        }
        true
    })?;

    // The JVM prefers a v1 controller when both exist (hybrid hierarchies).
    let (version, mount, cgroup) = if has_v1 && v1_mount.found {
        (CgroupVersion::V1, &v1_mount, v1_path)
    } else if has_v2 && v2_mount.found {
        (CgroupVersion::V2, &v2_mount, v2_path)
    } else {
        return None;
    };
    let mut dir = if through_its_root {
        entry.path(root, b"root")?
    } else {
        let mut dir = PathBuf::new();
        dir.push(root).then_some(())?;
        dir
    };
    dir.push(mount.point.as_bytes()).then_some(())?;
    let mount_len = dir.as_bytes().len();
    let relative = below_mount_root(cgroup.as_bytes(), mount.root.as_bytes());
    if relative != b"/" {
        dir.push(relative).then_some(())?;
    }
    Some(CgroupDir {
        version,
        dir,
        mount_len,
        cgroup,
    })
}

/// Inside a container the mount's root is the container's own cgroup: strip it. A cgroup outside
/// the mount's root is not visible here; the mount point is the nearest directory that is.
fn below_mount_root<'a>(cgroup: &'a [u8], mount_root: &[u8]) -> &'a [u8] {
    if mount_root == b"/" {
        return cgroup;
    }
    match cgroup.strip_prefix(mount_root) {
        Some(rest) if rest.is_empty() || rest[0] == b'/' => rest,
        _ => b"",
    }
}

fn quota_at(version: CgroupVersion, dir: &mut PathBuf) -> Option<CpuQuota> {
    let base = dir.as_bytes().len();
    let mut buf = [0u8; 128];
    let quota = match version {
        CgroupVersion::V2 => {
            dir.push(b"/cpu.max");
            let text = read_small(dir, &mut buf);
            dir.truncate(base);
            // "max 100000" (unlimited) or "<quota> <period>"
            let mut words = trim(text?).split(|&b| b == b' ');
            let quota = parse_i64(words.next()?)?;
            let period = parse_i64(words.next()?)?;
            (quota, period)
        }
        CgroupVersion::V1 => {
            dir.push(b"/cpu.cfs_quota_us");
            let quota = read_small(dir, &mut buf).and_then(parse_i64);
            dir.truncate(base);
            dir.push(b"/cpu.cfs_period_us");
            let period = read_small(dir, &mut buf).and_then(parse_i64);
            dir.truncate(base);
            (quota?, period?)
        }
    };
    match quota {
        (q, p) if q > 0 && p > 0 => Some(CpuQuota {
            quota_us: q as u64,
            period_us: p as u64,
        }),
        _ => None,
    }
}

struct Mount {
    found: bool,
    root: PathBuf,
    point: PathBuf,
}

impl Mount {
    fn new() -> Self {
        Mount {
            found: false,
            root: PathBuf::new(),
            point: PathBuf::new(),
        }
    }

    fn set(&mut self, root: &[u8], point: &[u8]) {
        self.found = self.root.replace(root) && self.point.replace(point);
    }
}

struct MountInfo<'a> {
    root: &'a [u8],
    mount_point: &'a [u8],
    fstype: &'a [u8],
    super_options: &'a [u8],
}

/// `36 35 98:0 /root /mount/point rw,noatime master:1 - fstype source super,options`
fn parse_mountinfo(line: &[u8]) -> Option<MountInfo<'_>> {
    let mut fields = line.split(|&b| b == b' ');
    let root = fields.nth(3)?;
    let mount_point = fields.next()?;
    let mut fields = fields.skip_while(|f| *f != b"-");
    fields.next()?;
    let fstype = fields.next()?;
    let _source = fields.next()?;
    let super_options = fields.next()?;
    Some(MountInfo {
        root,
        mount_point,
        fstype,
        super_options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{detect_under, ContainerCpus};
    use std::path::Path;
    use std::string::String;

    /// A fixture tree in the temporary directory, removed when dropped; reads as its path.
    struct Tree(String);

    impl core::ops::Deref for Tree {
        type Target = str;
        fn deref(&self) -> &str {
            &self.0
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Writes a fixture tree: `files` are (relative path, content).
    fn tree(name: &str, files: &[(&str, &str)]) -> Tree {
        let dir = std::env::temp_dir().join(std::format!("cc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, content) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, content).unwrap();
        }
        Tree(String::from(dir.to_str().unwrap()))
    }

    const V2_MOUNTINFO: &str = "22 1 0:21 / /proc rw - proc proc rw\n\
        30 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    const V1_MOUNTINFO: &str = "22 1 0:21 / /proc rw - proc proc rw\n\
        33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:14 - cgroup cgroup rw,cpu,cpuacct\n\
        34 25 0:30 / /sys/fs/cgroup/memory rw,nosuid shared:15 - cgroup cgroup rw,memory\n";

    fn cpus(root: &str, affinity: u32) -> ContainerCpus {
        detect_under(root.as_bytes(), affinity)
    }

    #[test]
    fn v2_unlimited() {
        let root = tree(
            "v2-max",
            &[
                ("proc/self/cgroup", "0::/app\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/app/cpu.max", "max 100000\n"),
                ("sys/fs/cgroup/cpu.max", "max 100000\n"),
            ],
        );
        let c = cpus(&root, 8);
        assert_eq!(c.cgroup, Some(CgroupVersion::V2));
        assert_eq!(c.quota, None);
        assert_eq!(c.effective, 8);
    }

    #[test]
    fn v2_fractional_quota_rounds_up() {
        let root = tree(
            "v2-frac",
            &[
                ("proc/self/cgroup", "0::/app\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/app/cpu.max", "150000 100000\n"),
            ],
        );
        let c = cpus(&root, 8);
        assert_eq!(c.quota.unwrap().millicpus(), 1500);
        assert_eq!(c.effective, 2);
    }

    #[test]
    fn v2_nested_lowest_limit_wins() {
        let root = tree(
            "v2-nested",
            &[
                ("proc/self/cgroup", "0::/kubepods/pod1/ctr\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n"),
                ("sys/fs/cgroup/kubepods/pod1/cpu.max", "300000 100000\n"),
                ("sys/fs/cgroup/kubepods/cpu.max", "50000 50000\n"),
            ],
        );
        let c = cpus(&root, 16);
        assert_eq!(
            c.quota,
            Some(CpuQuota {
                quota_us: 50000,
                period_us: 50000
            })
        );
        assert_eq!(c.effective, 1);
    }

    #[test]
    fn affinity_below_quota_wins() {
        let root = tree(
            "v2-affinity",
            &[
                ("proc/self/cgroup", "0::/\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
                ("sys/fs/cgroup/cpu.max", "400000 100000\n"),
            ],
        );
        assert_eq!(cpus(&root, 2).effective, 2);
    }

    #[test]
    fn v1_quota_and_unlimited() {
        let root = tree(
            "v1",
            &[
                (
                    "proc/self/cgroup",
                    "5:memory:/job\n4:cpu,cpuacct:/job\n0::/\n",
                ),
                ("proc/self/mountinfo", V1_MOUNTINFO),
                ("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "250000\n"),
                (
                    "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us",
                    "100000\n",
                ),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
            ],
        );
        let c = cpus(&root, 32);
        assert_eq!(c.cgroup, Some(CgroupVersion::V1));
        assert_eq!(c.effective, 3);

        let unlimited = tree(
            "v1-unlimited",
            &[
                ("proc/self/cgroup", "4:cpu,cpuacct:/\n"),
                ("proc/self/mountinfo", V1_MOUNTINFO),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
            ],
        );
        assert_eq!(cpus(&unlimited, 32).effective, 32);
    }

    #[test]
    fn container_mount_root_is_stripped() {
        // Inside a container, /proc/self/cgroup names the host path and the mount's root is it.
        let mountinfo = "40 30 0:29 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let root = tree(
            "v1-docker",
            &[
                ("proc/self/cgroup", "3:cpu:/docker/abc\n"),
                ("proc/self/mountinfo", mountinfo),
                ("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "100000\n"),
                ("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
            ],
        );
        assert_eq!(cpus(&root, 64).effective, 1);
    }

    /// A fixture tree with only `proc/self/cgroup` and `proc/self/mountinfo`: enough to look up.
    fn proc_tree(name: &str, cgroup: &str, mountinfo: &str) -> Tree {
        tree(
            name,
            &[
                ("proc/self/cgroup", cgroup),
                ("proc/self/mountinfo", mountinfo),
            ],
        )
    }

    /// `cgroup_dir` of `controller` as text: (version, cgroup, mount point and dir below `root`).
    fn lookup(root: &str, controller: &[u8]) -> Option<(CgroupVersion, String, String, String)> {
        let found = cgroup_dir(root.as_bytes(), controller)?;
        let text = |bytes: &[u8]| String::from(std::str::from_utf8(bytes).unwrap());
        let below_root = |bytes: &[u8]| text(bytes.strip_prefix(root.as_bytes()).unwrap());
        Some((
            found.version(),
            text(found.cgroup()),
            below_root(found.mount_point()),
            below_root(found.dir()),
        ))
    }

    #[test]
    fn v1_memory_controller_dir() {
        let root = proc_tree(
            "dir-v1",
            "5:memory:/job/task\n4:cpu,cpuacct:/job\n0::/\n",
            V1_MOUNTINFO,
        );
        assert_eq!(
            lookup(&root, b"memory"),
            Some((
                CgroupVersion::V1,
                "/job/task".into(),
                "/sys/fs/cgroup/memory".into(),
                "/sys/fs/cgroup/memory/job/task".into()
            ))
        );
        let cpu = lookup(&root, b"cpuacct").unwrap();
        assert_eq!(
            cpu.3, "/sys/fs/cgroup/cpu,cpuacct/job",
            "one of several controllers"
        );
    }

    #[test]
    fn v2_dir_for_any_controller() {
        let root = proc_tree("dir-v2", "0::/kubepods/pod1/ctr\n", V2_MOUNTINFO);
        for controller in [&b"memory"[..], b"cpu", b"pids"] {
            assert_eq!(
                lookup(&root, controller),
                Some((
                    CgroupVersion::V2,
                    "/kubepods/pod1/ctr".into(),
                    "/sys/fs/cgroup".into(),
                    "/sys/fs/cgroup/kubepods/pod1/ctr".into()
                ))
            );
        }
        let at_root = proc_tree("dir-v2-root", "0::/\n", V2_MOUNTINFO);
        assert_eq!(lookup(&at_root, b"memory").unwrap().3, "/sys/fs/cgroup");
    }

    #[test]
    fn namespaced_mount_root_is_stripped_from_the_dir() {
        let mountinfo = "30 22 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let root = proc_tree("dir-ns", "0::/kubepods/pod1/ctr\n", mountinfo);
        let (_, cgroup, mount, dir) = lookup(&root, b"memory").unwrap();
        assert_eq!(cgroup, "/kubepods/pod1/ctr");
        assert_eq!(
            (mount.as_str(), dir.as_str()),
            ("/sys/fs/cgroup", "/sys/fs/cgroup/ctr")
        );

        // A cgroup beside the mount's root, not below it, is not visible: the mount point is.
        let beside = proc_tree("dir-ns-beside", "0::/kubepods/pod12/ctr\n", mountinfo);
        assert_eq!(lookup(&beside, b"memory").unwrap().3, "/sys/fs/cgroup");
    }

    #[test]
    fn another_process_is_found_through_its_own_mounts_and_root() {
        // A container's JVM, pid 4242 here: its cgroup namespace is not ours, its v2 mount's root
        // is its cgroup, its files are under its root.
        let container = "30 22 0:26 /kubepods/pod1/ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let root = tree(
            "dir-of-v2",
            &[
                ("proc/4242/cgroup", "0::/kubepods/pod1/ctr\n"),
                ("proc/4242/mountinfo", container),
                ("proc/self/cgroup", "0::/\n"),
                ("proc/self/mountinfo", V2_MOUNTINFO),
            ],
        );
        let found = cgroup_dir_of(root.as_bytes(), 4242, Mounts::Its, b"memory").unwrap();
        let below = |bytes: &[u8]| {
            String::from(std::str::from_utf8(bytes.strip_prefix(root.as_bytes()).unwrap()).unwrap())
        };
        assert_eq!(found.version(), CgroupVersion::V2);
        assert_eq!(found.cgroup(), b"/kubepods/pod1/ctr");
        assert_eq!(below(found.dir()), "/proc/4242/root/sys/fs/cgroup");
        assert_eq!(below(found.mount_point()), "/proc/4242/root/sys/fs/cgroup");

        // Through our mounts: the host's tree, the cgroup's whole path below it.
        let ours = cgroup_dir_of(root.as_bytes(), 4242, Mounts::Ours, b"memory").unwrap();
        assert_eq!(below(ours.dir()), "/sys/fs/cgroup/kubepods/pod1/ctr");
        assert_eq!(below(ours.mount_point()), "/sys/fs/cgroup");

        // v1, pid 7: its memory hierarchy's line, not the CPU one.
        let v1 = proc_tree("dir-of-v1", "", "");
        let v1_files = [
            (
                "proc/7/cgroup",
                "5:memory:/job/task\n4:cpu,cpuacct:/job\n0::/\n",
            ),
            ("proc/7/mountinfo", V1_MOUNTINFO),
        ];
        for (path, content) in v1_files {
            let file = Path::new(&*v1).join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        let found = cgroup_dir_of(v1.as_bytes(), 7, Mounts::Its, b"memory").unwrap();
        assert_eq!(found.version(), CgroupVersion::V1);
        assert_eq!(
            std::str::from_utf8(found.dir().strip_prefix(v1.as_bytes()).unwrap()).unwrap(),
            "/proc/7/root/sys/fs/cgroup/memory/job/task"
        );
        assert!(cgroup_dir_of(v1.as_bytes(), 8, Mounts::Its, b"memory").is_none());
    }

    #[test]
    fn missing_controller_has_no_dir() {
        // v1 only, without a memory hierarchy: no unified tree to fall back to.
        let cpu_only = "33 25 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let root = proc_tree("dir-missing", "4:cpu:/job\n", cpu_only);
        assert!(lookup(&root, b"memory").is_none());
        assert!(lookup(&root, b"cpu").is_some());
        // Listed in /proc/self/cgroup but not mounted here.
        let unmounted = proc_tree("dir-unmounted", "5:memory:/job\n4:cpu:/job\n", cpu_only);
        assert!(lookup(&unmounted, b"memory").is_none());
        assert!(cgroup_dir(b"/nonexistent-root", b"memory").is_none());
    }

    #[test]
    fn no_cgroup_at_all_means_affinity() {
        let root = tree(
            "none",
            &[("proc/self/cgroup", ""), ("proc/self/mountinfo", "")],
        );
        let c = cpus(&root, 4);
        assert_eq!((c.cgroup, c.effective), (None, 4));
        let missing = cpus("/nonexistent-root", 4);
        assert_eq!((missing.cgroup, missing.effective), (None, 4));
        assert!(!Path::new("/nonexistent-root").exists());
    }
}
