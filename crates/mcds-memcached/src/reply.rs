//! Meta replies read without an allocation per reply: [`MetaReply`] holds
//! the return code and the flags mcds reads, parsed in place from a reply
//! line kept in a per-connection buffer (see [`read_reply`]); only a `VA`
//! reply's data block gets a `Vec` of its own.
//!
//! It accepts and rejects exactly what memcache's own parser
//! (`MetaResponse::parse_header` and `parse_meta_result`) accepts and
//! rejects, with the same errors, and agrees with it on every field it
//! keeps: the fuzz harness `fuzzing::reply_parser` checks both on arbitrary
//! bytes.

use std::fmt;
use std::io::{self, BufRead, Read};

use memcache::exp::{Error, ReturnCode};

/// The longest reply line read (a meta reply line is its code and flags:
/// a key of up to 250 bytes, base64-encoded if binary, an opaque, a few
/// numbers). Past it the stream is given up as not memcached's.
pub(crate) const MAX_LINE: usize = 8 * 1024;

/// The longest data block read: memcached's largest item (`-I`) is 1 GiB
/// (memcache's `MAX_VALUE_LENGTH` too).
pub(crate) const MAX_VALUE: usize = 1 << 30;

/// One meta reply: its return code, its data block, and the flags mcds
/// reads. The other flags are checked as memcache checks them (a bad
/// number in `l`, a key `k` that is not base64 under `b`, are protocol
/// errors) and dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetaReply {
    /// The return code (`HD`, `VA`, `EN`, …).
    pub(crate) rc: ReturnCode,
    /// The data block of a `VA` reply.
    pub(crate) value: Option<Vec<u8>>,
    /// `c`: the item's CAS id.
    pub(crate) cas: Option<u64>,
    /// `t`: the seconds the item has left (`-1`: it never expires).
    pub(crate) ttl: Option<i64>,
    /// `f`: the item's client flags.
    pub(crate) client_flags: Option<u32>,
    /// `s`: the item's size.
    pub(crate) size: Option<u64>,
    /// `O`: the opaque token the command sent, echoed.
    pub(crate) opaque: Option<Opaque>,
    /// A text-protocol storage reply (`STORED`, `NOT_STORED`, `EXISTS`,
    /// `NOT_FOUND`, read as `HD`, `NS`, `EX`, `NF`): the answer to a write
    /// mcds sends as a text command (see [`codec`](crate::codec)). It
    /// carries no flags and no opaque.
    pub(crate) text: bool,
}

impl MetaReply {
    /// An `EN` with no flags and no data: what a pair's `mg` is taken to
    /// have said when it got an error line instead (see
    /// `Session::send_expecting`), and the base every parsed reply fills in.
    pub(crate) fn nothing() -> MetaReply {
        MetaReply {
            rc: ReturnCode::En,
            value: None,
            cas: None,
            ttl: None,
            client_flags: None,
            size: None,
            opaque: None,
            text: false,
        }
    }
}

/// How many bytes of an opaque token are kept inline: mcds sends at most
/// 10 digits, so a longer echo is never one of its own.
const OPAQUE_INLINE: usize = 32;

/// An echoed opaque token (`O<token>`), without a heap allocation: its
/// first [`OPAQUE_INLINE`] bytes (all of it, for any token mcds sends), its
/// length, and its value as a number.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Opaque {
    /// The token's first bytes; `head[..len.min(OPAQUE_INLINE)]` is used.
    head: [u8; OPAQUE_INLINE],
    /// The token's whole length.
    len: usize,
    /// The whole token read as a `usize` (`str::parse`: an optional `+`,
    /// then digits), for the pipeline's positions.
    index: Option<usize>,
}

impl Opaque {
    /// The opaque of the token `token` (the flag without its `O`).
    fn new(token: &[u8]) -> Opaque {
        let kept = token.len().min(OPAQUE_INLINE);
        let mut head = [0; OPAQUE_INLINE];
        head[..kept].copy_from_slice(&token[..kept]);
        Opaque {
            head,
            len: token.len(),
            index: parse_number(token),
        }
    }

