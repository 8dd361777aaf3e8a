//! Allocation-free file reading and byte-string parsing.

/// A NUL-terminated path in a fixed buffer.
pub struct PathBuf {
    bytes: [u8; 1024],
    len: usize,
}

impl PathBuf {
    pub fn new() -> Self {
        PathBuf {
            bytes: [0; 1024],
            len: 0,
        }
    }

    /// Appends `part`; returns false (leaving the path unusable) when it does not fit.
    pub fn push(&mut self, part: &[u8]) -> bool {
        if self.len + part.len() >= self.bytes.len() {
            self.len = self.bytes.len();
            return false;
        }
        self.bytes[self.len..self.len + part.len()].copy_from_slice(part);
        self.len += part.len();
        true
    }

    /// Replaces the path with `part`; false as for [`PathBuf::push`].
    pub fn replace(&mut self, part: &[u8]) -> bool {
        self.len = 0;
        self.push(part)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len.min(self.bytes.len())]
    }

    pub fn truncate(&mut self, len: usize) {
        self.len = len;
    }

    fn as_c_ptr(&mut self) -> Option<*const libc::c_char> {
        if self.len >= self.bytes.len() {
            return None;
        }
        self.bytes[self.len] = 0;
        Some(self.bytes.as_ptr() as *const libc::c_char)
    }
}

/// Reads a small file whole into `buf`; `None` if it is missing, unreadable or larger.
pub fn read_small<'a>(path: &mut PathBuf, buf: &'a mut [u8]) -> Option<&'a [u8]> {
    let mut filled = 0;
    let complete = for_each_chunk(path, |chunk| {
        if filled + chunk.len() > buf.len() {
            return false;
        }
        buf[filled..filled + chunk.len()].copy_from_slice(chunk);
        filled += chunk.len();
        true
    })?;
    complete.then_some(&buf[..filled])
}

/// Calls `on_line` for each line of a file of any size, without the newline; lines longer than
/// 4 KiB are skipped. Stops early when `on_line` returns false. `None` if the file cannot be opened.
pub fn for_each_line(path: &mut PathBuf, mut on_line: impl FnMut(&[u8]) -> bool) -> Option<()> {
    let mut line = [0u8; 4096];
    let mut len = 0;
    let mut overlong = false;
    let mut stopped = false;
    for_each_chunk(path, |chunk| {
        for &b in chunk {
            if b == b'\n' {
                if !overlong && !on_line(&line[..len]) {
                    stopped = true;
                    return false;
                }
                len = 0;
                overlong = false;
            } else if len < line.len() {
                line[len] = b;
                len += 1;
            } else {
                overlong = true;
            }
        }
        true
    })?;
    if !stopped && len > 0 && !overlong {
        on_line(&line[..len]);
    }
    Some(())
}

/// Streams a file through `on_chunk`; returns whether it was read to the end.
fn for_each_chunk(path: &mut PathBuf, mut on_chunk: impl FnMut(&[u8]) -> bool) -> Option<bool> {
    let c_path = path.as_c_ptr()?;
    // SAFETY: NUL-terminated path; the descriptor is closed below on every path.
    let fd = unsafe { libc::open(c_path, libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut chunk = [0u8; 4096];
    let complete = loop {
        // SAFETY: reads at most chunk.len() bytes into chunk.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
            continue;
        }
        if n <= 0 {
            break n == 0;
        }
        if !on_chunk(&chunk[..n as usize]) {
            break false;
        }
    };
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    Some(complete)
}

/// Parses a decimal integer, allowing a leading '-' and surrounding whitespace.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let s = trim(bytes);
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    Some(if negative { -value } else { value })
}

pub fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b" 100000\n"), Some(100000));
        assert_eq!(parse_i64(b"-1\n"), Some(-1));
        assert_eq!(parse_i64(b"max"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"99999999999999999999"), None);
    }

    #[test]
    fn lines_of_a_file_larger_than_one_chunk() {
        let dir = std::env::temp_dir().join(std::format!("cc-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big");
        let mut text = std::string::String::new();
        for i in 0..2000 {
            text.push_str(&std::format!("line {i}\n"));
        }
        text.push_str("last-without-newline");
        std::fs::write(&file, &text).unwrap();
        let mut path = PathBuf::new();
        assert!(path.push(file.to_str().unwrap().as_bytes()));
        let mut count = 0;
        let mut last = std::vec::Vec::new();
        for_each_line(&mut path, |l| {
            count += 1;
            last = l.to_vec();
            true
        })
        .unwrap();
        assert_eq!(count, 2001);
        assert_eq!(last, b"last-without-newline");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
