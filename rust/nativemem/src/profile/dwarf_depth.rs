//! How deep the entries of an object file's DWARF nest, read without recursion, before the DWARF
//! reader (addr2line), which parses inlined functions recursively, one stack frame pair per level:
//! a hostile object of 20,000 nested `DW_TAG_inlined_subroutine` entries would overflow any stack.
//! Debug info nesting deeper than [`MAX_DWARF_DEPTH`] is not read; the object's symbol table
//! still names its functions.

use addr2line::gimli;
use object::{Object, ObjectSection};
use std::borrow::Cow;

/// The deepest nesting of debug information entries read. Real code stays far below it (measured
/// here: nativemem's own Rust library, built with heavy inlining, nests 70 levels; glibc's debug
/// file 17), and at this depth addr2line's recursive parse takes less than the 1 MiB stack of a
/// Java thread, even in a debug build (`symbolize::tests`).
pub const MAX_DWARF_DEPTH: usize = 256;

/// The deepest nesting of `file`'s `.debug_info`; stops counting once past `limit` (returns a
/// value above it). An error if the section cannot be read or parsed.
pub fn deepest<'d, R: object::ReadRef<'d>>(
    file: &object::File<'d, R>,
    limit: usize,
) -> Result<usize, String> {
    let load = |id: gimli::SectionId| -> Result<Cow<'d, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let sections = gimli::DwarfSections::load(load).map_err(|e| e.to_string())?;
    let dwarf = sections.borrow(|section| gimli::EndianSlice::new(section, endian));
    let mut deepest = 0usize;
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(|e| e.to_string())? {
        let abbreviations = dwarf.abbreviations(&header).map_err(|e| e.to_string())?;
        let mut entries = header
            .entries_raw(&abbreviations, None)
            .map_err(|e| e.to_string())?;
        while !entries.is_empty() {
            let depth = usize::try_from(entries.next_depth()).unwrap_or(0);
            deepest = deepest.max(depth);
            if deepest > limit {
                return Ok(deepest);
            }
            if let Some(abbreviation) = entries.read_abbreviation().map_err(|e| e.to_string())? {
                entries
                    .skip_attributes(abbreviation.attributes())
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(deepest)
}
