//! The classic text protocol on the wire: commands encoded into bytes, and
//! replies parsed from a buffered reader. A leaf: no sockets, no pool.
//!
//! | command | reply |
//! |---|---|
//! | `get`/`gets <k>…` | `VALUE <k> <flags> <bytes> [<cas>]` + data, …, `END` |
//! | `set`/`add`/`replace`/`append`/`prepend <k> 0 <exp> <n>` + data | `STORED`, `NOT_STORED` |
//! | `cas <k> 0 <exp> <n> <cas>` + data | `STORED`, `EXISTS`, `NOT_FOUND` |
//! | `incr`/`decr <k> <delta>` | `<number>`, `NOT_FOUND` |
//! | `delete <k>` | `DELETED`, `NOT_FOUND` |
//! | `touch <k> <exp>` | `TOUCHED`, `NOT_FOUND` |
//!
//! Any command may instead be answered `ERROR`, `CLIENT_ERROR <msg>` or
//! `SERVER_ERROR <msg>`. `noreply` is never sent: every outcome matters.

use std::io::{self, BufRead, Read};

use mcds_core::Key;

/// Append `<verb> <key> 0 <exptime> <len>[ <cas>]\r\n<value>\r\n`.
pub(crate) fn storage(
    out: &mut Vec<u8>,
    verb: &str,
    key: &Key,
    exptime: i64,
    value: &[u8],
    cas: Option<u64>,
) {
    out.extend_from_slice(verb.as_bytes());
    out.push(b' ');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(format!(" 0 {exptime} {}", value.len()).as_bytes());
    if let Some(cas) = cas {
        out.extend_from_slice(format!(" {cas}").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Append `get`/`gets <k1> <k2> …\r\n`.
pub(crate) fn retrieval(out: &mut Vec<u8>, with_cas: bool, keys: &[&Key]) {
    out.extend_from_slice(if with_cas { b"gets" } else { b"get" });
    for key in keys {
        out.push(b' ');
        out.extend_from_slice(key.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// Append `incr`/`decr <k> <delta>\r\n`.
pub(crate) fn arithmetic(out: &mut Vec<u8>, incr: bool, key: &Key, delta: u64) {
    out.extend_from_slice(if incr { b"incr " } else { b"decr " });
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(format!(" {delta}\r\n").as_bytes());
}

/// Append `delete <k>\r\n`.
pub(crate) fn delete(out: &mut Vec<u8>, key: &Key) {
    out.extend_from_slice(b"delete ");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Append `touch <k> <exptime>\r\n`.
pub(crate) fn touch(out: &mut Vec<u8>, key: &Key, exptime: u32) {
    out.extend_from_slice(b"touch ");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(format!(" {exptime}\r\n").as_bytes());
}

/// What shape of reply a command gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// One status line (storage, arithmetic, delete, touch).
    Line,
    /// A retrieval listing of at most this many `VALUE`s, ending in `END`.
    Values(usize),
}

/// One status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Stored,
    NotStored,
    Exists,
    NotFound,
    Deleted,
    Touched,
    /// The new value of an `incr`/`decr`.
    Number(u64),
    /// `ERROR`: the server (or proxy) does not know the command.
    Error,
    /// `CLIENT_ERROR <message>`.
    ClientError(String),
    /// `SERVER_ERROR <message>`.
    ServerError(String),
}

impl Line {
    /// Whether this is one of the three error replies.
    pub(crate) fn is_error(&self) -> bool {
        matches!(
            self,
            Line::Error | Line::ClientError(_) | Line::ServerError(_)
        )
    }
}

/// One `VALUE` of a retrieval reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Value {
    pub(crate) key: Vec<u8>,
    pub(crate) flags: u32,
    /// The CAS id (`gets`; `None` for `get`).
    pub(crate) cas: Option<u64>,
    pub(crate) data: Vec<u8>,
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resp {
    Line(Line),
    Values(Vec<Value>),
}

/// Why a reply could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The transport failed (or timed out) mid-reply.
    Io(io::Error),
    /// The bytes are not a reply of the expected shape: the stream is out
    /// of step and the connection must be dropped.
    Bad(String),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// The longest status or `VALUE` header line accepted (a `VALUE` line holds
/// a key of at most 250 bytes and four numbers).
const MAX_LINE: u64 = 1024;

/// The largest value read (memcached's largest `-I` is 1 GiB).
const MAX_VALUE: usize = 1 << 30;

/// Read one line, without its `\r\n`.
pub(crate) fn read_line(reader: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut line = Vec::with_capacity(32);
    reader.take(MAX_LINE).read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(ReadError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        )));
    }
    if !line.ends_with(b"\r\n") {
        if line.len() as u64 >= MAX_LINE {
            return Err(ReadError::Bad(format!(
                "a reply line longer than {MAX_LINE} bytes: {}",
                show(&line)
            )));
        }
        return Err(ReadError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection mid-reply",
        )));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

/// Printable form of reply bytes for messages (cut to 120 characters).
pub(crate) fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.escape_debug().take(120).collect();
    if text.len() > 120 {
        out.push('…');
    }
    format!("\"{out}\"")
}

/// Parse a status line.
pub(crate) fn parse_line(line: &[u8]) -> Result<Line, ReadError> {
    let text = std::str::from_utf8(line).map_err(|_| bad_line(line))?;
    Ok(match text {
        "STORED" => Line::Stored,
        "NOT_STORED" => Line::NotStored,
        "EXISTS" => Line::Exists,
        "NOT_FOUND" => Line::NotFound,
        "DELETED" => Line::Deleted,
        "TOUCHED" => Line::Touched,
        "ERROR" => Line::Error,
        _ => {
            if let Some(m) = text.strip_prefix("CLIENT_ERROR") {
                Line::ClientError(m.trim().to_string())
            } else if let Some(m) = text.strip_prefix("SERVER_ERROR") {
                Line::ServerError(m.trim().to_string())
            } else if let Some(m) = text.strip_prefix("ERROR ") {
                // Some proxies add a reason to ERROR.
                Line::ServerError(m.trim().to_string())
            } else if !text.is_empty() && text.trim_end().bytes().all(|b| b.is_ascii_digit()) {
                Line::Number(text.trim_end().parse().map_err(|_| bad_line(line))?)
            } else {
                return Err(bad_line(line));
            }
        }
    })
}

fn bad_line(line: &[u8]) -> ReadError {
    ReadError::Bad(format!("unexpected reply line {}", show(line)))
}

/// Read one reply of the shape `expect`.
pub(crate) fn read_reply(reader: &mut impl BufRead, expect: Expect) -> Result<Resp, ReadError> {
    let max = match expect {
        Expect::Line => return Ok(Resp::Line(parse_line(&read_line(reader)?)?)),
        Expect::Values(max) => max,
    };
    let mut values = Vec::new();
    loop {
        let line = read_line(reader)?;
        if line == b"END" {
            return Ok(Resp::Values(values));
        }
        let Some(header) = line.strip_prefix(b"VALUE ") else {
            // An error reply in place of the listing.
            let parsed = parse_line(&line)?;
            if parsed.is_error() && values.is_empty() {
                return Ok(Resp::Line(parsed));
            }
            return Err(bad_line(&line));
        };
        if values.len() >= max {
            return Err(ReadError::Bad(format!(
                "more than {max} values in reply to a retrieval of {max} keys"
            )));
        }
        values.push(read_value(reader, header, &line)?);
    }
}

/// Read the data block of the `VALUE` line whose words after `VALUE` are
/// `header`.
fn read_value(reader: &mut impl BufRead, header: &[u8], line: &[u8]) -> Result<Value, ReadError> {
    let mut words = header.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let number = |w: Option<&[u8]>| -> Option<u64> { std::str::from_utf8(w?).ok()?.parse().ok() };
    let key = words.next().ok_or_else(|| bad_line(line))?.to_vec();
    let flags = number(words.next())
        .and_then(|f| u32::try_from(f).ok())
        .ok_or_else(|| bad_line(line))?;
    let len = number(words.next())
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= MAX_VALUE)
        .ok_or_else(|| bad_line(line))?;
    let cas = match words.next() {
        None => None,
        w => Some(number(w).ok_or_else(|| bad_line(line))?),
    };
    if words.next().is_some() {
        return Err(bad_line(line));
    }
    // Grown as bytes arrive, not allocated from the length a reply claims.
    let mut data = Vec::new();
    reader.take(len as u64 + 2).read_to_end(&mut data)?;
    if data.len() != len + 2 {
        return Err(ReadError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection mid-value",
        )));
    }
    if !data.ends_with(b"\r\n") {
        return Err(ReadError::Bad(format!(
            "a value of {len} bytes not followed by CRLF (after {})",
            show(line)
        )));
    }
    data.truncate(len);
    Ok(Value {
        key,
        flags,
        cas,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], expect: Expect) -> Result<Resp, ReadError> {
        read_reply(&mut io::BufReader::new(bytes), expect)
    }

    #[test]
    fn encodes_commands() {
        let k = Key::new("k").unwrap();
        let mut out = Vec::new();
        storage(&mut out, "cas", &k, -1, b"", Some(7));
        storage(&mut out, "set", &k, 60, b"a\r\nb", None);
        retrieval(&mut out, true, &[&k, &k]);
        arithmetic(&mut out, false, &k, 3);
        delete(&mut out, &k);
        touch(&mut out, &k, 10);
        assert_eq!(
            out,
            b"cas k 0 -1 0 7\r\n\r\nset k 0 60 4\r\na\r\nb\r\ngets k k\r\ndecr k 3\r\ndelete k\r\ntouch k 10\r\n"
        );
    }

    #[test]
    fn parses_replies() {
        assert_eq!(
            read(b"STORED\r\n", Expect::Line).unwrap(),
            Resp::Line(Line::Stored)
        );
        assert_eq!(
            read(b"42\r\n", Expect::Line).unwrap(),
            Resp::Line(Line::Number(42))
        );
        assert_eq!(
            read(b"SERVER_ERROR object too large for cache\r\n", Expect::Line).unwrap(),
            Resp::Line(Line::ServerError("object too large for cache".into()))
        );
        let Resp::Values(v) = read(
            b"VALUE a 5 3 9\r\nx\r\n\r\nVALUE b 0 0\r\n\r\nEND\r\n",
            Expect::Values(2),
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(v[0].data, b"x\r\n");
        assert_eq!((v[0].flags, v[0].cas), (5, Some(9)));
        assert_eq!((v[1].data.len(), v[1].cas), (0, None));
        assert_eq!(
            read(b"ERROR\r\n", Expect::Values(1)).unwrap(),
            Resp::Line(Line::Error)
        );
    }

    #[test]
    fn refuses_what_is_not_a_reply() {
        for (bytes, expect) in [
            (&b"HELLO\r\n"[..], Expect::Line),
            (b"VALUE a 0 1\r\nx\r\n", Expect::Line),
            (b"VALUE a 0 1\r\nxy\r\nEND\r\n", Expect::Values(1)),
            (
                b"VALUE a 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n",
                Expect::Values(1),
            ),
            (b"VALUE a x 1\r\nx\r\nEND\r\n", Expect::Values(1)),
            (b"VALUE a 0 1 2 3\r\nx\r\nEND\r\n", Expect::Values(1)),
            (b"-5\r\n", Expect::Line),
            (b"99999999999999999999999\r\n", Expect::Line),
        ] {
            assert!(
                matches!(read(bytes, expect), Err(ReadError::Bad(_))),
                "{}",
                show(bytes)
            );
        }
        for bytes in [&b""[..], b"STOR", b"VALUE a 0 5\r\nab"] {
            assert!(
                matches!(read(bytes, Expect::Values(1)), Err(ReadError::Io(_))),
                "{}",
                show(bytes)
            );
        }
        let long = vec![b'x'; 2000];
        assert!(matches!(read(&long, Expect::Line), Err(ReadError::Bad(_))));
    }
}
