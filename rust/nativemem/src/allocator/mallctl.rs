//! A small typed layer over a `mallctl` found at run time.
//!
//! tikv-jemalloc-ctl binds to the jemalloc linked into the crate; it cannot target a
//! `mallctl` resolved with `dlsym`, which is the only one whose numbers describe this process.
//! So this layer stays small: names resolved to MIBs once and cached, typed reads and writes,
//! errno mapped to errors that name the key.

use super::keys::Key;
use super::AllocatorError;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

type MallctlFn =
    unsafe extern "C" fn(*const c_char, *mut c_void, *mut usize, *mut c_void, usize) -> c_int;
type NameToMibFn = unsafe extern "C" fn(*const c_char, *mut usize, *mut usize) -> c_int;
type ByMibFn =
    unsafe extern "C" fn(*const usize, usize, *mut c_void, *mut usize, *mut c_void, usize) -> c_int;
pub(super) type WriteFn = unsafe extern "C" fn(*mut c_void, *const c_char);
pub(super) type StatsPrintFn = unsafe extern "C" fn(Option<WriteFn>, *mut c_void, *const c_char);

/// jemalloc's entry points, as resolved from the process.
#[derive(Clone, Copy)]
pub struct MallctlFns {
    mallctl: MallctlFn,
    name_to_mib: Option<NameToMibFn>,
    by_mib: Option<ByMibFn>,
    pub(super) stats_print: Option<StatsPrintFn>,
}

impl MallctlFns {
    /// Wraps raw symbol addresses; `mallctl` must be non-null, the others may be null.
    pub(super) fn new(
        mallctl: *mut c_void,
        name_to_mib: *mut c_void,
        by_mib: *mut c_void,
        stats_print: *mut c_void,
    ) -> Self {
        // SAFETY: the symbols are jemalloc's, whose C signatures the types above spell out.
        unsafe {
            MallctlFns {
                mallctl: std::mem::transmute::<*mut c_void, MallctlFn>(mallctl),
                name_to_mib: (!name_to_mib.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, NameToMibFn>(name_to_mib)),
                by_mib: (!by_mib.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, ByMibFn>(by_mib)),
                stats_print: (!stats_print.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, StatsPrintFn>(stats_print)),
            }
        }
    }
}

/// A value that can be read from or written to a mallctl key of the same C type.
pub trait CtlValue: Copy + Default {}
impl CtlValue for bool {}
impl CtlValue for u32 {}
impl CtlValue for u64 {}
impl CtlValue for usize {}
impl CtlValue for isize {}
impl CtlValue for *const c_char {}

/// Typed access to the process's jemalloc.
pub struct Mallctl {
    pub(super) fns: MallctlFns,
    mibs: Mutex<HashMap<String, Mib>>,
}

/// A resolved name: copied out of the cache without allocating.
#[derive(Clone, Copy)]
struct Mib {
    parts: [usize; MAX_MIB_LEN],
    len: usize,
    /// Where a `<i>` component sits, for keys that have one.
    index_at: Option<usize>,
}

/// The longest MIB jemalloc uses (e.g. `stats.arenas.<i>.bins.<j>.curregs` has 6 parts).
const MAX_MIB_LEN: usize = 8;

impl Mallctl {
    pub(super) fn new(fns: MallctlFns) -> Self {
        Mallctl {
            fns,
            mibs: Mutex::new(HashMap::new()),
        }
    }

    /// Reads a key whose C type matches `T`.
    pub fn read<T: CtlValue>(&self, key: &str) -> Result<T, AllocatorError> {
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        self.call(
            key,
            &mut value as *mut T as *mut c_void,
            &mut len,
            std::ptr::null_mut(),
            0,
        )?;
        Ok(value)
    }

