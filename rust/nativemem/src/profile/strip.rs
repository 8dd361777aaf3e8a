//! Allocator frames: the malloc family, jemalloc's internals, our preload wrappers and HotSpot's
//! own malloc wrappers (`os::malloc`, `AllocateHeap`, its arenas' chunk pool). A site is the
//! caller of the allocator, so everything from the leaf up to the last allocator frame is
//! dropped, as jeprof's `RemoveUninterestingFrames` does for heap profiles (jeprof does not know
//! HotSpot's wrappers: it shows `os::malloc` where we show the JVM code that called it).

/// jeprof's list of allocator entry points (heap profiles).
const JEPROF_SKIP: &[&str] = &[
    "calloc",
    "cfree",
    "malloc",
    "newImpl",
    "void* newImpl",
    "free",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "pvalloc",
    "valloc",
    "realloc",
    "mallocx",
    "rallocx",
    "xallocx",
    "dallocx",
    "sdallocx",
    "sdallocx_noflags",
    "tc_calloc",
    "tc_cfree",
    "tc_malloc",
    "tc_free",
    "tc_memalign",
    "tc_posix_memalign",
    "tc_pvalloc",
    "tc_valloc",
    "tc_realloc",
    "tc_new",
    "tc_delete",
    "tc_newarray",
    "tc_deletearray",
    "tc_new_nothrow",
    "tc_newarray_nothrow",
    "do_malloc",
    "::do_malloc",
    "::do_malloc_or_cpp_alloc",
    "DoSampledAllocation",
    "simple_alloc::allocate",
    "__malloc_alloc_template::allocate",
    "__builtin_delete",
    "__builtin_new",
    "__builtin_vec_delete",
    "__builtin_vec_new",
    "operator new",
    "operator new[]",
    "malloc_zone_malloc",
    "malloc_zone_calloc",
    "malloc_zone_valloc",
    "malloc_zone_realloc",
    "malloc_zone_memalign",
    "malloc_zone_free",
    "__start_google_malloc",
    "__stop_google_malloc",
    "__start_malloc_hook",
    "__stop_malloc_hook",
];

/// HotSpot's wrappers around malloc (short names, as demangled from libjvm.so): every native
/// allocation the JVM makes for itself goes through `os::malloc`, most of them through
/// `AllocateHeap` or an arena's chunk pool first, so without them the JVM's top site is always
/// `os::malloc`. JDK 21 renamed `ResourceObj` to `AnyObj`; both are listed.
const HOTSPOT_WRAPPERS: &[&str] = &[
    "os::malloc",
    "os::realloc",
    "os::calloc",
    "os::strdup",
    "os::strdup_check_oom",
    "AllocateHeap",
    "ReallocateHeap",
    "AllocateHeapOrNull",
    "MallocArrayAllocator::allocate",
    "MallocArrayAllocator::reallocate",
    "CHeapObj::operator new",
    "CHeapObj::operator new[]",
    "CHeapObjBase::operator new",
    "CHeapObjBase::operator new[]",
    "ResourceObj::operator new",
    "ResourceObj::operator new[]",
    "AnyObj::operator new",
    "AnyObj::operator new[]",
    "ChunkPool::allocate",
    "Chunk::operator new",
    "Arena::Arena",
    "Arena::grow",
    "Arena::Amalloc",
    "Arena::Amalloc_4",
    "Arena::AmallocWords",
    "Arena::Arealloc",
    "Arena::internal_amalloc",
    "ResourceArea::allocate_bytes",
    "resource_allocate_bytes",
    "resource_reallocate_bytes",
];

/// Whether `name` (a short function name) is allocator machinery.
pub fn is_allocator_frame(name: &str) -> bool {
    // jeprof also accepts a leading '_' (Mach-O); prefixed jemalloc builds add `_rjem_`/`je_`.
    let bare = name
        .strip_prefix("_rjem_")
        .or_else(|| name.strip_prefix("je_"))
        .or_else(|| name.strip_prefix('_'))
        .unwrap_or(name);
    JEPROF_SKIP.contains(&name)
        || JEPROF_SKIP.contains(&bare)
        || HOTSPOT_WRAPPERS.contains(&name)
        || name.contains("TCMalloc")
        || name.starts_with("tcmalloc::")
        // jemalloc internals, in case a stack holds no entry point (unsymbolized wrapper).
        || bare.starts_with("prof_")
        || bare.starts_with("je_prof_")
        || name.starts_with("_rjem_je_")
}

#[cfg(test)]
mod tests {
    use super::is_allocator_frame;

    #[test]
    fn knows_the_allocator_entry_points() {
        for name in [
            "malloc",
            "_malloc",
            "_rjem_malloc",
            "je_mallocx",
            "operator new",
            "calloc",
            "prof_backtrace_impl",
            "_rjem_je_prof_tctx_create",
            "tcmalloc::Foo",
            "os::malloc",
            "os::realloc",
            "AllocateHeap",
            "ReallocateHeap",
            "ChunkPool::allocate",
            "Arena::grow",
            "Chunk::operator new",
            "CHeapObj::operator new",
        ] {
            assert!(is_allocator_frame(name), "{name}");
        }
        for name in [
            "planted_big",
            "rocksdb::BlockFetcher::ReadBlockContents",
            "malloc_trim_user",
            "Java_org_rocksdb_RocksDB_open",
            "profile_loader",
            "SymbolTable::allocate_symbol",
            "Compile::Compile",
            "os::dll_load",
        ] {
            assert!(!is_allocator_frame(name), "{name}");
        }
    }
}
