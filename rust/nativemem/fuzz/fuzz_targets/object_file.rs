//! Object files a dump's sidecar ships in `.symbols/objects/`, generated from the input and read
//! by the symbolizer as the analysis reads them (`profile::fuzzing::sidecar_object`: the symbol
//! table, the DWARF reader behind its depth guard, the names of addresses in the code). The
//! first byte chooses the shape: a whole file as given; an ELF whose `.debug_abbrev` and
//! `.debug_info` are the input's; or a function with as many nested inlined subroutines as the
//! next two bytes say (up to 4,095, past the guard's bound).

#![no_main]

use nativemem::profile::fuzzing::{
    elf_with_debug_info, nested_inlined_subroutines, sidecar_object, CODE_AT,
};

// The object as generated (at most 17 bytes a level, or the input) read into memory and the
// DWARF reader's units, functions and line rows: SECURITY.md, "Fuzzing".
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 512, fixed: 8 << 20, |data| {
    let Some((&shape, rest)) = data.split_first() else {
        return;
    };
    let object = match shape % 3 {
        0 => rest.to_vec(),
        1 => {
            let split = rest.first().map_or(0, |&n| n as usize).min(rest.len().saturating_sub(1));
            let body = rest.get(1..).unwrap_or_default();
            elf_with_debug_info(&body[..split], &body[split..])
        }
        _ => {
            let levels = rest
                .get(..2)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize % 4096);
            nested_inlined_subroutines(levels)
        }
    };
    let dir = std::env::temp_dir().join(format!("nativemem-fuzz-object-{}", std::process::id()));
    let offsets = [0, CODE_AT, CODE_AT + 16, CODE_AT + 255, 1 << 19];
    let (resolved, _) = sidecar_object(&dir, &object, &offsets).expect("write the object");
    for r in &resolved {
        // Unnamed code has no lines: its name is made from its mapping and address.
        assert_eq!(r.lines.is_empty(), r.unnamed);
    }
});