    /// Reads an integer or boolean key of any width (`size_t`, `uint64_t`, `ssize_t`,
    /// `unsigned`, `bool`), for callers that hold only the key's name: only keys that
    /// [`check_plain_read`](super::keys::check_plain_read) admits, since for others a read acts
    /// or returns a pointer.
    pub fn read_integer(&self, key: &str) -> Result<i64, AllocatorError> {
        super::keys::check_plain_read(key)?;
        let wrong_size = |e: &AllocatorError| matches!(e, AllocatorError::Mallctl { errno, .. } if *errno == libc::EINVAL);
        match self.read::<u64>(key) {
            Ok(v) => return Ok(v as i64),
            Err(e) if !wrong_size(&e) => return Err(e),
            Err(_) => {}
        }
        match self.read::<u32>(key) {
            Ok(v) => return Ok(i64::from(v)),
            Err(e) if !wrong_size(&e) => return Err(e),
            Err(_) => {}
        }
        self.read::<bool>(key).map(i64::from)
    }

    /// Writes a key whose C type matches `T`.
    pub fn write<T: CtlValue>(&self, key: &str, mut value: T) -> Result<(), AllocatorError> {
        let len = std::mem::size_of::<T>();
        self.call(
            key,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut value as *mut T as *mut c_void,
            len,
        )
    }