    /// The token's bytes: all of them when [`is_whole`](Self::is_whole),
    /// else its first [`OPAQUE_INLINE`].
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.head[..self.len.min(OPAQUE_INLINE)]
    }

    /// The token's length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether [`bytes`](Self::bytes) is the whole token.
    pub(crate) fn is_whole(&self) -> bool {
        self.len <= OPAQUE_INLINE
    }

    /// The token as a `usize` (as `str::parse` reads it), if it is one.
    pub(crate) fn index(&self) -> Option<usize> {
        self.index
    }
}

impl fmt::Debug for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Opaque {
    /// The token, lossily as text; a token cut short ends in `…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(self.bytes()))?;
        if !self.is_whole() {
            write!(f, "…")?;
        }
        Ok(())
    }
}

/// `token` read as a number of type `T` the way memcache reads a numeric
/// flag (UTF-8, then `str::parse`).
fn parse_number<T: std::str::FromStr>(token: &[u8]) -> Option<T> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

/// A numeric flag's value, or memcache's error for it.
fn numeric_flag<T: std::str::FromStr>(token: &[u8]) -> Result<T, Error> {
    parse_number(token).ok_or_else(|| {
        Error::Protocol(format!(
            "invalid numeric flag {:?}",
            String::from_utf8_lossy(token)
        ))
    })
}

