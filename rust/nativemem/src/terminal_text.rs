//! Strings from files someone else wrote (a dump's maps lines, its sidecar's symbol and Java frame
//! names, bundle and dump names) made safe for a terminal: every control character (C0, DEL, C1)
//! is shown as a visible escape (`\x1b`, `\u009b`), so a crafted name can neither move the cursor,
//! clear the screen, set the title, colour the text nor start a line of its own. Every text
//! renderer passes such strings through here; JSON writers escape them by themselves.

use std::borrow::Cow;

/// Whether `c` makes a terminal act instead of print: C0 (below U+0020), DEL, C1 (U+0080–U+009F).
pub fn is_control(c: char) -> bool {
    c.is_control()
}

/// `text` with each control character written visibly: `\t`, `\n`, `\r` as such, other C0 and
/// DEL as `\xNN`, C1 as `\u00NN` (as Java's `TerminalText` writes them). Borrowed when there is
/// none (the common case: no copy).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    Cow::Owned(out)
}

/// Appends `text` to `out`, escaped as [`escape`] does.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        push_char(out, c);
    }
}

/// Appends one character, escaped as [`escape`] does.
pub fn push_char(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 && is_control(c) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_control(c) => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_shown_and_nothing_else_changes() {
        let hostile = "lib\u{1b}[2J\u{1b}]0;title\u{7}\u{1b}[31mred\u{7f}\u{9b}6n\t\n\rend";
        let shown = escape(hostile);
        assert_eq!(
            shown,
            "lib\\x1b[2J\\x1b]0;title\\x07\\x1b[31mred\\x7f\\u009b6n\\t\\n\\rend"
        );
        assert!(!shown.chars().any(is_control), "{shown}");
        for c in (0..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            assert!(is_control(c), "{:x}", c as u32);
            assert!(!escape(&c.to_string()).chars().any(is_control));
        }
        assert!(matches!(
            escape("operator new(unsigned long) äöü 日本"),
            Cow::Borrowed(_)
        ));
    }
}
