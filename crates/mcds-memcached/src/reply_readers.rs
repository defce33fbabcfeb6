//! `read_reply` through readers whose buffer holds only part of a
//! line or a data block (from an adversarial review: the parser reads a
//! line or a block in place when it is buffered whole, and must frame
//! exactly as before when it is not) (a tiny `BufReader`, an inner reader that returns a
//! few bytes per `read`), compared with the same bytes read from one slice
//! (which `fuzzing::reply_parser` checks against memcache's parser) and
//! with `fuzzing::reference_reply` through the same tiny reader.

use std::io::{BufReader, Read};

use crate::reply::{MAX_LINE, read_reply};

// The seed helper of this crate's integration tests, shared.
#[path = "../tests/support/mod.rs"]
mod support;

/// Returns at most `chunk` bytes per read, counting what it gave.
struct Chunked<'a> {
    data: &'a [u8],
    chunk: usize,
    given: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.given += n;
        Ok(n)
    }
}

fn describe(r: &Result<crate::reply::MetaReply, memcache::exp::Error>) -> String {
    match r {
        Ok(r) => format!(
            "Ok rc={:?} value={:?} cas={:?} ttl={:?} f={:?} s={:?} opaque={:?} text={}",
            r.rc,
            r.value.as_deref(),
            r.cas(),
            r.ttl(),
            r.client_flags(),
            r.size(),
            r.opaque
                .as_ref()
                .map(|o| (o.bytes().to_vec(), o.len(), o.number())),
            r.text
        ),
        Err(memcache::exp::Error::Io(e)) => format!("Io {:?}", e.kind()),
        Err(e) => format!("Err {e:?}"),
    }
}

fn describe_ref(
    r: &Result<memcache::exp::MetaCommandResult, memcache::exp::Error>,
) -> Option<String> {
    match r {
        Ok(_) => None,
        Err(memcache::exp::Error::Io(e)) => Some(format!("Io {:?}", e.kind())),
        Err(e) => Some(format!("Err {e:?}")),
    }
}

/// Read `data` as a stream of replies from one slice and through a
/// `BufReader::with_capacity(cap)` over a reader giving `chunk` bytes per
/// read: every reply, and the byte each stops at, must agree.
fn compare(data: &[u8], cap: usize, chunk: usize) {
    let mut slice = data;
    let mut line_a = Vec::new();
    let mut line_b = Vec::new();
    let mut tiny = BufReader::with_capacity(
        cap,
        Chunked {
            data,
            chunk,
            given: 0,
        },
    );
    let mut reference = BufReader::with_capacity(
        cap,
        Chunked {
            data,
            chunk,
            given: 0,
        },
    );
    for step in 0..10_000 {
        let a = read_reply(&mut slice, &mut line_a);
        let b = read_reply(&mut tiny, &mut line_b);
        let c = crate::fuzzing::reference_reply(&mut reference);
        let pos_a = data.len() - slice.len();
        let pos_b = tiny.get_ref().given - tiny.buffer().len();
        let pos_c = reference.get_ref().given - reference.buffer().len();
        assert_eq!(
            describe(&a),
            describe(&b),
            "cap {cap} chunk {chunk} step {step} input {:?}",
            String::from_utf8_lossy(data)
        );
        // Errors: the same kind as memcache's framing through the same reader.
        if let Some(c) = describe_ref(&c) {
            if a.is_err() {
                let a = describe(&a);
                // Messages differ only for the allowed cases (text replies,
                // leading spaces); compare the Io kinds and protocol framing.
                if a.starts_with("Io") || c.starts_with("Io") {
                    assert_eq!(
                        a,
                        c,
                        "cap {cap} chunk {chunk} step {step} {:?}",
                        String::from_utf8_lossy(data)
                    );
                }
            }
        }
        let io_err = matches!(&a, Err(memcache::exp::Error::Io(_)));
        if !io_err {
            assert_eq!(
                pos_a,
                pos_b,
                "position: cap {cap} chunk {chunk} step {step} after {} input {:?}",
                describe(&a),
                String::from_utf8_lossy(data)
            );
            assert_eq!(
                pos_a,
                pos_c,
                "position vs reference: cap {cap} chunk {chunk} step {step} after {} input {:?}",
                describe(&a),
                String::from_utf8_lossy(data)
            );
        }
        if io_err || slice.is_empty() {
            return;
        }
    }
}

