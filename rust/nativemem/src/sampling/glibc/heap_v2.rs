//! The live sampled blocks written as a jemalloc `heap_v2` dump, so every reader of jemalloc
//! dumps (ours, jeprof) reads it unchanged: sampled counts per stack (unbiased by the reader,
//! with the interval in the header), then `MAPPED_LIBRARIES:` and this process's maps.

use super::live::LiveHeap;
use super::stacks::Stacks;
use crate::jvm::frame_addresses::{address_of, MORE_FRAMES};
use std::io::{self, Write};

/// Writes the dump; returns the sampled (objects, bytes) it holds.
pub fn write(
    out: &mut impl Write,
    interval: u64,
    live: &LiveHeap,
    stacks: &Stacks,
    maps: &[u8],
) -> io::Result<(u64, u64)> {
    // Per stack id: (objects, bytes). Stack ids are dense; a map keeps this to the ids in use.
    let mut per_stack: std::collections::BTreeMap<u32, (u64, u64)> = Default::default();
    live.for_each(|_, block| {
        let entry = per_stack.entry(block.stack).or_default();
        entry.0 += 1;
        entry.1 += block.size;
    });
    let (objects, bytes) = per_stack
        .values()
        .fold((0, 0), |(o, b), &(n, s)| (o + n, b + s));
    writeln!(out, "heap_v2/{interval}")?;
    writeln!(out, "  t*: {objects}: {bytes} [0: 0]")?;
    for (&id, &(n, s)) in &per_stack {
        // A sample whose stack was not kept still counts, under the "frames not shown" marker.
        let frames = stacks
            .get(id)
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| vec![address_of(MORE_FRAMES)]);
        write!(out, "@")?;
        for frame in frames {
            write!(out, " 0x{frame:x}")?;
        }
        writeln!(out)?;
        writeln!(out, "  t*: {n}: {s} [0: 0]")?;
    }
    writeln!(out)?;
    writeln!(out, "MAPPED_LIBRARIES:")?;
    out.write_all(maps)?;
    Ok((objects, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::glibc::live::Block;

    #[test]
    fn the_dump_reads_back_through_the_heap_v2_reader() {
        let live = LiveHeap::new(64).unwrap();
        let stacks = Stacks::new(64, 1024).unwrap();
        let a = stacks.intern(&[0x401000, 0x402000]);
        let b = stacks.intern(&[0x403000]);
        live.insert(
            0x10,
            Block {
                size: 100,
                stack: a,
            },
        );
        live.insert(0x20, Block { size: 50, stack: a });
        live.insert(0x30, Block { size: 7, stack: b });
        live.insert(0x40, Block { size: 9, stack: 0 });
        let mut text = Vec::new();
        let maps = b"00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n";
        assert_eq!(
            write(&mut text, 4096, &live, &stacks, maps).unwrap(),
            (4, 166)
        );
        let dir = std::env::temp_dir().join(format!("nm-heapv2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.heap");
        std::fs::write(&path, &text).unwrap();
        let dump = crate::profile::parse::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(dump.sample_interval, 4096);
        let mut seen: Vec<(Vec<u64>, u64, u64)> = dump
            .stacks
            .iter()
            .map(|s| (s.addresses.clone(), s.counts.objects, s.counts.bytes))
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                (vec![0x401000, 0x402000], 2, 150),
                (vec![0x403000], 1, 7),
                (vec![address_of(MORE_FRAMES)], 1, 9),
            ]
        );
    }
}
