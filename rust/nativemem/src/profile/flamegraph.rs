//! Flame graph SVG of the in-use bytes (or of growth between two dumps), drawn by inferno.

use super::collapsed;
use super::output_cap::CappedBuffer;
use super::stacks::Stacks;
use super::{ProfileError, IMPLAUSIBLE_BYTES};
use inferno::flamegraph::{self, Options};

/// Draws `stacks`; with `base`, a differential graph (red: grew since the base, blue: shrank).
pub fn render(
    stacks: &Stacks,
    base: Option<&Stacks>,
    title: &str,
) -> Result<Vec<u8>, ProfileError> {
    // inferno sums counts in u64; no real heap comes near a pebibyte, a damaged dump might.
    let total: f64 = [Some(stacks), base]
        .into_iter()
        .flatten()
        .flat_map(|s| s.samples.iter().map(|x| x.bytes.abs()))
        .sum();
    if total.is_nan() || total >= IMPLAUSIBLE_BYTES {
        return Err(ProfileError::FlameGraph(format!(
            "the profile claims {total:.0} bytes (more than 1 PiB): the dump is damaged"
        )));
    }
    let folded = match base {
        Some(base) => collapsed::render_difference(base, stacks),
        None => collapsed::render(stacks),
    };
    draw(&folded, title)
}

/// Draws collapsed stacks (`stack bytes`, or `stack base current` for a difference).
pub fn draw(folded: &str, title: &str) -> Result<Vec<u8>, ProfileError> {
    draw_within(folded, title, u64::MAX).map(Option::unwrap_or_default)
}

/// [`draw`], writing at most `cap` bytes: `None` if the graph would be larger.
pub fn draw_within(folded: &str, title: &str, cap: u64) -> Result<Option<Vec<u8>>, ProfileError> {
    if folded.is_empty() {
        return Err(ProfileError::FlameGraph(
            "the profile holds no sampled bytes: sample more (lower lg_prof_sample) or dump later"
                .into(),
        ));
    }
    let mut options = Options::default();
    options.title = title.to_owned();
    options.count_name = "bytes".into();
    options.name_type = "Site:".into();
    options.deterministic = true;
    options.colors = flamegraph::color::Palette::Basic(flamegraph::color::BasicPalette::Mem);
    let mut svg = CappedBuffer::new(cap);
    match flamegraph::from_lines(&mut options, folded.lines(), &mut svg) {
        Ok(()) => Ok(Some(svg.bytes)),
        Err(_) if svg.refused => Ok(None),
        Err(e) => Err(ProfileError::FlameGraph(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::stacks::tests::stacks_of;

    #[test]
    fn draws_every_site() {
        let stacks = stacks_of(&[
            (&["planted_big", "main"], 4096.0),
            (&["small", "main"], 1024.0),
        ]);
        let svg = String::from_utf8(render(&stacks, None, "In-use bytes").unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..100]);
        assert!(
            svg.contains("planted_big") && svg.contains("small") && svg.contains("In-use bytes")
        );
    }

    #[test]
    fn refuses_an_empty_profile() {
        assert!(matches!(
            render(&Stacks::default(), None, "x"),
            Err(ProfileError::FlameGraph(_))
        ));
    }
}