/// Whether memcache's base64 decoder takes `token` (standard alphabet,
/// length a multiple of 4, at most two `=`, only at the very end).
fn is_base64(token: &[u8]) -> bool {
    if token.len() % 4 != 0 {
        return false;
    }
    let padding = token.iter().rev().take_while(|&&b| b == b'=').count();
    // Padding counts per 4-byte chunk: more than 2 in the last chunk, or
    // any in an earlier one (3+ trailing `=` reach into it or fill it), is
    // refused.
    if padding > 2 {
        return false;
    }
    token[..token.len() - padding]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A reply line parsed: the reply without its data block, the length of
/// the data block a `VA` line announces, and the first bad flag, reported
/// only once the data block is read (as memcache reads the block before it
/// looks at the flags).
struct Parsed {
    /// The reply, `value` still `None`.
    reply: MetaReply,
    /// A `VA` line's data length.
    data_len: Option<usize>,
    /// A bad numeric flag or base64 key.
    flags: Result<(), Error>,
}

/// Parse a reply line (without its line end). The four text-protocol
/// storage replies, alone on their line, are [`MetaReply::text`] replies.
/// `ERROR`/`CLIENT_ERROR` lines are [`Error::Rejected`], `SERVER_ERROR` lines [`Error::Server`] (with the
/// rest of the line, trimmed, as the message), an empty line, an unknown
/// code or a `VA` without a valid length [`Error::Protocol`]. Allocates
/// only for an error.
fn parse_line(line: &[u8]) -> Result<Parsed, Error> {
    let mut tokens = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    let Some(code) = tokens.next() else {
        return Err(Error::Protocol("empty response line".into()));
    };
    let text = match line {
        b"STORED" => Some(ReturnCode::Hd),
        b"NOT_STORED" => Some(ReturnCode::Ns),
        b"EXISTS" => Some(ReturnCode::Ex),
        b"NOT_FOUND" => Some(ReturnCode::Nf),
        _ => None,
    };
    if let Some(rc) = text {
        return Ok(Parsed {
            reply: MetaReply {
                rc,
                text: true,
                ..MetaReply::nothing()
            },
            data_len: None,
            flags: Ok(()),
        });
    }
    let rc = match code {
        b"HD" => ReturnCode::Hd,
        b"VA" => ReturnCode::Va,
        b"EN" => ReturnCode::En,
        b"NS" => ReturnCode::Ns,
        b"EX" => ReturnCode::Ex,
        b"NF" => ReturnCode::Nf,
        b"MN" => ReturnCode::Mn,
        b"ME" => ReturnCode::Me,
        b"ERROR" => return Err(Error::Rejected("ERROR".into())),
        b"CLIENT_ERROR" | b"SERVER_ERROR" => {
            let start = line.iter().take_while(|&&b| b == b' ').count() + code.len();
            let message = String::from_utf8_lossy(&line[start..]).trim().to_string();
            return Err(if code == b"CLIENT_ERROR" {
                Error::Rejected(message)
            } else {
                Error::Server(message)
            });
        }
        _ => {
            return Err(Error::Protocol(format!(
                "unknown return code {:?}",
                String::from_utf8_lossy(code)
            )));
        }
    };
    let mut data_len = None;
    // Only VA carries a data length (an ME line's first token is a key,
    // which may start with a digit).
    if rc == ReturnCode::Va {
        let token = tokens
            .next()
            .ok_or_else(|| Error::Protocol("VA response missing data length".into()))?;
        let len: usize = parse_number(token)
            .ok_or_else(|| Error::Protocol("VA response has an invalid data length".into()))?;
        if len > MAX_VALUE {
            return Err(Error::Protocol(format!(
                "VA response announces {len} bytes, above the {MAX_VALUE} byte limit"
            )));
        }
        data_len = Some(len);
    }
    let mut reply = MetaReply {
        rc,
        ..MetaReply::nothing()
    };
    let mut key: Option<&[u8]> = None;
    let mut base64 = false;
    let mut flags = Ok(());
    for token in tokens {
        let Some((&flag, rest)) = token.split_first() else {
            continue;
        };
        let step = match flag {
            b'f' => numeric_flag(rest).map(|n| reply.client_flags = Some(n)),
            b'c' => numeric_flag(rest).map(|n| reply.cas = Some(n)),
            b't' => numeric_flag(rest).map(|n| reply.ttl = Some(n)),
            b's' => numeric_flag(rest).map(|n| reply.size = Some(n)),
            // Last access: not kept, but checked.
            b'l' => numeric_flag::<u64>(rest).map(drop),
            b'k' => {
                key = Some(rest);
                Ok(())
            }
            b'O' => {
                reply.opaque = Some(Opaque::new(rest));
                Ok(())
            }
            b'b' => {
                base64 = true;
                Ok(())
            }
            _ => Ok(()),
        };
        if step.is_err() {
            flags = step;
            break;
        }
    }
    if flags.is_ok() && base64 && key.is_some_and(|k| !is_base64(k)) {
        flags = Err(Error::Protocol("invalid base64 token".into()));
    }
    Ok(Parsed {
        reply,
        data_len,
        flags,
    })
}

/// One meta reply from `reader`: a line up to `\n` (one trailing `\r`
/// dropped, at most [`MAX_LINE`] bytes) read into `line` (a buffer kept
/// across replies: cleared, its capacity reused) and parsed in place, then
/// for `VA` a data block of the announced length and `\r\n`. The end of the
/// stream is `UnexpectedEof`. The data block grows as its bytes arrive:
/// nothing is allocated from a length the reply claims. Nothing else is
/// allocated, but for errors. The fuzz harness frames replies from memory
/// with the same function.
pub(crate) fn read_reply(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> Result<MetaReply, Error> {
    line.clear();
    reader.take(MAX_LINE as u64 + 1).read_until(b'\n', line)?;
    let Some((b'\n', mut text)) = line.split_last() else {
        if line.len() > MAX_LINE {
            return Err(Error::Protocol(format!(
                "a reply line longer than {MAX_LINE} bytes"
            )));
        }
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
    };
    if let Some((b'\r', rest)) = text.split_last() {
        text = rest;
    }
    let Parsed {
        mut reply,
        data_len,
        flags,
    } = parse_line(text)?;
    if let Some(len) = data_len {
        let mut block = read_block(reader, len + 2)?;
        if &block[len..] != b"\r\n" {
            return Err(Error::Protocol("data block missing CRLF terminator".into()));
        }
        block.truncate(len);
        reply.value = Some(block);
    }
    flags?;
    Ok(reply)
}

/// The next `n` bytes of `reader` (a data block and its CRLF), copied
/// from its buffer as they arrive: the `Vec` grows with the bytes read,
/// never from `n` alone, and a block that has arrived whole (a counter's
/// value, say) costs one allocation of its size. The end of the stream
/// before `n` bytes is `UnexpectedEof`.
fn read_block(reader: &mut impl BufRead, n: usize) -> io::Result<Vec<u8>> {
    let mut block = Vec::new();
    while block.len() < n {
        let available = match reader.fill_buf() {
            Ok([]) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let take = available.len().min(n - block.len());
        block.extend_from_slice(&available[..take]);
        reader.consume(take);
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<MetaReply, Error> {
        read_reply(&mut &bytes[..], &mut Vec::new())
    }

    #[test]
    fn the_flags_mcds_reads() {
        let r = read(b"VA 2 f5 c7 t-1 s2 O42 l3 h0 k Xq W Z\r\nhi\r\n").unwrap();
        assert_eq!(r.rc, ReturnCode::Va);
        assert_eq!(r.value.as_deref(), Some(&b"hi"[..]));
        assert_eq!(
            (r.client_flags, r.cas, r.ttl, r.size),
            (Some(5), Some(7), Some(-1), Some(2))
        );
        let o = r.opaque.unwrap();
        assert_eq!(
            (o.bytes(), o.index(), o.is_whole()),
            (&b"42"[..], Some(42), true)
        );
        let r = read(b"HD\r\n").unwrap();
        assert_eq!(
            (r.rc, r.value, r.cas, r.opaque),
            (ReturnCode::Hd, None, None, None)
        );
        assert_eq!(read(b"MN\n").unwrap().rc, ReturnCode::Mn);
    }

    #[test]
    fn text_storage_replies() {
        for (line, rc) in [
            (&b"STORED\r\n"[..], ReturnCode::Hd),
            (b"NOT_STORED\r\n", ReturnCode::Ns),
            (b"EXISTS\n", ReturnCode::Ex),
            (b"NOT_FOUND\r\n", ReturnCode::Nf),
        ] {
            let r = read(line).unwrap();
            assert_eq!((r.rc, r.text, r.opaque), (rc, true, None), "{line:?}");
        }
        // Only the bare word: anything else on the line is not memcached's.
        assert!(matches!(read(b"STORED x\r\n"), Err(Error::Protocol(_))));
        assert!(matches!(read(b" STORED\r\n"), Err(Error::Protocol(_))));
        assert!(!read(b"HD\r\n").unwrap().text);
    }

    #[test]
    fn a_long_opaque_keeps_its_head_length_and_number() {
        let token = format!("+{}7", "0".repeat(40));
        let r = read(format!("HD O{token}\r\n").as_bytes()).unwrap();
        let o = r.opaque.unwrap();
        assert!(!o.is_whole());
        assert_eq!(o.len(), token.len());
        assert_eq!(o.bytes(), &token.as_bytes()[..OPAQUE_INLINE]);
        assert_eq!(o.index(), Some(7));
    }

    #[test]
    fn errors() {
        let protocol = |bytes: &[u8]| matches!(read(bytes), Err(Error::Protocol(_)));
        assert!(protocol(b"\r\n"));
        assert!(protocol(b"ZZ\r\n"));
        assert!(protocol(b"VA\r\n"));
        assert!(protocol(b"VA x\r\n"));
        assert!(protocol(b"VA 1073741825\r\n"));
        assert!(protocol(b"HD cNaN\r\n"));
        assert!(protocol(b"HD t\r\n"));
        assert!(protocol(b"HD f4294967296\r\n"));
        assert!(protocol(b"HD b kA\r\n"));
        assert!(protocol(b"VA 2\r\nhiX\n"));
        assert!(read(b"HD b kQQ==\r\n").is_ok());
        assert!(read(b"HD kA\r\n").is_ok());
        assert!(protocol(&[b'H'; MAX_LINE + 1]));
        let eof = |bytes: &[u8]| matches!(read(bytes), Err(Error::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof);
        assert!(eof(b""));
        assert!(eof(b"HD"));
        assert!(eof(b"VA 2 cX\r\nhi\r"));
        assert!(matches!(read(b"ERROR\r\n"), Err(Error::Rejected(m)) if m == "ERROR"));
        assert!(matches!(read(b"CLIENT_ERROR bad  \r\n"), Err(Error::Rejected(m)) if m == "bad"));
        assert!(matches!(read(b"SERVER_ERROR oom\r\n"), Err(Error::Server(m)) if m == "oom"));
    }

    #[test]
    fn a_bad_flag_is_reported_after_the_data_block_is_read() {
        let mut bytes = &b"VA 2 cX\r\nhi\r\nHD\r\n"[..];
        let mut line = Vec::new();
        assert!(matches!(
            read_reply(&mut bytes, &mut line),
            Err(Error::Protocol(_))
        ));
        assert_eq!(
            read_reply(&mut bytes, &mut line).unwrap().rc,
            ReturnCode::Hd
        );
    }
}
