//! What kind of code a frame is (Java, a JNI library, the JVM, libc or zlib, the allocator), from
//! the file its code is mapped from: the flame graph colours frames by it.

use super::strip::is_allocator_frame;

/// The kinds a flame graph tells apart, in the order of its legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A Java method: a frame the backtrace hook recorded, or JIT-compiled code the perf map names.
    Java,
    /// Native code of any other library: JNI libraries (RocksDB, nativemem, the application's).
    Jni,
    /// HotSpot itself (`libjvm.so`), the `java` launcher and the code the JVM generates
    /// (interpreter, stubs).
    Jvm,
    /// The C library, zlib, the C++ runtime and the dynamic loader. The JDK's `libzip` counts as
    /// zlib: JDKs built with their bundled zlib (Temurin) carry its code there.
    System,
    /// jemalloc or the malloc family (their frames are stripped from sites; a leftover is shown).
    Allocator,
    /// Code nothing names (an address outside any file).
    Unnamed,
}

impl FrameKind {
    pub const ALL: [FrameKind; 6] = [
        FrameKind::Java,
        FrameKind::Jni,
        FrameKind::Jvm,
        FrameKind::System,
        FrameKind::Allocator,
        FrameKind::Unnamed,
    ];

    /// The kind of a frame: `path` is its mapped file (none: outside any file), `java` whether
    /// it is a Java method the backtrace hook named, `named` whether anything names it.
    pub fn of(path: Option<&str>, java: bool, named: bool, name: &str) -> FrameKind {
        if java {
            return FrameKind::Java;
        }
        let Some(path) = path.filter(|p| !p.is_empty()) else {
            // Outside any file: code the JVM generated, named by its perf map (a Java method is
            // qualified, `java.util.zip.Inflater.init`; a stub is not, `Interpreter`), or nothing.
            return match (named, name.contains('.')) {
                (true, true) => FrameKind::Java,
                (true, false) => FrameKind::Jvm,
                (false, _) => FrameKind::Unnamed,
            };
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        let is = |prefixes: &[&str]| prefixes.iter().any(|p| file.starts_with(p));
        if is(&["libjemalloc", "libnativemem_jemalloc", "libtcmalloc"]) || is_allocator_frame(name)
        {
            FrameKind::Allocator
        } else if is(&["libjvm.", "libjli.", "java"]) && !file.ends_with(".jar") {
            FrameKind::Jvm
        } else if is(&[
            "libc.",
            "libc-",
            "libz.",
            "libzip.",
            "ld-linux",
            "ld-",
            "libm.",
            "libpthread",
            "libdl.",
            "librt.",
            "libstdc++",
            "libgcc_s",
        ]) {
            FrameKind::System
        } else {
            FrameKind::Jni
        }
    }

    /// How the legend names it.
    pub fn label(self) -> &'static str {
        match self {
            FrameKind::Java => "Java",
            FrameKind::Jni => "JNI library",
            FrameKind::Jvm => "JVM",
            FrameKind::System => "libc/zlib",
            FrameKind::Allocator => "allocator",
            FrameKind::Unnamed => "unnamed",
        }
    }

    /// Its fill colour `(red, green, blue)`.
    pub fn rgb(self) -> (u8, u8, u8) {
        match self {
            FrameKind::Java => (95, 185, 75),
            FrameKind::Jni => (240, 145, 40),
            FrameKind::Jvm => (230, 200, 70),
            FrameKind::System => (105, 155, 225),
            FrameKind::Allocator => (215, 75, 65),
            FrameKind::Unnamed => (175, 175, 175),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FrameKind::{self, *};

    #[test]
    fn kinds_follow_the_mapped_file() {
        let of = |path: Option<&str>, java: bool, named: bool, name: &str| {
            FrameKind::of(path, java, named, name)
        };
        assert_eq!(of(None, true, true, "a.B.c(B.java:3)"), Java);
        assert_eq!(of(None, false, true, "java.util.zip.Inflater.<init>"), Java);
        assert_eq!(of(None, false, true, "Interpreter"), Jvm);
        assert_eq!(of(None, false, false, "0x7f00"), Unnamed);
        let jvm = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
        assert_eq!(of(Some(jvm), false, true, "SymbolTable::new_symbols"), Jvm);
        assert_eq!(of(Some("/usr/bin/java"), false, true, "JLI_Launch"), Jvm);
        let zlib = "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13";
        assert_eq!(of(Some(zlib), false, true, "inflateInit2_"), System);
        // Temurin's JDKs build zlib into the JDK's own libzip.
        let bundled = "/usr/lib/jvm/temurin-25-jdk-amd64/lib/libzip.so";
        assert_eq!(of(Some(bundled), false, true, "inflateInit2_"), System);
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(of(Some(libc), false, true, "start_thread"), System);
        let rocks = "/tmp/librocksdbjni-linux64.so";
        assert_eq!(of(Some(rocks), false, true, "rocksdb::DB::Open"), Jni);
        assert_eq!(of(Some(rocks), false, true, "malloc"), Allocator);
        let ours = "/tmp/x/libnativemem_jemalloc.so";
        assert_eq!(
            of(Some(ours), false, false, "libnativemem_jemalloc.so+0x10"),
            Allocator
        );
    }
}