#[test]
fn tiny_buffers_frame_as_one_slice_does() {
    let seed = support::seed();
    let mut cases: Vec<Vec<u8>> = vec![
        b"VA 2 f5 c7 t-1 s2 O42 l3 h0 W Z X\r\nhi\r\nHD O43\r\n".to_vec(),
        b"VA 10 O0\r\nab\r\nHD O2\r\n".to_vec(),
        b"VA 2 cX\r\nhi\r\nHD O2\r\n".to_vec(),
        b"VA 2\r\nhiXYHD\r\n".to_vec(),
        b"VA 2\r\nhi\rXHD\r\n".to_vec(),
        b"VA 0\r\n\r\nHD\r\n".to_vec(),
        b"VA 02 c0007\r\nhi\r\nHD\r\n".to_vec(),
        b"VA 1073741824\r\nab".to_vec(),
        b"HD\nEN \r\n\r\nZZ\r\nSERVER_ERROR x\r\nERROR\r\nHD".to_vec(),
        b"STORED\r\nEN O5\r\nNOT_FOUND\nEXISTS\r\r\nHD\r\n".to_vec(),
    ];
    // Lines at and around MAX_LINE.
    for len in [
        MAX_LINE - 2,
        MAX_LINE - 1,
        MAX_LINE,
        MAX_LINE + 1,
        MAX_LINE + 2,
    ] {
        for end in [&b"\r\n"[..], b"\n"] {
            let body = len.saturating_sub(3);
            let mut v = b"HD ".to_vec();
            v.extend(std::iter::repeat_n(b'k', body));
            v.extend_from_slice(end);
            v.extend_from_slice(b"HD O9\r\n");
            cases.push(v);
        }
    }
    // Values straddling any buffer boundary.
    for len in [
        0usize, 1, 15, 16, 17, 100, 8191, 8192, 8193, 16383, 16384, 16385,
    ] {
        let mut v = format!("VA {len} c9 O1\r\n").into_bytes();
        v.extend(std::iter::repeat_n(b'x', len));
        v.extend_from_slice(b"\r\nHD O2\r\n");
        cases.push(v);
    }
    cases.extend(crate::fuzzing::token_streams(seed, 3000));
    let shapes = [
        (1, 1),
        (2, 1),
        (3, 2),
        (5, 5),
        (7, 3),
        (16, 16),
        (64, 7),
        (8192, 8192),
        (8193, 4096),
        (16 * 1024, 1500),
        (16 * 1024, 16 * 1024),
    ];
    for case in &cases {
        for &(cap, chunk) in &shapes {
            compare(case, cap, chunk);
        }
    }
    println!(
        "{} inputs x {} reader shapes agreed",
        cases.len(),
        shapes.len()
    );
}

/// A socket with a read timeout, in memory: `first` is there at once; the
/// next read fails with `TimedOut` (the server stopped; no real wait),
/// after which `rest` is there (the server resumed). Counts timed-out reads.
struct Stalling {
    first: Vec<u8>,
    rest: Vec<u8>,
    timeouts: usize,
    stalled: bool,
}

impl Read for Stalling {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let src = if !self.first.is_empty() {
            &mut self.first
        } else if !self.stalled || self.rest.is_empty() {
            self.stalled = true;
            self.timeouts += 1;
            return Err(std::io::ErrorKind::TimedOut.into());
        } else {
            &mut self.rest
        };
        let n = buf.len().min(src.len());
        buf[..n].copy_from_slice(&src[..n]);
        src.drain(..n);
        Ok(n)
    }
}

/// The server stalls right after a `VA` line (its data block not yet
/// sent) for longer than the read timeout. memcache's framing (the
/// reference) reports the timeout; mcds's block fast path once ignored the
/// error of its `fill_buf` and read again: a second full timeout, then the
/// reply.
#[test]
fn a_timeout_after_a_va_line_is_reported() {
    let make = || Stalling {
        first: b"VA 2 O1\r\n".to_vec(),
        rest: b"hi\r\n".to_vec(),
        timeouts: 0,
        stalled: false,
    };
    let mut reference = BufReader::new(make());
    let started = std::time::Instant::now();
    let theirs = crate::fuzzing::reference_reply(&mut reference);
    println!(
        "reference: {} after {:?}, {} timed-out read(s)",
        describe_ref(&theirs).unwrap_or_else(|| "Ok".into()),
        started.elapsed(),
        reference.get_ref().timeouts
    );
    let mut ours = BufReader::new(make());
    let started = std::time::Instant::now();
    let r = read_reply(&mut ours, &mut Vec::new());
    println!(
        "mcds: {} after {:?}, {} timed-out read(s)",
        describe(&r),
        started.elapsed(),
        ours.get_ref().timeouts
    );
    assert!(
        matches!(&r, Err(memcache::exp::Error::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut),
        "mcds read past a timed-out read: {}",
        describe(&r)
    );
}

/// The server stays stopped after a `VA` line: every read times out. The
/// reference fails after one read timeout; mcds once waited two.
#[test]
fn a_stopped_server_after_a_va_line_costs_one_timeout() {
    let make = || Stalling {
        first: b"VA 2 O1\r\n".to_vec(),
        rest: Vec::new(),
        timeouts: 0,
        stalled: false,
    };
    let mut reference = BufReader::new(make());
    let started = std::time::Instant::now();
    let theirs = crate::fuzzing::reference_reply(&mut reference);
    let reference_took = started.elapsed();
    println!(
        "reference: {} after {:?}, {} timed-out read(s)",
        describe_ref(&theirs).unwrap_or_else(|| "Ok".into()),
        reference_took,
        reference.get_ref().timeouts
    );
    let mut ours = BufReader::new(make());
    let started = std::time::Instant::now();
    let r = read_reply(&mut ours, &mut Vec::new());
    let took = started.elapsed();
    println!(
        "mcds: {} after {:?}, {} timed-out read(s)",
        describe(&r),
        took,
        ours.get_ref().timeouts
    );
    assert_eq!(
        ours.get_ref().timeouts,
        1,
        "mcds read {} times into a timeout",
        ours.get_ref().timeouts
    );
}
