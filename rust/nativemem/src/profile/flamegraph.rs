//! Flame graph SVG of the in-use bytes (or of growth between two dumps), drawn by inferno: frames
//! coloured by kind with a legend ([`FrameKind`]), the total and the sample interval in the
//! title, and a line under it naming the heaviest native frame and the Java line that reached it.

use super::collapsed;
use super::frame_kind::FrameKind;
use super::output_cap::CappedBuffer;
use super::report::human_bytes;
use super::stacks::Stacks;
use super::{ProfileError, IMPLAUSIBLE_BYTES};
use inferno::flamegraph::color::{BackgroundColor, Color, PaletteMap};
use inferno::flamegraph::{self, Options, TextTruncateDirection};
use std::collections::HashMap;
use std::fmt::Write;

/// What a flame graph says beyond its frames.
pub struct Drawing {
    /// What is drawn, e.g. `In-use heap: app.heap`; the total and the interval are added.
    pub title: String,
    /// Growth against a base (frames coloured red/blue by change, not by kind).
    pub difference: bool,
    /// Bytes in use (the growth for a difference).
    pub total_bytes: f64,
    pub sample_interval: u64,
    /// The heaviest native frame and the Java line that reached it ([`Heaviest::line`]).
    pub summary: Option<String>,
    /// Each drawn frame name's kind (ignored for a difference).
    pub kinds: HashMap<String, FrameKind>,
}

impl Drawing {
    /// The title with the total and the sample interval.
    fn full_title(&self) -> String {
        let total = self.total_bytes as i64;
        let interval = human_bytes(self.sample_interval as i64);
        match self.difference {
            true => format!(
                "{}: {}{} (red grew, blue shrank), one sample per {interval} on average",
                self.title,
                if total >= 0 { "+" } else { "" },
                human_bytes(total)
            ),
            false => format!(
                "{}: {} in use, one sample per {interval} on average",
                self.title,
                human_bytes(total)
            ),
        }
    }
}

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
    let labels = stacks.labels();
    let mut kinds = HashMap::new();
    let mut label_kinds = vec![FrameKind::Unnamed; labels.names.len()];
    for (location, ids) in labels.per_location.iter().enumerate() {
        let kind = stacks.kind(location);
        for &id in ids {
            label_kinds[id] = kind;
            kinds.entry(labels.names[id].clone()).or_insert(kind);
        }
    }
    let mut heaviest = Heaviest::default();
    let each = |visit: &mut dyn FnMut(&[usize], f64)| {
        let mut frames = Vec::new();
        for sample in &stacks.samples {
            frames.clear();
            frames.extend(stacks.frames(&labels, sample));
            visit(&frames, sample.bytes);
        }
    };
    let summary = match base {
        Some(_) => None,
        None => heaviest.line(each, |l| &labels.names[l], |l| label_kinds[l]),
    };
    let drawing = Drawing {
        title: title.to_owned(),
        difference: base.is_some(),
        total_bytes: stacks.total_bytes() - base.map_or(0.0, Stacks::total_bytes),
        sample_interval: stacks.sample_interval,
        summary,
        kinds,
    };
    draw(&folded, &drawing)
}

/// Draws collapsed stacks (`stack bytes`, or `stack base current` for a difference).
pub fn draw(folded: &str, drawing: &Drawing) -> Result<Vec<u8>, ProfileError> {
    draw_within(folded, drawing, u64::MAX).map(Option::unwrap_or_default)
}

/// [`draw`], writing at most `cap` bytes: `None` if the graph would be larger.
pub fn draw_within(
    folded: &str,
    drawing: &Drawing,
    cap: u64,
) -> Result<Option<Vec<u8>>, ProfileError> {
    if folded.is_empty() {
        return Err(ProfileError::FlameGraph(
            "the profile holds no sampled bytes: sample more (lower lg_prof_sample) or dump later"
                .into(),
        ));
    }
    let mut palette = PaletteMap::default();
    // The root (shown as "all", an empty name to inferno) is no code: a neutral grey.
    palette.insert(
        "",
        Color {
            r: 200,
            g: 200,
            b: 200,
        },
    );
    for (name, kind) in &drawing.kinds {
        let (r, g, b) = kind.rgb();
        palette.insert(name, Color { r, g, b });
    }
    let mut options = Options::default();
    options.title = drawing.full_title();
    options.subtitle = drawing.summary.clone();
    options.count_name = "bytes".into();
    options.name_type = "Site:".into();
    options.deterministic = true;
    // A cut name keeps its beginning ("SymbolTable::new_sy.."), which says what it is.
    options.text_truncate_direction = TextTruncateDirection::Right;
    options.colors = flamegraph::color::Palette::Basic(flamegraph::color::BasicPalette::Mem);
    if !drawing.difference {
        options.bgcolors = Some(BackgroundColor::Grey);
        options.palette_map = Some(&mut palette);
    }
    let font_size = options.font_size;
    let mut svg = CappedBuffer::new(cap);
    match flamegraph::from_lines(&mut options, folded.lines(), &mut svg) {
        Ok(()) => {}
        Err(_) if svg.refused => return Ok(None),
        Err(e) => return Err(ProfileError::FlameGraph(e.to_string())),
    }
    if drawing.difference {
        return Ok(Some(svg.bytes));
    }
    let svg = String::from_utf8(svg.bytes).map_err(|e| ProfileError::FlameGraph(e.to_string()))?;
    let svg = with_legend(&svg, font_size).into_bytes();
    Ok((svg.len() as u64 <= cap).then_some(svg))
}

