//! The text reply parser's fuzz harness (hidden; the `fuzzing` feature):
//! arbitrary bytes as what a server or proxy sends back.

use std::io::{BufRead, BufReader};

use crate::wire::{Expect, Line, ReadError, Resp, read_reply};

/// Arbitrary bytes as a server's replies. The first byte picks the shape
/// each reply is read as (a status line, or a retrieval listing of at most
/// 0 to 6 values); the rest is the stream. Replies are read one after the
/// other until the stream ends or is out of step, as a connection reads
/// them. Checks: nothing panics, and nothing allocates what a reply only
/// claims (a value is read as its bytes arrive); a listing holds at most
/// the values asked for, each with exactly its bytes; and every reply that
/// parsed, written out again in memcached's form, parses to itself.
pub fn replies(data: &[u8]) {
    let Some((&shape, stream)) = data.split_first() else {
        return;
    };
    let expect = match shape % 8 {
        7 => Expect::Line,
        n => Expect::Values(usize::from(n)),
    };
    let mut reader = BufReader::new(stream);
    // At most one reply per byte: a reply takes at least its CRLF.
    for _ in 0..=stream.len() {
        match read_reply(&mut reader, expect) {
            Ok(resp) => {
                if let (Expect::Values(max), Resp::Values(values)) = (expect, &resp) {
                    assert!(
                        values.len() <= max,
                        "{} values for {max} keys",
                        values.len()
                    );
                }
                let mut again = Vec::new();
                encode(&resp, &mut again);
                let reread = read_reply(&mut BufReader::new(&again[..]), expect)
                    .unwrap_or_else(|e| panic!("{resp:?} written as {again:?} reads as {e:?}"));
                assert_eq!(reread, resp, "written as {again:?}");
            }
            Err(ReadError::Bad(_) | ReadError::Io(_)) => return,
        }
        if reader.fill_buf().map_or(true, <[u8]>::is_empty) {
            return;
        }
    }
    panic!("more replies than bytes");
}

/// `resp` as memcached writes it.
fn encode(resp: &Resp, out: &mut Vec<u8>) {
    match resp {
        Resp::Line(line) => {
            let text = match line {
                Line::Stored => "STORED".to_string(),
                Line::NotStored => "NOT_STORED".to_string(),
                Line::Exists => "EXISTS".to_string(),
                Line::NotFound => "NOT_FOUND".to_string(),
                Line::Deleted => "DELETED".to_string(),
                Line::Touched => "TOUCHED".to_string(),
                Line::Number(n) => n.to_string(),
                Line::Error => "ERROR".to_string(),
                Line::ClientError(m) => format!("CLIENT_ERROR {m}"),
                Line::ServerError(m) => format!("SERVER_ERROR {m}"),
            };
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Resp::Values(values) => {
            for v in values {
                out.extend_from_slice(b"VALUE ");
                out.extend_from_slice(&v.key);
                out.extend_from_slice(format!(" {} {}", v.flags, v.data.len()).as_bytes());
                if let Some(cas) = v.cas {
                    out.extend_from_slice(format!(" {cas}").as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&v.data);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"END\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    /// One input of each shape: the first byte picks the op kinds, the
    /// rest is what the server sent (every reply line kind, a value, a
    /// truncated value, an unknown-command error, nothing).
    const SEEDS: [&[u8]; 7] = [
        b"\x07STORED\r\nNOT_STORED\r\n42\r\nCLIENT_ERROR bad\r\n",
        b"\x02VALUE k 5 3 9\r\nabc\r\nVALUE j 0 0\r\n\r\nEND\r\n",
        b"\x01SERVER_ERROR out of memory\r\nEND\r\n",
        b"\x01VALUE k 0 99999999\r\nab",
        b"\x00VALUE k 0 1\r\na\r\nEND\r\n",
        b"\x07ERROR\r\n\r\n",
        b"",
    ];

    #[test]
    fn seeds_of_every_shape_pass() {
        SEEDS.iter().copied().for_each(super::replies);
    }
}
