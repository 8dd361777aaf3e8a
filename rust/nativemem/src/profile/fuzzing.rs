//! The parsers of the sidecar's files as the analysis calls them, and object files generated to
//! feed the symbolizer, for the fuzz targets (`rust/nativemem/fuzz`) and tests: not an API.

use super::java_frames::JavaFrameNames;
use super::mappings::{Mapping, MemoryMap};
use super::sidecar::Sidecar;
use super::symbolize::{Resolved, Symbolizer};
use crate::sidecar_layout::SYMBOLS_FORMAT;
use std::path::Path;

/// `symbols.json` as [`Sidecar::beside`] reads it, from a sidecar directory `dir` (the files it
/// names are looked for there: a perf map, `java-frames.json`).
pub fn symbols_json(dir: &Path, bytes: &[u8]) -> Result<Sidecar, String> {
    Sidecar::from_json(dir, bytes)
}

/// `java-frames.json` as [`JavaFrameNames::read`] reads it.
pub fn java_frames_json(bytes: &[u8]) -> Result<JavaFrameNames, String> {
    JavaFrameNames::parse(bytes)
}

/// An object file shipped in a sidecar's `objects/`, as the analysis reads one: `bytes` become
/// `<dir>/objects/lib.so`, which a `symbols.json` names as the copy of `/sidecar/lib.so`, mapped
/// at [`OBJECT_MAPPED_AT`] from file offset 0; the symbolizer names each of `offsets` in it.
/// Returns what each offset resolved to and the symbolizer's warnings.
pub fn sidecar_object(
    dir: &Path,
    bytes: &[u8],
    offsets: &[u64],
) -> std::io::Result<(Vec<Resolved>, Vec<String>)> {
    let objects = dir.join("objects");
    std::fs::create_dir_all(&objects)?;
    let object = objects.join("lib.so");
    let _ = std::fs::remove_file(&object);
    std::fs::write(&object, bytes)?;
    let json = format!(
        r#"{{"format":"{SYMBOLS_FORMAT}","objects":[{{"path":"/sidecar/lib.so","copy":"objects/lib.so"}}]}}"#
    );
    let sidecar = Sidecar::from_json(dir, json.as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let line = format!(
        "{OBJECT_MAPPED_AT:x}-{:x} r-xp 00000000 00:00 0 /sidecar/lib.so",
        OBJECT_MAPPED_AT + (1 << 20)
    );
    let map = MemoryMap::new(Mapping::parse(&line).into_iter().collect());
    let mut symbolizer = Symbolizer::new(&map, sidecar);
    let resolved = offsets
        .iter()
        .map(|&offset| symbolizer.resolve(OBJECT_MAPPED_AT + offset % (1 << 20)))
        .collect();
    Ok((resolved, symbolizer.warnings))
}

/// Where [`sidecar_object`] maps its object.
pub const OBJECT_MAPPED_AT: u64 = 0x7f00_0000_0000;

/// The file offset (and address as linked) of the code in [`elf_with_debug_info`]'s object.
pub const CODE_AT: u64 = 64;

/// A 64-bit little-endian x86-64 shared object whose `.text` (256 zero bytes at [`CODE_AT`],
/// linked at that address) is described by `.debug_abbrev` = `abbrev` and `.debug_info` = `info`.
pub fn elf_with_debug_info(abbrev: &[u8], info: &[u8]) -> Vec<u8> {
    let text = vec![0u8; 256];
    let names = b"\0.text\0.debug_abbrev\0.debug_info\0.shstrtab\0";
    let mut out = vec![0u8; CODE_AT as usize];
    let place = |bytes: &[u8], out: &mut Vec<u8>| {
        let at = out.len() as u64;
        out.extend_from_slice(bytes);
        at
    };
    let text_at = place(&text, &mut out);
    let abbrev_at = place(abbrev, &mut out);
    let info_at = place(info, &mut out);
    let names_at = place(names, &mut out);
    while out.len() % 8 != 0 {
        out.push(0);
    }
    let headers_at = out.len() as u64;
    // (name offset, type, flags, address, offset, size)
    let sections: [(u32, u32, u64, u64, u64, u64); 5] = [
        (0, 0, 0, 0, 0, 0),
        (1, 1, 0x6, text_at, text_at, text.len() as u64),
        (7, 1, 0, 0, abbrev_at, abbrev.len() as u64),
        (21, 1, 0, 0, info_at, info.len() as u64),
        (33, 3, 0, 0, names_at, names.len() as u64),
    ];
    for (name, kind, flags, address, offset, size) in sections {
        out.extend_from_slice(&name.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&address.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&[0u8; 8]); // link, info
        out.extend_from_slice(&1u64.to_le_bytes()); // alignment
        out.extend_from_slice(&0u64.to_le_bytes()); // entry size
    }
    let mut header = Vec::with_capacity(64);
    header.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    header.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    header.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&0u64.to_le_bytes()); // entry
    header.extend_from_slice(&0u64.to_le_bytes()); // no program headers
    header.extend_from_slice(&headers_at.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    for half in [64u16, 56, 0, 64, sections.len() as u16, 4] {
        header.extend_from_slice(&half.to_le_bytes());
    }
    out[..64].copy_from_slice(&header);
    out
}

/// An object whose function `f` (at [`CODE_AT`]) holds `levels` nested
/// `DW_TAG_inlined_subroutine` entries, each covering the whole function: 17 bytes a level.
pub fn nested_inlined_subroutines(levels: usize) -> Vec<u8> {
    // 1: compile unit, 2: subprogram, 3: inlined subroutine; all with children.
    let abbrev = [
        1, 0x11, 1, 0x11, 0x01, 0x12, 0x07, 0x03, 0x08, 0, 0, //
        2, 0x2e, 1, 0x03, 0x08, 0x11, 0x01, 0x12, 0x07, 0, 0, //
        3, 0x1d, 1, 0x11, 0x01, 0x12, 0x07, 0, 0, //
        0,
    ];
    let range = |out: &mut Vec<u8>| {
        out.extend_from_slice(&CODE_AT.to_le_bytes());
        out.extend_from_slice(&256u64.to_le_bytes());
    };
    let mut entries = vec![1];
    range(&mut entries);
    entries.extend_from_slice(b"hostile.c\0");
    entries.extend_from_slice(&[2, b'f', 0]);
    range(&mut entries);
    for _ in 0..levels {
        entries.push(3);
        range(&mut entries);
    }
    entries.resize(entries.len() + levels + 2, 0);
    let mut info = Vec::with_capacity(entries.len() + 11);
    info.extend_from_slice(&((entries.len() + 7) as u32).to_le_bytes());
    info.extend_from_slice(&4u16.to_le_bytes()); // DWARF 4
    info.extend_from_slice(&0u32.to_le_bytes()); // abbreviations at 0
    info.push(8); // address size
    info.extend_from_slice(&entries);
    elf_with_debug_info(&abbrev, &info)
}
