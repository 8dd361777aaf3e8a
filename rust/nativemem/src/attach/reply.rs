//! A reply of the attach protocol: a status line (a decimal integer, 0 for success) and then the
//! command's text, up to the end of the connection. What the target sends is untrusted: read
//! with a size cap and a deadline ([`read_bounded`]), parsed by a pure function ([`parse_reply`],
//! fuzzed in `fuzz/fuzz_targets/attach_reply.rs`).

use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// The longest status line taken: a sign and 19 digits, with room for a `\r`.
const MAX_STATUS_LINE: usize = 24;

/// A parsed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply<'a> {
    /// The completion status: 0 when the command ran.
    pub status: i64,
    /// Everything after the status line.
    pub body: &'a [u8],
}

/// What was wrong with a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the target closed the connection without a reply")]
    Empty,
    #[error("no status line: the first {MAX_STATUS_LINE} bytes hold no newline")]
    NoStatusLine,
    #[error("the status line is not a number: {0:?}")]
    NotANumber(String),
    #[error("the reply exceeds {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the load reply is neither a return code nor a message: {0:?}")]
    NoReturnCode(String),
}

/// Splits `bytes` into the status and the body. A reply cut before its newline (JDK 8 sends a
/// bare status for some commands) counts when it is all digits.
pub fn parse_reply(bytes: &[u8]) -> Result<Reply<'_>, ReplyError> {
    if bytes.is_empty() {
        return Err(ReplyError::Empty);
    }
    let (line, body) = match bytes.iter().position(|&b| b == b'\n') {
        Some(end) if end <= MAX_STATUS_LINE => (&bytes[..end], &bytes[end + 1..]),
        Some(_) => return Err(ReplyError::NoStatusLine),
        None if bytes.len() <= MAX_STATUS_LINE => (bytes, &bytes[bytes.len()..]),
        None => return Err(ReplyError::NoStatusLine),
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|_| ReplyError::NotANumber(shown(line)))?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ReplyError::NotANumber(shown(line)));
    }
    let status = text
        .parse::<i64>()
        .map_err(|_| ReplyError::NotANumber(shown(line)))?;
    Ok(Reply { status, body })
}

/// What a `load` reply's body says: `return code: N` (JDK 9+; 0 is success) or, from JDK 21 on
/// for an agent that failed to load, a message. `Err` holds that message.
pub fn load_return_code(body: &[u8]) -> Result<i64, ReplyError> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if let Some(code) = text.strip_prefix("return code: ") {
        return code
            .trim()
            .parse()
            .map_err(|_| ReplyError::NoReturnCode(shown(text.as_bytes())));
    }
    // JDK 8 sends the bare number.
    if let Ok(code) = text.parse() {
        return Ok(code);
    }
    Err(ReplyError::NoReturnCode(shown(text.as_bytes())))
}

/// The reply's bytes shown in a message: at most 200, lossily decoded, control characters
/// shown as escapes (the target is untrusted; the message reaches a terminal).
pub fn shown(bytes: &[u8]) -> String {
    crate::terminal_text::escape(&String::from_utf8_lossy(&bytes[..bytes.len().min(200)]))
        .into_owned()
}

/// Why reading stopped early.
#[derive(Debug)]
pub enum ReadFailure {
    TimedOut,
    TooLarge { limit: usize },
    Io(io::Error),
}

/// Reads until the target closes the connection: at most `limit` bytes, by `deadline`.
pub fn read_bounded(
    stream: &mut UnixStream,
    limit: usize,
    deadline: Instant,
) -> Result<Vec<u8>, ReadFailure> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadFailure::TimedOut);
        }
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .map_err(ReadFailure::Io)?;
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                if bytes.len() + n > limit {
                    return Err(ReadFailure::TooLarge { limit });
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(ReadFailure::TimedOut)
            }
            Err(e) => return Err(ReadFailure::Io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn status_line_then_body() {
        let reply = parse_reply(b"0\nreturn code: 0\n").unwrap();
        assert_eq!(reply.status, 0);
        assert_eq!(load_return_code(reply.body), Ok(0));
        let failed = parse_reply(b"101\nProtocol mismatch\n").unwrap();
        assert_eq!(
            (failed.status, failed.body),
            (101, &b"Protocol mismatch\n"[..])
        );
        assert_eq!(parse_reply(b"-1\r\n").unwrap().status, -1);
        assert_eq!(parse_reply(b"0").unwrap().body, b"");
    }

    #[test]
    fn load_bodies_of_each_jdk() {
        assert_eq!(load_return_code(b"return code: 102\n"), Ok(102));
        assert_eq!(load_return_code(b"0\n"), Ok(0));
        let message = load_return_code(b"Agent JAR not found or no Agent-Class attribute\n");
        assert!(matches!(message, Err(ReplyError::NoReturnCode(m)) if m.contains("Agent JAR")));
        assert!(load_return_code(b"return code: lots").is_err());
        assert_eq!(shown(b"a\x1b]0;t\x07b\n"), "a\\x1b]0;t\\x07b\\n");
    }

    #[test]
    fn hostile_replies_are_errors_not_panics() {
        assert_eq!(parse_reply(b""), Err(ReplyError::Empty));
        // Huge, no newline.
        assert_eq!(
            parse_reply(&vec![b'7'; 10 << 20]),
            Err(ReplyError::NoStatusLine)
        );
        // A newline far away.
        let mut late = vec![b'1'; 100];
        late.push(b'\n');
        assert_eq!(parse_reply(&late), Err(ReplyError::NoStatusLine));
        // Non-numeric, NUL, overflow, a lone sign, invalid UTF-8.
        for hostile in [
            &b"ok\n"[..],
            b"0\x00\n",
            b"\x00\n",
            b"99999999999999999999\n",
            b"-\n",
            b"+1\n",
            b"\xff\xfe\n",
            b" 0\n",
        ] {
            assert!(
                matches!(parse_reply(hostile), Err(ReplyError::NotANumber(_))),
                "{hostile:?}"
            );
        }
        // NUL and escapes in the body are the body's: kept as bytes for the caller.
        assert_eq!(
            parse_reply(b"0\n\x00\x1b]0;x\x07").unwrap().body,
            b"\x00\x1b]0;x\x07"
        );
    }

    #[test]
    fn reading_stops_at_the_cap_and_at_the_deadline() {
        let (mut ours, mut theirs) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = theirs.write_all(&vec![b'x'; 1 << 20]);
        });
        let far = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            read_bounded(&mut ours, 4096, far),
            Err(ReadFailure::TooLarge { limit: 4096 })
        ));
        drop(ours);
        writer.join().unwrap();

        let (mut ours, _silent) = UnixStream::pair().unwrap();
        let started = Instant::now();
        let soon = started + Duration::from_millis(200);
        assert!(matches!(
            read_bounded(&mut ours, 4096, soon),
            Err(ReadFailure::TimedOut)
        ));
        assert!(started.elapsed() < Duration::from_secs(5));

        let (mut ours, mut theirs) = UnixStream::pair().unwrap();
        theirs.write_all(b"0\nreturn code: 0\n").unwrap();
        drop(theirs);
        assert_eq!(
            read_bounded(&mut ours, 4096, far).unwrap(),
            b"0\nreturn code: 0\n"
        );
    }
}