    /// Runs a key that takes no value, such as `arena.<i>.purge` or `thread.tcache.flush`.
    pub fn run(&self, key: &str) -> Result<(), AllocatorError> {
        self.call(
            key,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    }

    /// Reads a `const char *` key, such as `version` or `opt.metadata_thp`.
    pub fn read_string(&self, key: &str) -> Result<String, AllocatorError> {
        let ptr: *const c_char = self.read(key)?;
        if ptr.is_null() {
            return Ok(String::new());
        }
        // SAFETY: jemalloc returns pointers to static NUL-terminated strings for these keys.
        Ok(unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned())
    }

    /// Reads a key with one index component written as `<i>`, as the manual spells it
    /// (`stats.arenas.<i>.pdirty`). The MIB is resolved once and the index patched in.
    pub fn read_indexed<T: CtlValue>(&self, key: &str, index: usize) -> Result<T, AllocatorError> {
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        let out = &mut value as *mut T as *mut c_void;
        self.call_indexed(key, index, out, &mut len, std::ptr::null_mut(), 0)?;
        Ok(value)
    }

    /// Writes a key with one `<i>` component, such as `arena.<i>.dirty_decay_ms`.
    pub fn write_indexed<T: CtlValue>(
        &self,
        key: &str,
        index: usize,
        mut value: T,
    ) -> Result<(), AllocatorError> {
        let len = std::mem::size_of::<T>();
        let new = &mut value as *mut T as *mut c_void;
        self.call_indexed(
            key,
            index,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            new,
            len,
        )
    }

    /// Runs a key with one `<i>` component that takes no value, such as `arena.<i>.purge`.
    pub fn run_indexed(&self, key: &str, index: usize) -> Result<(), AllocatorError> {
        let null = std::ptr::null_mut();
        self.call_indexed(key, index, null, std::ptr::null_mut(), null, 0)
    }

    /// Reads a declared key ([`super::keys`]), typed by its declaration.
    pub fn get<T: CtlValue>(&self, key: Key<T>) -> Result<T, AllocatorError> {
        self.read(key.name)
    }

    /// Reads a declared key with a `<i>` component at `index`.
    pub fn get_at<T: CtlValue>(&self, key: Key<T>, index: usize) -> Result<T, AllocatorError> {
        self.read_indexed(key.name, index)
    }

    /// Writes a declared key.
    pub fn set<T: CtlValue>(&self, key: Key<T>, value: T) -> Result<(), AllocatorError> {
        self.write(key.name, value)
    }

    /// Writes a declared key with a `<i>` component at `index`.
    pub fn set_at<T: CtlValue>(
        &self,
        key: Key<T>,
        index: usize,
        value: T,
    ) -> Result<(), AllocatorError> {
        self.write_indexed(key.name, index, value)
    }

    /// Runs a declared key that takes no value.
    pub fn act(&self, key: Key<()>) -> Result<(), AllocatorError> {
        self.run(key.name)
    }

    /// Runs a declared key with a `<i>` component that takes no value.
    pub fn act_at(&self, key: Key<()>, index: usize) -> Result<(), AllocatorError> {
        self.run_indexed(key.name, index)
    }

    /// Refreshes the statistics that `stats.*` keys report (they are cached until then).
    pub fn advance_epoch(&self) -> Result<u64, AllocatorError> {
        let mut epoch: u64 = 1;
        let mut len = std::mem::size_of::<u64>();
        let ptr = &mut epoch as *mut u64 as *mut c_void;
        self.call("epoch", ptr, &mut len, ptr, len)?;
        Ok(epoch)
    }

    fn call_indexed(
        &self,
        key: &str,
        index: usize,
        old: *mut c_void,
        old_len: *mut usize,
        new: *mut c_void,
        new_len: usize,
    ) -> Result<(), AllocatorError> {
        if !key.split('.').any(|part| part == "<i>") {
            return Err(AllocatorError::BadKey(key.into()));
        }
        let named = || key.replace("<i>", &index.to_string());
        let rc = match (
            self.mib(key).map_err(|e| rename(e, &named()))?,
            self.fns.by_mib,
        ) {
            (Some(mut mib), Some(by_mib)) => {
                let at = mib
                    .index_at
                    .ok_or_else(|| AllocatorError::BadKey(key.into()))?;
                mib.parts[at] = index;
                // SAFETY: as in `call`; the patched component is an index jemalloc range-checks.
                unsafe { by_mib(mib.parts.as_ptr(), mib.len, old, old_len, new, new_len) }
            }
            _ => return self.call(&named(), old, old_len, new, new_len),
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(self.error(&named(), rc))
        }
    }

    fn call(
        &self,
        key: &str,
        old: *mut c_void,
        old_len: *mut usize,
        new: *mut c_void,
        new_len: usize,
    ) -> Result<(), AllocatorError> {
        if key.contains("<i>") {
            return Err(AllocatorError::BadKey(key.into()));
        }
        let rc = match (self.mib(key)?, self.fns.by_mib) {
            // SAFETY: the MIB came from this jemalloc; buffers are sized by the caller's type.
            (Some(mib), Some(by_mib)) => unsafe {
                by_mib(mib.parts.as_ptr(), mib.len, old, old_len, new, new_len)
            },
            _ => {
                let name = CString::new(key).map_err(|_| AllocatorError::BadKey(key.into()))?;
                // SAFETY: as above, by name.
                unsafe { (self.fns.mallctl)(name.as_ptr(), old, old_len, new, new_len) }
            }
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(self.error(key, rc))
        }
    }

    /// Resolves and caches a key's MIB when this jemalloc exports the MIB interface. A `<i>`
    /// component is resolved as arena 0 and remembered, so callers patch in their index.
    fn mib(&self, key: &str) -> Result<Option<Mib>, AllocatorError> {
        let Some(name_to_mib) = self.fns.name_to_mib else {
            return Ok(None);
        };
        let mut cache = self.mibs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mib) = cache.get(key) {
            return Ok(Some(*mib));
        }
        let index_at = key.split('.').position(|part| part == "<i>");
        let name = CString::new(key.replace("<i>", "0"))
            .map_err(|_| AllocatorError::BadKey(key.into()))?;
        let mut mib = Mib {
            parts: [0; MAX_MIB_LEN],
            len: MAX_MIB_LEN,
            index_at,
        };
        // SAFETY: `parts` has room for `len` entries.
        let rc = unsafe { name_to_mib(name.as_ptr(), mib.parts.as_mut_ptr(), &mut mib.len) };
        if rc != 0 {
            return Err(self.error(key, rc));
        }
        cache.insert(key.to_owned(), mib);
        Ok(Some(mib))
    }

    fn error(&self, key: &str, errno: c_int) -> AllocatorError {
        match errno {
            libc::ENOENT => AllocatorError::UnknownKey {
                key: key.into(),
                version: self.version_for_errors(),
            },
            _ => AllocatorError::Mallctl {
                key: key.into(),
                errno,
                reason: reason(errno),
            },
        }
    }

