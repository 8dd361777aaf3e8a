//! The `MAPPED_LIBRARIES:` section of a dump: a copy of `/proc/<pid>/maps` at dump time.

/// One line of `/proc/<pid>/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    /// Offset in the file of the mapping's first byte.
    pub file_offset: u64,
    pub executable: bool,
    /// The file, `[vdso]`-like pseudo names, or empty for anonymous memory.
    pub path: String,
}

impl Mapping {
    /// Parses `start-end perms offset dev inode [path]`; `None` for anything else.
    pub fn parse(line: &str) -> Option<Mapping> {
        let mut fields = line.split_ascii_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let perms = fields.next()?;
        let offset = fields.next()?;
        let _dev = fields.next()?;
        let _inode = fields.next()?;
        // The path is the rest of the line and may contain spaces (" (deleted)" too).
        let path = match line.find('/').or_else(|| line.find('[')) {
            Some(at) => line[at..].trim_end().to_string(),
            None => String::new(),
        };
        let mapping = Mapping {
            start: u64::from_str_radix(start, 16).ok()?,
            end: u64::from_str_radix(end, 16).ok()?,
            file_offset: u64::from_str_radix(offset, 16).ok()?,
            executable: perms.as_bytes().get(2) == Some(&b'x'),
            path,
        };
        // The file offset of the mapping's last byte fits in 64 bits in any real maps line; one
        // that does not would overflow every offset computed from it.
        let plausible = mapping.start < mapping.end
            && mapping
                .file_offset
                .checked_add(mapping.end - mapping.start - 1)
                .is_some();
        plausible.then_some(mapping)
    }

    /// The file this mapping shows, without the kernel's " (deleted)" mark.
    pub fn file(&self) -> Option<&str> {
        if !self.path.starts_with('/') {
            return None;
        }
        Some(self.path.strip_suffix(" (deleted)").unwrap_or(&self.path))
    }

    /// The file's base name, used to name unknown addresses `module+0xoffset`.
    pub fn module_name(&self) -> &str {
        let file = self.file().unwrap_or(&self.path);
        file.rsplit('/').next().unwrap_or(file)
    }

    /// Offset in the file of `address`.
    pub fn file_offset_of(&self, address: u64) -> u64 {
        address - self.start + self.file_offset
    }
}

/// Mappings sorted by start address, for lookups by address.
#[derive(Debug, Default, Clone)]
pub struct MemoryMap {
    mappings: Vec<Mapping>,
}

impl MemoryMap {
    pub fn new(mut mappings: Vec<Mapping>) -> MemoryMap {
        mappings.sort_by_key(|m| m.start);
        MemoryMap { mappings }
    }

    pub fn all(&self) -> &[Mapping] {
        &self.mappings
    }

    pub fn is_empty(&self) -> bool {
        self.mappings.is_empty()
    }

    /// The index of the mapping that contains `address`.
    pub fn find(&self, address: u64) -> Option<usize> {
        let after = self.mappings.partition_point(|m| m.start <= address);
        let index = after.checked_sub(1)?;
        (address < self.mappings[index].end).then_some(index)
    }

    pub fn get(&self, index: usize) -> &Mapping {
        &self.mappings[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_file_backed_and_anonymous_lines() {
        let m = Mapping::parse(
            "7f00aa000000-7f00aa021000 r-xp 00002000 fe:00 123   /usr/lib/x86_64-linux-gnu/lib a.so (deleted)",
        )
        .unwrap();
        assert_eq!(m.start, 0x7f00aa000000);
        assert!(m.executable);
        assert_eq!(m.file(), Some("/usr/lib/x86_64-linux-gnu/lib a.so"));
        assert_eq!(m.module_name(), "lib a.so");
        assert_eq!(m.file_offset_of(0x7f00aa000010), 0x2010);
        let anon = Mapping::parse("7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.file(), None);
        assert!(Mapping::parse("garbage").is_none());
        assert!(Mapping::parse("20-10 r-xp 0 0:0 0 /x").is_none());
    }

    /// Found by fuzzing (maps_line): an offset near 2^64 overflowed `file_offset_of` (a panic in
    /// debug builds, a wrapped offset in release ones).
    #[test]
    fn refuses_a_mapping_whose_file_offsets_overflow() {
        assert!(Mapping::parse("0-100 r-xp ffffffffffffffff 0:0 0 /x").is_none());
        assert!(Mapping::parse("0-100 r-xp ffffffffffffff01 0:0 0 /x").is_none());
        let last = Mapping::parse("0-100 r-xp ffffffffffffff00 0:0 0 /x").unwrap();
        assert_eq!(last.file_offset_of(0xff), u64::MAX);
        let map = MemoryMap::new(vec![last]);
        let mut symbolizer = crate::profile::symbolize::Symbolizer::new(
            &map,
            crate::profile::sidecar::Sidecar::default(),
        );
        let resolved = symbolizer.resolve(0xff);
        assert!(resolved.unnamed);
        let mapping = resolved.mapping.map(|m| map.get(m));
        assert_eq!(
            crate::profile::symbolize::unnamed_name(mapping, 0xff),
            "x+0xffffffffffffffff"
        );
    }

    #[test]
    fn finds_the_mapping_of_an_address() {
        let map = MemoryMap::new(vec![
            Mapping::parse("3000-4000 r-xp 0 0:0 1 /b").unwrap(),
            Mapping::parse("1000-2000 r-xp 0 0:0 1 /a").unwrap(),
        ]);
        assert_eq!(
            map.find(0x1000).map(|i| map.get(i).path.as_str()),
            Some("/a")
        );
        assert_eq!(map.find(0x2000), None);
        assert_eq!(
            map.find(0x3fff).map(|i| map.get(i).path.as_str()),
            Some("/b")
        );
        assert_eq!(map.find(0x10), None);
    }
}