/// The native frame that holds the most bytes itself (a site), and the Java line that reached it
/// with the most of them: on each of its stacks the nearest Java frame outside the JDK (else the
/// nearest Java frame).
#[derive(Default)]
pub struct Heaviest {
    flat: HashMap<usize, f64>,
    callers: HashMap<usize, f64>,
}

impl Heaviest {
    /// `Heaviest native frame: NAME, SIZE (P% of the total), reached from JAVA (SIZE)`, or none
    /// for a profile without a native site. `each` calls its visitor with every stack (labels
    /// leaf first) and its bytes, twice.
    pub fn line<'n>(
        &mut self,
        each: impl Fn(&mut dyn FnMut(&[usize], f64)),
        name: impl Fn(usize) -> &'n str,
        kind: impl Fn(usize) -> FrameKind,
    ) -> Option<String> {
        let mut total = 0.0;
        each(&mut |frames, bytes| {
            total += bytes;
            if let Some(&leaf) = frames.first().filter(|&&l| kind(l) != FrameKind::Java) {
                *self.flat.entry(leaf).or_default() += bytes;
            }
        });
        let heaviest = |map: &HashMap<usize, f64>| {
            map.iter()
                .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| name(*b.0).cmp(name(*a.0))))
                .map(|(&label, &bytes)| (label, bytes))
        };
        let (site, bytes) = heaviest(&self.flat)?;
        each(&mut |frames, bytes| {
            if frames.first() != Some(&site) {
                return;
            }
            // The application's line rather than the JDK's (`java.util.zip.Inflater.<init>`).
            let mut java = frames.iter().filter(|&&l| kind(l) == FrameKind::Java);
            let nearest = java.clone().next();
            if let Some(&line) = java.find(|&&l| !is_jdk(name(l))).or(nearest) {
                *self.callers.entry(line).or_default() += bytes;
            }
        });
        let mut line = format!(
            "Heaviest native frame: {}, {} ({:.1}%)",
            name(site),
            human_bytes(bytes as i64),
            if total > 0.0 {
                bytes * 100.0 / total
            } else {
                0.0
            }
        );
        match heaviest(&self.callers) {
            Some((java, from)) => {
                let _ = write!(
                    line,
                    ", reached from {} ({})",
                    without_package(name(java)),
                    human_bytes(from as i64)
                );
            }
            None => line.push_str(
                ", no Java frame above it (-Dnativemem.profile.javaFrames=true records them)",
            ),
        }
        Some(line)
    }
}

/// A Java frame without its package, which the file it names says already: from the first
/// segment that starts in upper case, Java's convention for a class
/// (`com.example.cache.Loader.load(Loader.java:42)` → `Loader.load(Loader.java:42)`). A name
/// with a return type (the perf map's) or without such a segment stays whole.
fn without_package(frame: &str) -> &str {
    let head = frame.split('(').next().unwrap_or(frame);
    if head.contains(' ') {
        return frame;
    }
    let mut start = 0;
    for segment in head.split('.') {
        if segment.starts_with(|c: char| c.is_ascii_uppercase()) {
            return &frame[start..];
        }
        start += segment.len() + 1;
    }
    frame
}

/// Whether a Java frame is the JDK's own (its class is in one of the JDK's packages). The perf
/// map names a native method's wrapper with its return type first (`long java.util.zip.
/// Inflater.init`).
fn is_jdk(frame: &str) -> bool {
    let head = frame.split('(').next().unwrap_or(frame);
    let method = head.rsplit(' ').next().unwrap_or(head);
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| method.starts_with(p))
}