    fn version_for_errors(&self) -> String {
        let mut ptr: *const c_char = std::ptr::null();
        let mut len = std::mem::size_of::<*const c_char>();
        // SAFETY: plain read of a static string pointer.
        let rc = unsafe {
            (self.fns.mallctl)(
                c"version".as_ptr(),
                &mut ptr as *mut _ as *mut c_void,
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 || ptr.is_null() {
            return "(version unknown)".into();
        }
        // SAFETY: static NUL-terminated string.
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Names the key the caller asked for, not the template its MIB was resolved from.
fn rename(error: AllocatorError, key: &str) -> AllocatorError {
    match error {
        AllocatorError::UnknownKey { version, .. } => AllocatorError::UnknownKey {
            key: key.into(),
            version,
        },
        AllocatorError::Mallctl { errno, reason, .. } => AllocatorError::Mallctl {
            key: key.into(),
            errno,
            reason,
        },
        other => other,
    }
}

/// What jemalloc's mallctl errno values mean (see `man jemalloc`, RETURN VALUES).
fn reason(errno: c_int) -> &'static str {
    match errno {
        libc::EINVAL => "invalid value or wrong value size for this key",
        libc::EPERM => "key is read-only, or writing it is not permitted now",
        libc::EAGAIN => "memory could not be allocated for the request",
        libc::EFAULT => "an interface with side effects failed",
        libc::ENOENT => "unknown key",
        _ => "unexpected error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // A fake jemalloc: names resolve to [1, 2, <index>, 3]; reading yields index × 10, and
    // index 99 does not exist.
    static RESOLVED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn fake_mallctl(
        _name: *const c_char,
        _old: *mut c_void,
        _old_len: *mut usize,
        _new: *mut c_void,
        _new_len: usize,
    ) -> c_int {
        libc::EINVAL
    }

    unsafe extern "C" fn fake_name_to_mib(
        name: *const c_char,
        mib: *mut usize,
        len: *mut usize,
    ) -> c_int {
        RESOLVED.fetch_add(1, Ordering::SeqCst);
        // Only the template resolved with arena 0 exists (no panics across extern "C").
        if unsafe { CStr::from_ptr(name) }.to_bytes() != b"stats.arenas.0.pdirty" {
            return libc::ENOENT;
        }
        let parts = [1, 2, 0, 3];
        unsafe {
            std::ptr::copy_nonoverlapping(parts.as_ptr(), mib, parts.len());
            *len = parts.len();
        }
        0
    }

    unsafe extern "C" fn fake_by_mib(
        mib: *const usize,
        len: usize,
        old: *mut c_void,
        _old_len: *mut usize,
        _new: *mut c_void,
        _new_len: usize,
    ) -> c_int {
        let mib = unsafe { std::slice::from_raw_parts(mib, len) };
        if mib[2] == 99 {
            return libc::ENOENT;
        }
        unsafe { *(old as *mut usize) = mib[2] * 10 };
        0
    }

    fn fake() -> Mallctl {
        Mallctl::new(MallctlFns::new(
            fake_mallctl as *mut c_void,
            fake_name_to_mib as *mut c_void,
            fake_by_mib as *mut c_void,
            std::ptr::null_mut(),
        ))
    }

    #[test]
    fn indexed_keys_resolve_once_and_patch_the_index() {
        let ctl = fake();
        let key = "stats.arenas.<i>.pdirty";
        let before = RESOLVED.load(Ordering::SeqCst);
        assert_eq!(ctl.read_indexed::<usize>(key, 7).unwrap(), 70);
        assert_eq!(ctl.read_indexed::<usize>(key, 4096).unwrap(), 40960);
        assert_eq!(RESOLVED.load(Ordering::SeqCst) - before, 1, "MIB cached");
        let e = ctl.read_indexed::<usize>(key, 99).unwrap_err();
        assert!(
            matches!(&e, AllocatorError::UnknownKey { key, .. } if key == "stats.arenas.99.pdirty"),
            "{e}"
        );
    }

    #[test]
    fn an_index_placeholder_without_an_index_is_refused() {
        let e = fake().read::<usize>("stats.arenas.<i>.pdirty").unwrap_err();
        assert!(matches!(e, AllocatorError::BadKey(_)), "{e}");
        let e = fake()
            .read_indexed::<usize>("stats.allocated", 1)
            .unwrap_err();
        assert!(matches!(e, AllocatorError::BadKey(_)), "{e}");
    }
}
