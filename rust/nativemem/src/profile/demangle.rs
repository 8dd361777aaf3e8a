//! Readable function names: demangling (Rust, C++) and jeprof's short form.

/// Demangles a Rust (legacy or v0) or Itanium C++ symbol; other names come back unchanged.
pub fn demangle(symbol: &str) -> String {
    // Version suffixes of dynamic symbols (`name@@GLIBCXX_3.4`) are not part of the name.
    let symbol = symbol.split('@').next().unwrap_or(symbol);
    if let Ok(rust) = rustc_demangle::try_demangle(symbol) {
        return format!("{rust:#}");
    }
    if symbol.starts_with("_Z") {
        if let Ok(cpp) = cpp_demangle::Symbol::new(symbol) {
            if let Ok(text) = cpp.demangle(&cpp_demangle::DemangleOptions::default()) {
                return text;
            }
        }
    }
    symbol.to_owned()
}

/// jeprof's `ShortFunctionName`: drops argument lists, template arguments and a leading return
/// type, so `std::vector<int>::push_back(int const&)` becomes `std::vector::push_back`.
pub fn short_name(full: &str) -> String {
    if is_short(full) {
        return full.to_owned();
    }
    let mut name = full.to_owned();
    // Argument lists, innermost first, each with an optional trailing " const".
    while let Some(stripped) = remove_innermost(&name, '(', ')', true) {
        name = stripped;
    }
    while let Some(stripped) = remove_innermost(&name, '<', '>', false) {
        name = stripped;
    }
    // "int foo::bar" → "foo::bar": a leading type before the last "word::" segment.
    if let Some(at) = leading_type_end(&name) {
        name = name[at..].to_owned();
    }
    name
}

/// Whether [`short_name`] leaves `name` as it is: no argument or template list, no `::` that a
/// leading type could stand before (`libz.so.1+0x3a10`, `0x7f00`).
pub fn is_short(name: &str) -> bool {
    !name.contains(['(', '<']) && !name.contains("::")
}

/// Removes every innermost `open … close` group (no nested brackets inside) in one pass.
fn remove_innermost(text: &str, open: char, close: char, with_const: bool) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let after = &rest[start + 1..];
        let end = match after.find([open, close]) {
            Some(i) if after[i..].starts_with(close) => i,
            Some(i) => {
                // A nested opener: keep up to it and look again from there.
                out.push_str(&rest[..start + 1 + i]);
                rest = &after[i..];
                continue;
            }
            None => break,
        };
        out.push_str(&rest[..start]);
        rest = &after[end + 1..];
        if with_const {
            let trimmed = rest.trim_start();
            if let Some(tail) = trimmed.strip_prefix("const") {
                rest = tail;
            }
        }
        changed = true;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Perl's `s/^.*\s+(\w+::)/$1/`: the end of the greedy prefix before the last `\s+\w+::`.
fn leading_type_end(name: &str) -> Option<usize> {
    let bytes = name.as_bytes();
    let mut found = None;
    for (i, _) in name.match_indices("::") {
        // Walk back over the word before "::", then require whitespace before it.
        let mut start = i;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        if start < i && start > 0 && bytes[start - 1].is_ascii_whitespace() {
            found = Some(start);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_and_cpp() {
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h1234567890abcdefE"),
            "core::ptr::drop_in_place"
        );
        assert_eq!(
            demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)"
        );
        assert_eq!(demangle("malloc"), "malloc");
        assert_eq!(
            demangle("_ZSt19__throw_ios_failurePKci@@GLIBCXX_3.4.26"),
            "std::__throw_ios_failure(char const*, int)"
        );
    }

    #[test]
    fn shortens_like_jeprof() {
        assert_eq!(
            short_name("std::vector<int, std::allocator<int> >::push_back(int const&)"),
            "std::vector::push_back"
        );
        assert_eq!(
            short_name("rocksdb::Foo::Bar(int) const"),
            "rocksdb::Foo::Bar"
        );
        assert_eq!(
            short_name("void* rocksdb::port::cacheline_aligned_alloc(unsigned long)"),
            "rocksdb::port::cacheline_aligned_alloc"
        );
        assert_eq!(short_name("planted_big"), "planted_big");
        assert_eq!(short_name("operator new(unsigned long)"), "operator new");
        assert_eq!(short_name("a<b<c>>::d(e(f))"), "a::d");
        for name in ["planted_big", "libz.so.1+0x3a10", "0x7f00", "operator new"] {
            assert!(is_short(name), "{name}");
        }
        for name in ["f(int)", "a<b>", "int a::b"] {
            assert!(!is_short(name), "{name}");
        }
    }
}