/// The legend, one line under the subtitle: the graph is moved down by a line to make room.
fn with_legend(svg: &str, font_size: usize) -> String {
    let room = font_size * 2;
    let mut out = svg.to_owned();
    // The drawing's height: the root element's and its background's.
    let height = between(svg, "<svg version=\"1.1\" width=\"", " height=\"", "\"")
        .and_then(|h| h.parse::<usize>().ok());
    let Some(height) = height else {
        return out;
    };
    let taller = height + room;
    out = out.replacen(
        &format!("height=\"{height}\""),
        &format!("height=\"{taller}\""),
        1,
    );
    out = out.replacen(
        &format!(" {height}\" xmlns="),
        &format!(" {taller}\" xmlns="),
        1,
    );
    out = out.replacen(
        &format!("width=\"100%\" height=\"{height}\""),
        &format!("width=\"100%\" height=\"{taller}\""),
        1,
    );
    // The frames and the two lines under them (details, search matches) move down.
    out = out.replacen(
        "<svg id=\"frames\" x=\"10\"",
        &format!("<svg id=\"frames\" x=\"10\" y=\"{room}\""),
        1,
    );
    for id in ["details", "matched"] {
        let Some(start) = out.find(&format!("<text id=\"{id}\" ")) else {
            continue;
        };
        let Some(end) = out[start..].find('>').map(|e| start + e) else {
            continue;
        };
        let tag = &out[start..end];
        let moved = between(tag, "", " y=\"", "\"")
            .and_then(|y| Some((y, y.parse::<f64>().ok()?)))
            .map(|(y, value)| {
                tag.replacen(
                    &format!(" y=\"{y}\""),
                    &format!(" y=\"{:.2}\"", value + room as f64),
                    1,
                )
            });
        if let Some(moved) = moved {
            out.replace_range(start..end, &moved);
        }
    }
    // The line under the title starts at the left margin, above the legend: a long one runs
    // out on the right only.
    out = out.replacen(
        "#subtitle { text-anchor:middle;",
        "#subtitle { text-anchor:start;",
        1,
    );
    out = out.replacen(
        "<text id=\"subtitle\" x=\"50.0000%\"",
        "<text id=\"subtitle\" x=\"10\"",
        1,
    );
    // Under the subtitle (or the title): swatches left to right from the left margin.
    let y = font_size * 4 + room - 4;
    let mut legend = String::from("<g id=\"legend\">");
    let mut x = 10.0;
    for kind in FrameKind::ALL {
        let (r, g, b) = kind.rgb();
        let _ = write!(
            legend,
            "<rect x=\"{x:.0}\" y=\"{}\" width=\"{font_size}\" height=\"{font_size}\" \
             fill=\"rgb({r},{g},{b})\"/><text x=\"{:.0}\" y=\"{y}\">{}</text>",
            y - font_size + 2,
            x + font_size as f64 + 4.0,
            kind.label()
        );
        x += font_size as f64 + 4.0 + kind.label().len() as f64 * font_size as f64 * 0.62 + 16.0;
    }
    legend.push_str("</g>");
    match out.find("<svg id=\"frames\"") {
        Some(at) => out.insert_str(at, &legend),
        None => return svg.to_owned(),
    }
    out
}

/// The text between `open` and `close` after the first `after` in `text` (from its start when
/// `after` is empty).
fn between<'t>(text: &'t str, after: &str, open: &str, close: &str) -> Option<&'t str> {
    let from = text.find(after)? + after.len();
    let start = from + text[from..].find(open)? + open.len();
    let end = start + text[start..].find(close)?;
    Some(&text[start..end])
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
        let svg = String::from_utf8(render(&stacks, None, "In-use heap").unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..100]);
        assert!(svg.contains("planted_big") && svg.contains("small"));
        assert!(
            svg.contains("In-use heap: 5.0 KiB in use, one sample per 0 B on average"),
            "{svg}"
        );
        // The summary at the left margin, the legend under it, the frames a line lower.
        assert!(svg.contains("<text id=\"subtitle\" x=\"10\""), "{svg}");
        assert!(svg.contains("Heaviest native frame: planted_big, 4.0 KiB (80.0%)"));
        assert!(svg.contains("<g id=\"legend\">") && svg.contains(">libc/zlib</text>"));
        assert!(
            svg.contains("<svg id=\"frames\" x=\"10\" y=\"24\""),
            "{svg}"
        );
    }

    #[test]
    fn the_summary_names_the_heaviest_native_frame_and_the_application_line_above_it() {
        use FrameKind::{Java, System};
        let names = [
            "inflateInit2_",
            "long java.util.zip.Inflater.init",
            "com.example.Cache.load(Cache.java:42)",
            "com.example.Other.run(Other.java:7)",
            "deflateInit2_",
        ];
        let kinds = [System, Java, Java, Java, System];
        let stacks: Vec<(Vec<usize>, f64)> = vec![
            (vec![0, 1, 2], 3000.0),
            (vec![0, 1, 3], 1000.0),
            (vec![4, 3], 2000.0),
        ];
        let each = |visit: &mut dyn FnMut(&[usize], f64)| {
            for (frames, bytes) in &stacks {
                visit(frames, *bytes);
            }
        };
        let line = Heaviest::default().line(each, |l| names[l], |l| kinds[l]);
        assert_eq!(
            line.unwrap(),
            "Heaviest native frame: inflateInit2_, 3.9 KiB (66.7%), reached from \
             Cache.load(Cache.java:42) (2.9 KiB)"
        );
        let no_java = |visit: &mut dyn FnMut(&[usize], f64)| visit(&[4], 10.0);
        let line = Heaviest::default().line(no_java, |l| names[l], |l| kinds[l]);
        assert!(line.unwrap().contains("no Java frame above it"));
    }

    #[test]
    fn refuses_an_empty_profile() {
        assert!(matches!(
            render(&Stacks::default(), None, "x"),
            Err(ProfileError::FlameGraph(_))
        ));
    }
}
