//! The codec's fuzz harness, behind the `fuzzing` feature (and in this
//! crate's own tests): not part of the API.
//!
//! [`replies`] takes arbitrary bytes as what a server sent back and decodes
//! them for every op kind, alone and inside a pipeline, through the code
//! the store runs: the reply parser (`reply::read_reply`, on bytes in
//! memory, see `frame`), the pipeline's attribution of replies to ops, and
//! the codec's decoder.
//!
//! [`reply_parser`] checks that parser against the `memcache` crate's
//! (`MetaResponse::parse_header` and `parse_meta_result`, which mcds used
//! before it had its own, kept here as `reference_reply`).
//!
//! What it asserts, besides never panicking:
//!
//! * **Single op.** A reply decoded for an op is of that op's kind (the
//!   kind the reference `MemoryStore` answers the same op with), and a CAS
//!   id in it maps back to the server's id on the wire.
//! * **Pipeline.** The batch interleaves the ops of this server (even
//!   positions, one of each kind) with ops of another server (odd
//!   positions), each tagged `O<position>`. The bytes are read after the
//!   valid replies of the first `k` ops of this server, for every `k`
//!   from none to all: those `k` ops must get exactly their replies, however
//!   the bytes after them go on. Every op that gets a reply at all must get
//!   one that echoes its own opaque, and decodes to its own kind; an op
//!   that got no reply must be one sent quiet (no reply means success) or
//!   be failed, and the stream is not read again once it is given up.
//!
//! Replies are attributed by the opaque they echo, not by their order, so
//! a reply for another op (another server's position, one already
//! answered, one behind the last) cannot be taken for this one: the
//! stream is out of step and the unanswered ops fail instead.

use std::mem::{Discriminant, discriminant};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, Key, MemoryStore, Op, OpArgs, OpKind, Reply, Store, Stored, Ttl};
use mcds_net::incarnation::{Incarnation, ServerClock, Version};
use memcache::exp::{MetaCommandResult, MetaResponse, ReturnCode, parse_meta_result};

use crate::codec;
use crate::pipeline::{Outcome, Planned, Replies, read_replies};
use crate::reply::{MAX_LINE, MAX_VALUE, MetaReply, read_reply};
use crate::session::ErrorMap;

/// Feed `data`, as the bytes a server sent back, to the reply decoder for
/// every op kind, alone and in a pipeline; panic if a reply is attributed to
/// the wrong op (see the [module docs](self)).
pub fn replies(data: &[u8]) {
    reply_parser(data);
    let fixture = Fixture::new();
    single(&fixture, data);
    pipelined(&fixture, data);
    multiget(&fixture, data);
}

/// The keys of [`multiget`]'s gets, two lines of three.
const GETS: usize = 6;

/// `data` read as the replies to a payload of two `gets` lines of three
/// keys each, after each of a few valid beginnings. Where the whole
/// stream is well formed (each line's `VALUE`s in the order of its keys,
/// `END`, then `MN`: [`naive_gets`]), every op must get exactly what the
/// naive reading says. Whatever the bytes, every op gets an outcome, and
/// an op given a value got one that a `VALUE` naming its own key carried.
fn multiget(fixture: &Fixture, data: &[u8]) {
    let keys: Vec<Key> = (0..GETS).map(|i| key(&format!("k{i}"))).collect();
    let batch: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
    let mut wires = Vec::new();
    let part: Vec<Planned> = batch
        .iter()
        .enumerate()
        .map(|(i, op)| {
            Planned::new(
                op,
                i,
                &fixture.incarnation,
                mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
                &mut wires,
            )
            .unwrap_or_else(|e| panic!("encoding a get: {e}"))
        })
        .collect();
    let lines = [0..3, 3..GETS];
    let beginnings: [&[u8]; 3] = [
        b"",
        b"VALUE k1 0 2 7\r\nhi\r\nEND\r\n",
        b"VALUE k0 3 1 9\r\nx\r\nVALUE k2 0 0 4\r\n\r\nEND\r\nVALUE k4 0 1 1\r\ny\r\n",
    ];
    for beginning in beginnings {
        let mut stream = beginning.to_vec();
        stream.extend_from_slice(data);
        let mut replies = InMemory {
            rest: &stream,
            state: State::Open,
        };
        let mut outcomes: Vec<Option<Outcome>> = (0..GETS).map(|_| None).collect();
        crate::pipeline::read_gets_replies(
            &mut replies,
            &fixture.errors(),
            &part,
            &batch,
            &lines,
            &mut outcomes,
        );
        let inc = &fixture.incarnation;
        let naive = naive_gets(&stream, &keys, &lines, inc);
        let values = values_named(&stream, inc);
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let outcome = outcome.expect("read_gets_replies fills every outcome");
            let got = match outcome {
                Outcome::Reply(r) => {
                    match codec::decode(&batch[i], Some(r), &fixture.incarnation, SERVER) {
                        Ok(Reply::Item(Some(item))) => Some(Some(item)),
                        other => panic!("get {i}: a VALUE decoded to {other:?}"),
                    }
                }
                Outcome::Quiet => Some(None),
                Outcome::Failed(_) => None,
                Outcome::Again => panic!("get {i} was left to finish after the batch"),
            };
            if let Some(Some(item)) = &got {
                assert!(
                    values.contains(&(
                        keys[i].as_bytes().to_vec(),
                        item.value.clone(),
                        item.flags,
                        item.cas
                    )),
                    "get {i} took a value no VALUE of its key carried: {item:?} in {stream:?}"
                );
            }
            if let Some(expected) = &naive {
                let want = expected[i]
                    .as_ref()
                    .map(|(value, flags, cas)| (value.clone(), *flags, *cas));
                let got = got
                    .unwrap_or_else(|| panic!("get {i} failed on a well-formed stream {stream:?}"));
                let got = got.map(|item| (item.value.clone(), item.flags, item.cas));
                assert_eq!(got, want, "get {i} of {stream:?}");
            }
        }
    }
}

/// Every `VALUE` reply in `stream`, as far as it frames: (key, data,
/// flags, CAS id as `inc` gives it out).
fn values_named(stream: &[u8], inc: &Incarnation) -> Vec<(Vec<u8>, Vec<u8>, u32, u64)> {
    let mut rest = stream;
    let mut found = Vec::new();
    while !rest.is_empty() {
        match frame(&mut rest) {
            Ok(r) => {
                if let Some(key) = r.value_key() {
                    let key = key.to_vec();
                    let (flags, cas) = (r.client_flags().unwrap_or(0), r.cas().unwrap_or(0));
                    let value = r.into_value().value.map(|v| v.to_vec()).unwrap_or_default();
                    found.push((key, value, flags, inc.cas_out(cas)));
                }
            }
            Err(memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)) => {}
            Err(_) => break,
        }
    }
    found
}

/// What each get of `lines` (ranges of `keys`) reads from `stream`, the
/// naive way, if the stream is well formed: per line, `VALUE`s whose keys
/// come in the line's order, then `END`; then `MN`. `None` for any other
/// stream (an error line, a reply of another kind, a stray key).
#[allow(clippy::type_complexity)]
fn naive_gets(
    stream: &[u8],
    keys: &[Key],
    lines: &[std::ops::Range<usize>],
    inc: &Incarnation,
) -> Option<Vec<Option<(Vec<u8>, u32, u64)>>> {
    let mut rest = stream;
    let mut expected = vec![None; keys.len()];
    for line in lines {
        let mut next = line.start;
        loop {
            let r = frame(&mut rest).ok()?;
            if r.is_end() {
                break;
            }
            let key = r.value_key()?.to_vec();
            let at = (next..line.end).find(|&i| keys[i].as_bytes() == key)?;
            let (flags, cas) = (r.client_flags().unwrap_or(0), r.cas().unwrap_or(0));
            let value = r.into_value().value.map(|v| v.to_vec()).unwrap_or_default();
            expected[at] = Some((value, flags, inc.cas_out(cas)));
            next = at + 1;
        }
    }
    let end = frame(&mut rest).ok()?;
    (end.rc == ReturnCode::Mn && !end.text).then_some(expected)
}

/// The server name in errors.
const SERVER: &str = "fuzz:11211";

/// The batch position of this server's `i`-th op (odd positions belong to
/// another server).
fn position(i: usize) -> usize {
    2 * i
}

/// One op of each kind on this server's keys, and on the other server's.
struct Fixture {
    keys: Vec<Key>,
    foreign: Vec<Key>,
    incarnation: Incarnation,
}

impl Fixture {
    fn new() -> Fixture {
        let keys = (0..KINDS).map(|i| key(&format!("k{i}"))).collect();
        let foreign = (0..KINDS).map(|i| key(&format!("x{i}"))).collect();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: Instant::now(),
        };
        Fixture {
            keys,
            foreign,
            incarnation: Incarnation::new(Version(1, 6, 21), b"fuzz", true, Some(clock)),
        }
    }

    /// This server's ops.
    fn ops(&self) -> Vec<Op<'_>> {
        ops(&self.keys)
    }

    /// The batch: this server's ops at even positions, the other server's
    /// at odd ones.
    fn batch(&self) -> Vec<Op<'_>> {
        ops(&self.keys)
            .into_iter()
            .zip(ops(&self.foreign))
            .flat_map(|(mine, theirs)| [mine, theirs])
            .collect()
    }

    fn errors(&self) -> ErrorMap<'static> {
        ErrorMap {
            server: SERVER,
            io_timeout: Duration::from_secs(1),
            item_size_limit: mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
        }
    }
}

fn key(name: &str) -> Key {
    Key::new(name).unwrap_or_else(|e| panic!("fixture key {name:?}: {e}"))
}

/// How many op kinds there are: every kind of the op table
/// ([`OpKind::ALL`]); [`codec::example_reply`] matches every kind, so a new one
/// does not compile until it is added there.
const KINDS: usize = OpKind::ALL.len();

/// The fixed arguments of the fixture's ops: "v", a minute, CAS id 77,
/// delta and initial value 1.
struct FixedArgs<'a>(&'a Key);

impl<'a> OpArgs<'a> for FixedArgs<'a> {
    fn key(&mut self, _field: &'static str) -> &'a Key {
        self.0
    }
    fn bytes(&mut self, _field: &'static str) -> &'a [u8] {
        b"v"
    }
    fn ttl(&mut self, _field: &'static str) -> Ttl {
        Ttl::secs(60)
    }
    fn number(&mut self, field: &'static str) -> u64 {
        if field == "cas" { 77 } else { 1 }
    }
}

/// One op of each kind of the op table, the `i`-th on `keys[i]`.
fn ops(keys: &[Key]) -> Vec<Op<'_>> {
    OpKind::ALL
        .iter()
        .zip(keys)
        .map(|(&kind, key)| Op::build(kind, &mut FixedArgs(key)))
        .collect()
}

/// The kind of reply each op of [`ops`] has, as the reference backend
/// answers it.
fn kinds() -> &'static [Discriminant<Reply>] {
    static KINDS_OF: OnceLock<Vec<Discriminant<Reply>>> = OnceLock::new();
    KINDS_OF.get_or_init(|| {
        let store = MemoryStore::new();
        let keys: Vec<Key> = (0..KINDS).map(|i| key(&format!("k{i}"))).collect();
        ops(&keys)
            .iter()
            .map(|op| match store.execute(op) {
                Ok(reply) => discriminant(&reply),
                Err(e) => panic!("the reference store failed {}: {e}", op.name()),
            })
            .collect()
    })
}

/// Check a decoded reply to this server's `i`-th op: its kind, and that a
/// CAS id in it maps back to the id the server sent.
fn check_reply(i: usize, op: &Op<'_>, reply: &Reply, r: Option<&MetaReply>, inc: &Incarnation) {
    assert_eq!(
        discriminant(reply),
        kinds()[i],
        "{} decoded to a reply of another kind: {reply:?}",
        op.name()
    );
    let cas = match reply {
        Reply::Item(Some(item)) => Some(item.cas),
        Reply::Cas(cas)
        | Reply::Stored(Stored::Stored(cas))
        | Reply::CasOutcome(CasOutcome::Stored(cas)) => Some(*cas),
        _ => None,
    };
    if let Some(cas) = cas {
        // 0 is "no id" (or, once in 2^64, the id equal to the mask).
        let wire = r.and_then(|r| r.cas()).unwrap_or(0);
        assert!(
            (cas == 0 && wire == 0) || inc.cas_in(cas) == wire,
            "{}: CAS id {cas} does not map back to the server's {wire}",
            op.name()
        );
    }
}

/// Every op decodes `data` as its reply.
fn single(fixture: &Fixture, data: &[u8]) {
    let inc = &fixture.incarnation;
    let errors = fixture.errors();
    for (i, op) in fixture.ops().iter().enumerate() {
        if let Ok(reply) = codec::decode(op, None, inc, SERVER) {
            check_reply(i, op, &reply, None, inc);
        }
        let mut rest = data;
        if codec::is_pair(op, inc) {
            // The text write's reply and the `mg`'s, as one reply.
            let mut both = data;
            if let (Ok(text), Ok(mg)) = (frame(&mut both), frame(&mut both)) {
                let r = codec::merge_pair(op, text, &mg, inc);
                if let Ok(reply) = codec::decode(op, Some(r.clone()), inc, SERVER) {
                    check_reply(i, op, &reply, Some(&r), inc);
                }
            }
        }
        match frame(&mut rest) {
            Ok(r) => {
                if let Ok(reply) = codec::decode(op, Some(r.clone()), inc, SERVER) {
                    check_reply(i, op, &reply, Some(&r), inc);
                }
                // The protocol variants' decoders (append, the append/add
                // loop, the probe after NS), and get_with_ttl's.
                let _ = codec::stored(&r, op.name(), SERVER);
                let _ = codec::probed_size(&r);
                // `get_with_ttl`'s decoder: a hit always carries the TTL
                // the server reported, which is never below -1.
                if let Ok(Some((value, left))) = codec::value_and_ttl(&r, SERVER) {
                    assert_eq!(Some(&value[..]), r.value.as_deref());
                    assert_eq!(left.is_none(), r.ttl() == Some(-1));
                }
            }
            Err(e) => {
                let _ = errors.map(op.key(), e, op.has_side_effect());
            }
        }
    }
}

/// `data` read as the replies to a pipeline, after the valid replies of the
/// first `k` ops, for every `k`.
fn pipelined(fixture: &Fixture, data: &[u8]) {
    let inc = &fixture.incarnation;
    let batch = fixture.batch();
    let mut wires = Vec::new();
    let part: Vec<Planned> = (0..KINDS)
        .map(|i| {
            let index = position(i);
            Planned::new(
                &batch[index],
                index,
                inc,
                mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
                &mut wires,
            )
            .unwrap_or_else(|e| panic!("encoding {}: {e}", batch[index].name()))
        })
        .collect();
    let valid: Vec<(String, Option<Reply>)> = (0..KINDS)
        .map(|i| codec::example_reply(&batch[position(i)], position(i), inc))
        .collect();
    for k in 0..=KINDS {
        let mut stream: Vec<u8> = valid[..k]
            .iter()
            .flat_map(|(bytes, _)| bytes.bytes())
            .collect();
        stream.extend_from_slice(data);
        let (outcomes, _broken) = read(fixture, &part, &batch, &stream);
        assert_eq!(outcomes.len(), part.len());
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let op = &batch[position(i)];
            let expected = valid.get(i).filter(|_| i < k).map(|(_, reply)| reply);
            check_outcome(i, op, &part[i], outcome, expected, inc);
        }
    }
}

/// Check what this server's `i`-th op got; `expected`: it was one of the
/// first `k`, whose valid replies came first.
fn check_outcome(
    i: usize,
    op: &Op<'_>,
    planned: &Planned,
    outcome: Outcome,
    expected: Option<&Option<Reply>>,
    inc: &Incarnation,
) {
    match (outcome, expected) {
        (Outcome::Reply(r), expected) => {
            // The opaque as a number (memcached echoes the token verbatim;
            // a spelling such as `O06` still names position 6).
            // (A token too long to be kept whole is read as the pipeline
            // reads it.)
            let echoed = r.opaque.as_ref().and_then(|o| {
                if o.is_whole() {
                    std::str::from_utf8(o.bytes()).ok()?.parse::<u128>().ok()
                } else {
                    o.index().map(|i| i as u128)
                }
            });
            assert_eq!(
                echoed,
                Some(planned.index as u128),
                "{} took a reply with another op's opaque",
                op.name()
            );
            let decoded = codec::decode(op, Some(r.clone()), inc, SERVER);
            if let Ok(reply) = &decoded {
                check_reply(i, op, reply, Some(&r), inc);
            }
            if let Some(expected) = expected {
                match (expected, decoded) {
                    (Some(want), Ok(got)) => assert_eq!(&got, want, "{}", op.name()),
                    (want, got) => panic!("{}: expected {want:?}, decoded {got:?}", op.name()),
                }
            }
        }
        (Outcome::Again, expected) => {
            assert!(
                matches!(
                    op,
                    Op::Append { .. } | Op::Prepend { .. } | Op::AppendOrAdd { .. }
                ),
                "{} was left to finish after the batch",
                op.name()
            );
            if let Some(expected) = expected {
                assert_eq!(expected, &None, "{}: expected a reply, got NS", op.name());
            }
        }
        (Outcome::Quiet, None) => {
            assert!(
                planned.quiet,
                "{} got no reply but was not quiet",
                op.name()
            );
            match codec::decode(op, None, inc, SERVER) {
                Ok(reply) => check_reply(i, op, &reply, None, inc),
                Err(e) => panic!("{}: a quiet success did not decode: {e}", op.name()),
            }
        }
        (Outcome::Failed(_), None) => {}
        (Outcome::Quiet, Some(want)) => {
            panic!("{}: expected {want:?}, got no reply", op.name())
        }
        (Outcome::Failed(e), Some(want)) => {
            panic!("{}: expected {want:?}, failed: {e}", op.name())
        }
    }
}

/// Read `stream` as the replies to `part` of `batch`.
fn read(
    fixture: &Fixture,
    part: &[Planned],
    batch: &[Op<'_>],
    stream: &[u8],
) -> (Vec<Outcome>, bool) {
    let mut replies = InMemory {
        rest: stream,
        state: State::Open,
    };
    let mut outcomes: Vec<Option<Outcome>> = (0..part.len()).map(|_| None).collect();
    let broken = read_replies(
        &mut replies,
        &fixture.errors(),
        &fixture.incarnation,
        part,
        batch,
        &mut outcomes,
    );
    let outcomes = outcomes
        .into_iter()
        .map(|o| o.expect("read_replies fills every outcome"))
        .collect();
    (outcomes, broken)
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    Open,
    /// A read failed: the stream is unusable.
    Broken,
    /// The reader gave the stream up.
    Discarded,
}

/// Replies from bytes in memory; a read past their end is the server
/// closing the connection.
struct InMemory<'d> {
    rest: &'d [u8],
    state: State,
}

impl Replies for InMemory<'_> {
    fn next_reply(&mut self) -> Result<MetaReply, memcache::exp::Error> {
        assert_eq!(
            self.state,
            State::Open,
            "read from a stream after it was given up"
        );
        let r = frame(&mut self.rest);
        if let Err(e) = &r
            && !matches!(
                e,
                memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
            )
        {
            self.state = State::Broken;
        }
        r
    }

    fn discard(&mut self) {
        self.state = State::Discarded;
    }
}

/// One reply from the front of `rest`, framed as a connection frames it
/// from its socket (`reply::read_reply`, the same function: a test checks it
/// agrees with memcache's own `MetaConnection`). Running out of bytes is
/// the connection closing (`UnexpectedEof`).
pub(crate) fn frame(rest: &mut &[u8]) -> Result<MetaReply, memcache::exp::Error> {
    let r = read_reply(rest, &mut Vec::new());
    if matches!(&r, Err(memcache::exp::Error::Io(_))) {
        // The transport reads what there is, then fails.
        *rest = &[];
    }
    r
}

/// The differential harness of the reply parser: `data` read as a stream
/// of replies, up to its end, by `read_reply` (mcds's parser) and by
/// `reference_reply` (memcache's `MetaResponse::parse_header` and
/// `parse_meta_result`, framed as mcds framed them before it had a parser
/// of its own). Both must accept and reject the same replies, with the same
/// error, the same fields (see `agree`), and leave the stream at the same
/// byte; reading goes on after an error, as far as the bytes go.
pub fn reply_parser(data: &[u8]) {
    let mut ours = data;
    let mut theirs = data;
    // One line buffer for the whole stream, as a connection keeps one.
    let mut line = Vec::new();
    loop {
        let before = ours;
        let a = read_reply(&mut ours, &mut line);
        let b = reference_reply(&mut theirs);
        agree(&a, &b, &before[..before.len() - ours.len()]);
        assert_eq!(
            ours.len(),
            theirs.len(),
            "{data:?}: the parsers stopped at different bytes after {a:?}"
        );
        if ours.is_empty() {
            return;
        }
    }
}

/// One reply from `reader` the way mcds read replies before
/// [`MetaReply`]: a line (at most [`MAX_LINE`] bytes) through memcache's
/// `MetaResponse::parse_header`, a `VA` data block, then
/// `parse_meta_result`. The reference of [`reply_parser`]. memcache's meta
/// parser has no multi-key `gets` replies: `END` and `VALUE` lines are
/// read here by [`naive_value_line`], the key of a `VALUE` going into the
/// result's `key`.
pub(crate) fn reference_reply(
    reader: &mut impl std::io::BufRead,
) -> Result<MetaCommandResult, memcache::exp::Error> {
    use std::io::{self, BufRead, Read};

    let mut line = Vec::with_capacity(64);
    reader
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.last() != Some(&b'\n') {
        if line.len() > MAX_LINE {
            return Err(memcache::exp::Error::Protocol(format!(
                "a reply line longer than {MAX_LINE} bytes"
            )));
        }
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line == b"END" {
        return parse_meta_result(MetaResponse::parse_header(b"EN")?);
    }
    let value_line = naive_value_line(&line).transpose()?;
    let header = MetaResponse::parse_header(if value_line.is_some() { b"VA 0" } else { &line })?;
    let len = match &value_line {
        Some((_, _, len, _)) => Some(*len),
        // `parse_header` accepted it, so the second token is the length.
        None if header.rc() == ReturnCode::Va => Some(
            line.split(|&b| b == b' ')
                .filter(|t| !t.is_empty())
                .nth(1)
                .and_then(|t| std::str::from_utf8(t).ok()?.parse::<usize>().ok())
                .filter(|&n| n <= MAX_VALUE)
                .ok_or_else(|| {
                    memcache::exp::Error::Protocol("VA with a bad data length".into())
                })?,
        ),
        None => None,
    };
    let mut value = None;
    if let Some(len) = len {
        let mut block = Vec::new();
        reader.take(len as u64 + 2).read_to_end(&mut block)?;
        if block.len() < len + 2 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
        }
        if &block[len..] != b"\r\n" {
            return Err(memcache::exp::Error::Protocol(
                "data block missing CRLF terminator".into(),
            ));
        }
        block.truncate(len);
        value = Some(block);
    }
    let mut result = parse_meta_result(header)?;
    result.value = value;
    if let Some((key, flags, _, cas)) = value_line {
        result.key = Some(key);
        result.client_flags = Some(flags);
        result.cas = cas;
    }
    Ok(result)
}

/// A `VALUE <key> <flags> <bytes> [<cas>]` line (`None` for any other
/// line), read the naive way: split at spaces, each number through
/// `str::parse`. Its key, flags, data length and CAS id, or the error
/// mcds's parser must give for it.
#[allow(clippy::type_complexity)]
fn naive_value_line(
    line: &[u8],
) -> Option<Result<(Vec<u8>, u32, usize, Option<u64>), memcache::exp::Error>> {
    let tokens: Vec<&[u8]> = line
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.first() != Some(&&b"VALUE"[..]) {
        return None;
    }
    let bad = |what: &str| memcache::exp::Error::Protocol(format!("a VALUE line with {what}"));
    let number = |t: &[u8]| std::str::from_utf8(t).ok().map(str::to_string);
    Some((|| {
        let key = tokens.get(1).ok_or_else(|| bad("no key"))?;
        if key.len() > 250 {
            return Err(bad("a key longer than 250 bytes"));
        }
        let flags = tokens.get(2).ok_or_else(|| bad("no flags"))?;
        let flags: u32 = number(flags)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("invalid flags"))?;
        let len = tokens.get(3).ok_or_else(|| bad("no length"))?;
        let len: usize = number(len)
            .and_then(|n| n.parse().ok())
            .filter(|&n| n <= MAX_VALUE)
            .ok_or_else(|| bad("an invalid data length"))?;
        let cas = match tokens.get(4) {
            Some(t) => Some(
                number(t)
                    .and_then(|n| n.parse::<u64>().ok())
                    .ok_or_else(|| bad("an invalid CAS id"))?,
            ),
            None => None,
        };
        if tokens.len() > 5 {
            return Err(bad("more than 4 fields"));
        }
        Ok((key.to_vec(), flags, len, cas))
    })())
}

/// Check that mcds's reply `ours` and memcache's `theirs` (read from the
/// same bytes, the reply's own bytes `data`) agree: both replies, with the same
/// return code, data block, CAS id, TTL, client flags, size and opaque
/// (whole, or for a long token its first bytes, length and number); or
/// both errors of the same kind (io errors of the same kind) and message.
/// Two differences are allowed: an error line that starts with a space
/// (`  SERVER_ERROR x`), whose message memcache cuts at the wrong place;
/// and the text-protocol storage replies (`STORED` …), which memcache's
/// meta parser refuses and mcds reads (its non-`set` writes are text
/// commands).
fn agree(
    ours: &Result<MetaReply, memcache::exp::Error>,
    theirs: &Result<MetaCommandResult, memcache::exp::Error>,
    data: &[u8],
) {
    use memcache::exp::Error as E;
    match (ours, theirs) {
        (Ok(a), Err(E::Protocol(_))) if a.text => {
            let line = data.strip_suffix(b"\n").unwrap_or(data);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            // (`data` is empty where the caller does not have the bytes.)
            assert!(
                data.is_empty()
                    || [&b"STORED"[..], b"NOT_STORED", b"EXISTS", b"NOT_FOUND"].contains(&line),
                "{data:?}: read as a text reply"
            );
            assert!(a.opaque.is_none() && a.value.is_none(), "{data:?}");
        }
        (Ok(a), Ok(b)) => {
            assert_eq!(a.rc, b.rc, "{data:?}");
            if a.text {
                // (A `VALUE`'s key; memcache's `k` flag is not kept.)
                assert_eq!(a.value_key(), b.key.as_deref(), "{data:?}");
            }
            let data_block = a.clone().into_value().value;
            assert_eq!(data_block.as_deref(), b.value.as_deref(), "{data:?}");
            assert_eq!(
                (a.cas(), a.ttl(), a.client_flags(), a.size()),
                (b.cas, b.ttl, b.client_flags, b.size),
                "{data:?}"
            );
            match (&a.opaque, &b.opaque) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    assert_eq!(a.len(), b.len(), "{data:?}");
                    assert_eq!(a.bytes(), &b[..a.bytes().len()], "{data:?}");
                    assert_eq!(a.is_whole(), a.bytes().len() == b.len(), "{data:?}");
                    // A number mcds could have sent: 1 to 10 digits, a u32.
                    let number = ((1..=10).contains(&b.len()) && b.iter().all(u8::is_ascii_digit))
                        .then(|| std::str::from_utf8(b).ok()?.parse::<u32>().ok())
                        .flatten();
                    assert_eq!(a.number(), number, "{data:?}");
                }
                (a, b) => panic!("{data:?}: opaque {a:?} vs {b:?}"),
            }
        }
        (Err(a), Err(b)) => {
            let same = match (a, b) {
                (E::Io(a), E::Io(b)) => a.kind() == b.kind(),
                (E::Protocol(a), E::Protocol(b)) => a == b,
                (E::Server(a), E::Server(b)) | (E::Rejected(a), E::Rejected(b)) => {
                    a == b || data.first() == Some(&b' ')
                }
                _ => false,
            };
            assert!(same, "{data:?}: mcds {a:?}, memcache {b:?}");
        }
        _ => panic!("{data:?}: mcds {ours:?}, memcache {theirs:?}"),
    }
}

/// Read `data` (valid replies only) as a connection reads it, reusing
/// `line` for every reply: for the allocation count test of the
/// `mcds-fuzz` crate, which counts what this allocates. The replies'
/// number, and how many had a data block.
pub fn read_valid_replies(mut data: &[u8], line: &mut Vec<u8>) -> (usize, usize) {
    let (mut replies, mut values) = (0, 0);
    while !data.is_empty() {
        match read_reply(&mut data, line) {
            Ok(r) => {
                replies += 1;
                values += usize::from(r.value.is_some());
            }
            Err(e) => panic!("not a valid reply: {e}"),
        }
    }
    (replies, values)
}

/// `count` streams of reply tokens that matter to mcds's parser or to
/// memcache's (codes, numbers with signs, leading zeros and overflow,
/// flags, opaques mcds could and could not have sent, text replies, data
/// blocks), glued by spaces and line ends at random: a deterministic
/// xorshift from `seed`. The differential harness ([`reply_parser`]) and
/// the framing tests read them.
pub fn token_streams(seed: u64, count: usize) -> Vec<Vec<u8>> {
    const TOKENS: &[&str] = &[
        "HD",
        "VA",
        "EN",
        "NS",
        "EX",
        "NF",
        "MN",
        "ME",
        "ERROR",
        "CLIENT_ERROR",
        "SERVER_ERROR",
        "ZZ",
        "va",
        "0",
        "1",
        "2",
        "+2",
        "-1",
        "18446744073709551616",
        "c5",
        "c",
        "c+5",
        "c-5",
        "cx",
        "t-1",
        "t+3",
        "t",
        "f7",
        "f-1",
        "f4294967296",
        "s3",
        "s",
        "l9",
        "lx",
        "h0",
        "h",
        "k",
        "kQQ==",
        "kA",
        "kZm9v",
        "b",
        "b64",
        "O",
        "O42",
        "O+0001",
        "O-1",
        "O\u{e9}",
        "W",
        "Z",
        "X",
        "q",
        "hi",
        "STORED",
        "VALUE",
        "VALUE k0 0 2 5",
        "END",
        "k0",
        "NOT_STORED",
        "EXISTS",
        "NOT_FOUND",
        "3",
        "10",
        "02",
        "00000000000000000002",
        "c00000000000000000000005",
        "O0000000042",
        "O4294967295",
        "O4294967296",
        "\r\nhi\r\n",
        "\r\nab\r",
        "\r\n\r\n",
    ];
    const GLUE: &[&str] = &[" ", " ", " ", "  ", "\r\n", "\n", "\r", "", "\r\nhi\r\n"];
    let mut state = seed | 1;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    (0..count)
        .map(|_| {
            let mut input = String::new();
            for _ in 0..next(16) {
                input += TOKENS[next(TOKENS.len())];
                input += GLUE[next(GLUE.len())];
            }
            if next(2) == 0 {
                input += "\r\n";
            }
            input.into_bytes()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use mcds_core::Error;

    /// Crafted streams through the whole harness (parser, attribution to
    /// the fixture's pipeline after every prefix of valid replies,
    /// decoding): error lines among the replies, quiet ops, pairs, replies
    /// out of order, twice or missing, odd spacing, bad flags on `VA`
    /// lines, base64 keys, opaques of one digit and two.
    #[test]
    fn crafted_streams_through_the_harness() {
        for case in [
            &b"HD c30 O2\r\nSTORED\r\nVA 1 c31 O4\r\nv\r\nCLIENT_ERROR bad data chunk\r\nVA 1 c32 O6\r\nv\r\nMN\r\n"[..],
            b"SERVER_ERROR out of memory storing object\r\nEXISTS\r\nEN O8\r\nHD O10\r\nMN\r\n",
            b"HD O4\r\nHD O2\r\nMN\r\n",
            b"HD O2\r\nHD O2\r\nMN\r\n",
            b"HD O02\r\nNOT_STORED\r\nEN O004\r\nMN\r\n",
            b"  HD   c5   O2  \r\n STORED \r\nEN O4\r\nMN\r\n",
            b"HD c5 O2\r\nSTORED\r\nVA 1 cx O4\r\nv\r\nMN\r\n",
            b"HD c5 O2\r\nSTORED\r\nVA 1 O4 b kQ\r\nv\r\nMN\r\n",
            b"HD c5 O2\r\nSTORED\r\nVA 1 O4 b kQQ==\r\nv\r\nMN\r\n",
            b"HD O0\r\nHD O1\r\nHD O2\r\nHD O3\r\nHD O4\r\nHD O5\r\nHD O6\r\nHD O7\r\nHD O8\r\nHD O9\r\nHD O10\r\nMN\r\n",
            b"ERROR\r\nERROR\r\nERROR\r\nMN\r\n",
            b"HD c5 O2\r\nEN O4\r\nNOT_FOUND\r\nMN\r\n",
            b"HD c5 O2\r\nSTORED\r\nEN O4\r\nSTORED\r\nEN O6\r\nSTORED\r\nEN O6\r\nMN\r\n",
            b"VA 1 O18\r\n4\r\nVA 1 O16\r\n4\r\nMN\r\n",
            b"HD c5 O2\r\nMN O2\r\n",
            b"MN\r\nHD O2\r\n",
        ] {
            replies(case);
        }
    }

    /// Crafted multi-key `gets` streams through the whole harness: hits
    /// and misses in order, a key out of order, a key of no op, a `VALUE`
    /// without a CAS id, an error line for a line, `MN` early or missing.
    #[test]
    fn crafted_gets_streams_through_the_harness() {
        for case in [
            &b"VALUE k1 0 1 5\r\na\r\nEND\r\nEND\r\nMN\r\n"[..],
            b"VALUE k2 0 1 5\r\na\r\nVALUE k1 0 1 6\r\nb\r\nEND\r\nEND\r\nMN\r\n",
            b"VALUE zz 0 1 5\r\na\r\nEND\r\nEND\r\nMN\r\n",
            b"VALUE k0 7 1\r\na\r\nEND\r\nEND\r\nMN\r\n",
            b"SERVER_ERROR out of memory writing get response\r\nEND\r\nMN\r\n",
            b"END\r\nMN\r\n",
            b"END\r\nEND\r\nEND\r\nMN\r\n",
            b"END\r\nEND\r\nHD O1\r\nMN\r\n",
            b"VALUE k3 0 1 5\r\na\r\nEND\r\n",
        ] {
            replies(case);
        }
    }

    /// Three `gets` lines (keys k0–k8, three per line) read from `stream`;
    /// what each get got: `Some(Some(value))`, `Some(None)` (a miss) or
    /// `None` (failed).
    fn three_lines(stream: &[u8]) -> Vec<Option<Option<Vec<u8>>>> {
        let fixture = Fixture::new();
        let keys: Vec<Key> = (0..9).map(|i| key(&format!("k{i}"))).collect();
        let batch: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
        let mut wires = Vec::new();
        let part: Vec<Planned> = batch
            .iter()
            .enumerate()
            .map(|(i, op)| Planned::new(op, i, &fixture.incarnation, 1 << 20, &mut wires).unwrap())
            .collect();
        let mut replies = InMemory {
            rest: stream,
            state: State::Open,
        };
        let mut outcomes: Vec<Option<Outcome>> = (0..9).map(|_| None).collect();
        crate::pipeline::read_gets_replies(
            &mut replies,
            &fixture.errors(),
            &part,
            &batch,
            &[0..3, 3..6, 6..9],
            &mut outcomes,
        );
        outcomes
            .into_iter()
            .zip(&batch)
            .map(|(o, op)| match o.expect("every outcome filled") {
                Outcome::Reply(r) => match codec::decode(op, Some(r), &fixture.incarnation, SERVER)
                {
                    Ok(Reply::Item(Some(item))) => Some(Some(item.value)),
                    other => panic!("{other:?}"),
                },
                Outcome::Quiet => Some(None),
                Outcome::Failed(_) => None,
                Outcome::Again => panic!("again"),
            })
            .collect()
    }

    /// A `gets` that memcached fails midway drops the replies it has not
    /// sent, earlier lines' included: here the first line's `END` is gone,
    /// the error line stands for the second line, and the third line's
    /// `END` would be read as the second's. One terminator short at `MN`:
    /// nothing from the error on may stand, and nothing is a miss.
    #[test]
    fn a_gets_line_dropped_before_an_error_line_fails_the_rest_not_misses_them() {
        let got = three_lines(b"SERVER_ERROR out of memory writing get response\r\nEND\r\nMN\r\n");
        assert_eq!(got, vec![None; 9]);
        // Replies sent before the error line's own line stand (the first
        // line here); the second line's, before the error, do not.
        let got = three_lines(
            b"VALUE k1 0 1 5\r\na\r\nEND\r\nVALUE k4 0 1 6\r\nb\r\nSERVER_ERROR out of memory writing get response\r\nMN\r\n",
        );
        assert_eq!(
            got[..3],
            [Some(None), Some(Some(b"a".to_vec())), Some(None)]
        );
        assert!(got[3..].iter().all(Option::is_none), "{got:?}");
    }

    /// With every line ended at `MN`, nothing was dropped: an error line
    /// fails its own line's unanswered gets, and the others stand.
    #[test]
    fn an_error_line_with_every_line_ended_fails_only_its_own_line() {
        let got = three_lines(
            b"VALUE k0 0 1 5\r\na\r\nEND\r\nSERVER_ERROR out of memory writing get response\r\nVALUE k8 0 1 6\r\nb\r\nEND\r\nMN\r\n",
        );
        let a = Some(Some(b"a".to_vec()));
        let b = Some(Some(b"b".to_vec()));
        assert_eq!(
            got,
            vec![
                a,
                Some(None),
                Some(None),
                None,
                None,
                None,
                Some(None),
                Some(None),
                b
            ]
        );
    }

    /// This server's part of the fixture batch, encoded.
    fn part(fixture: &Fixture) -> Vec<Planned> {
        let batch = fixture.batch();
        let mut wires = Vec::new();
        (0..KINDS)
            .map(|i| {
                let index = position(i);
                Planned::new(
                    &batch[index],
                    index,
                    &fixture.incarnation,
                    1 << 20,
                    &mut wires,
                )
                .unwrap()
            })
            .collect()
    }

    /// The valid replies of this server's ops `ops`, in order.
    fn valid(fixture: &Fixture, ops: std::ops::Range<usize>) -> String {
        let batch = fixture.batch();
        ops.map(|i| codec::example_reply(&batch[position(i)], position(i), &fixture.incarnation).0)
            .collect()
    }

    /// `stream` read as the replies to the fixture's pipeline; the harness
    /// runs on it too.
    fn read_stream(stream: &[u8]) -> (Vec<Outcome>, bool) {
        replies(stream);
        let fixture = Fixture::new();
        read(&fixture, &part(&fixture), &fixture.batch(), stream)
    }

    fn failed(outcome: &Outcome) -> Option<&Error> {
        match outcome {
            Outcome::Failed(e) => Some(e),
            _ => None,
        }
    }

    #[test]
    fn valid_replies_decode_to_exactly_their_replies() {
        let fixture = Fixture::new();
        let stream = valid(&fixture, 0..KINDS) + "MN\r\n";
        let (outcomes, broken) = read_stream(stream.as_bytes());
        assert!(!broken);
        let batch = fixture.batch();
        let part = part(&fixture);
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let op = &batch[position(i)];
            let (_, want) = codec::example_reply(op, position(i), &fixture.incarnation);
            check_outcome(i, op, &part[i], outcome, Some(&want), &fixture.incarnation);
        }
    }

    #[test]
    fn quiet_ops_without_a_reply_succeed() {
        // memcached 1.6.18's replies to the fixture batch when the writes
        // succeed and the get misses: only loud ops answer.
        // (The conditional writes answer twice: their text write, then
        // `mg`.)
        let stream = "HD c30 O2\r\nSTORED\r\nVA 1 c31 O4\r\nv\r\nSTORED\r\nVA 1 c32 O6\r\nv\r\n\
                      EXISTS\r\nVA 1 c33 O8\r\nw\r\nSTORED\r\nHD O10\r\nSTORED\r\nHD O12\r\n\
                      STORED\r\nHD O14\r\nVA 2 O16\r\n42\r\n\
                      VA 1 O18\r\n4\r\nVA 1 O20\r\n1\r\nEN O26\r\nMN\r\n";
        let (outcomes, broken) = read_stream(stream.as_bytes());
        assert!(!broken);
        let fixture = Fixture::new();
        let batch = fixture.batch();
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let op = &batch[position(i)];
            let reply = match outcome {
                Outcome::Reply(r) => codec::decode(op, Some(r), &fixture.incarnation, SERVER),
                Outcome::Quiet => codec::decode(op, None, &fixture.incarnation, SERVER),
                _ => panic!("{} was not answered", op.name()),
            };
            assert!(reply.is_ok(), "{}: {reply:?}", op.name());
        }
    }

    #[test]
    fn a_truncated_reply_fails_the_rest_and_keeps_the_replies_before_it() {
        let fixture = Fixture::new();
        let stream = valid(&fixture, 0..3) + "VA 5 O6\r\nab";
        let (outcomes, broken) = read_stream(stream.as_bytes());
        assert!(broken);
        assert!(outcomes[..3].iter().all(|o| matches!(o, Outcome::Reply(_))));
        for outcome in &outcomes[3..] {
            // Every later op has a side effect: it may have been applied.
            assert!(
                matches!(failed(outcome), Some(Error::Ambiguous { .. })),
                "{:?}",
                failed(outcome)
            );
        }
        // Cut inside the header line, or inside the data block's CRLF.
        for cut in ["VA 2 f5 c1000 O0\r", "VA 2 f5 c1000 O0\r\nhi\r"] {
            let (outcomes, broken) = self::read_stream(cut.as_bytes());
            assert!(broken);
            assert!(matches!(failed(&outcomes[0]), Some(Error::Io { .. })));
        }
    }

    #[test]
    fn garbage_puts_the_stream_out_of_step() {
        for garbage in [
            &b"hello world\r\n"[..],
            b"\x00\xff\r\n",
            b"VA x O0\r\n",
            b"VA 99999999999999999999 O0\r\n",
            b"HD cNaN O0\r\n",
            b"\r\n\r\n",
        ] {
            let (outcomes, broken) = read_stream(garbage);
            assert!(broken, "{garbage:?}");
            assert!(outcomes.iter().all(|o| failed(o).is_some()), "{garbage:?}");
        }
        replies(b"");
        replies(b"MN\r\n");
        // Found by libFuzzer: `O06` is read as position 6 (memcached
        // echoes the token it was sent, `O6`).
        replies(b"SERVER_ERROR object too large for cache\r\nEN O06\r\nMN\r\n");
    }

    #[test]
    fn a_reply_for_another_op_is_never_taken() {
        let fixture = Fixture::new();
        for stream in [
            // Position 1 is another server's op.
            "HD O1\r\nMN\r\n".to_string(),
            // Position 2 answered twice.
            valid(&fixture, 0..2) + "HD c5 O2\r\nMN\r\n",
            // Position 2 behind position 4.
            "NS O4\r\nHD c5 O2\r\nMN\r\n".to_string(),
            // No opaque, or one no op has.
            "HD\r\nMN\r\n".to_string(),
            "HD O99\r\nMN\r\n".to_string(),
        ] {
            // (`replies` checks that every reply taken echoes its op's
            // opaque.)
            let (outcomes, broken) = read_stream(stream.as_bytes());
            assert!(broken, "{stream:?}");
            let out_of_step = outcomes
                .iter()
                .filter_map(failed)
                .any(|e| e.to_string().contains("out of step"));
            assert!(out_of_step, "{stream:?}");
        }
        // The get (position 0) answered with the set's reply (position 2)
        // is not the get's: the get, quiet, succeeded unseen.
        let (outcomes, broken) = read_stream(b"HD c5 O2\r\nMN\r\n");
        assert!(!broken);
        assert!(matches!(outcomes[0], Outcome::Quiet));
        assert!(
            matches!(&outcomes[1], Outcome::Reply(r) if r.opaque.as_ref().map(|o| o.bytes()) == Some(&b"2"[..]))
        );
    }

    #[test]
    fn an_error_line_goes_to_the_one_op_that_can_own_it() {
        // Between the start and the set's reply only the get (quiet) can
        // have failed.
        let stream = "SERVER_ERROR out of memory storing object\r\nHD c5 O2\r\nMN\r\n";
        let (outcomes, _) = read_stream(stream.as_bytes());
        assert!(matches!(
            failed(&outcomes[0]),
            Some(Error::OutOfMemory { .. })
        ));
        assert!(matches!(&outcomes[1], Outcome::Reply(_)));
        // Two error lines before the cas's reply: the quiet get and the
        // loud set, add, replace could each own one; quiet mode does not
        // say which, so all four fail as ambiguous.
        let stream = "CLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad data chunk\r\n\
                      EXISTS\r\nEN O8\r\nMN\r\n";
        let (outcomes, broken) = read_stream(stream.as_bytes());
        assert!(!broken);
        assert!(outcomes[..4].iter().all(|o| failed(o).is_some()));
        assert!(matches!(&outcomes[4], Outcome::Reply(_)));
        // The line just before a pair's `mg` reply is its text write's:
        // here the add's (position 4) failed; the quiet get succeeded.
        let stream = "HD c5 O2\r\nSERVER_ERROR out of memory storing object\r\nEN O4\r\nMN\r\n";
        let (outcomes, broken) = read_stream(stream.as_bytes());
        assert!(!broken);
        assert!(matches!(outcomes[0], Outcome::Quiet));
        assert!(matches!(
            failed(&outcomes[2]),
            Some(Error::OutOfMemory { .. })
        ));
        // A pair's `mg` reply without its text reply, or a text reply
        // no pair owns: out of step.
        for stream in [
            "HD c5 O2\r\nEN O4\r\nMN\r\n",
            "STORED\r\nHD c5 O2\r\nMN\r\n",
            "HD c5 O2\r\nSTORED\r\nMN\r\n",
            "STORED\r\nSTORED\r\nEN O4\r\nMN\r\n",
        ] {
            let (outcomes, broken) = read_stream(stream.as_bytes());
            assert!(broken, "{stream:?}");
            assert!(
                outcomes[2..].iter().all(|o| failed(o).is_some()),
                "{stream:?}"
            );
        }
    }

    /// The seed corpus of the fuzz target.
    fn seeds() -> Vec<(String, Vec<u8>)> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/seeds/memcached_replies"
        );
        let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|entry| {
                let path = entry.unwrap().path();
                (path.display().to_string(), std::fs::read(&path).unwrap())
            })
            .collect();
        seeds.sort();
        assert!(seeds.len() >= 5, "{seeds:?}");
        seeds
    }

    #[test]
    fn the_seeds_hold_and_the_pipeline_seed_is_answered_in_full() {
        for (name, bytes) in seeds() {
            replies(&bytes);
            if name.ends_with("pipeline-all-ops") {
                let (outcomes, broken) = read_stream(&bytes);
                assert!(!broken, "{name}");
                assert!(outcomes.iter().all(|o| failed(o).is_none()), "{name}");
            }
        }
    }

    #[test]
    fn mutated_seeds_hold() {
        // A deterministic xorshift: the same mutations on every run.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n.max(1) as u64) as usize
        };
        let seeds = seeds();
        for round in 0..300 {
            let (_, seed) = &seeds[round % seeds.len()];
            let mut bytes = seed.clone();
            for _ in 0..1 + next(4) {
                let at = next(bytes.len() + 1);
                match next(5) {
                    0 if at < bytes.len() => bytes[at] = next(256) as u8,
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    2 => bytes.insert(at, b"\r\n 0123456789OVAHDENSEXNFMc"[next(26)]),
                    3 => bytes.truncate(at),
                    _ => {
                        let (_, other) = &seeds[next(seeds.len())];
                        let from = next(other.len());
                        let piece = other[from..(from + 1 + next(16)).min(other.len())].to_vec();
                        bytes.splice(at..at, piece);
                    }
                }
            }
            replies(&bytes);
        }
    }

    #[test]
    fn the_reply_parser_agrees_with_memcaches() {
        for (_, seed) in seeds() {
            reply_parser(&seed);
        }
        let long_opaque = format!("HD O+{}42 c1\r\n", "0".repeat(60));
        let long_line = format!("HD {}\r\nHD\r\n", "k".repeat(MAX_LINE));
        for case in [
            &b""[..],
            b"\r\n",
            b"  SERVER_ERROR out of memory\r\n ERROR\r\nCLIENT_ERROR  x \r\n",
            b"VA 2 f5 c7 t-1 s2 O42 l3 h0 W Z X\r\nhi\r\n",
            b"VA +2 c+7 t+1 s-0 f+0\r\nhi\r\n",
            b"VA 2 c-1\r\nhi\r\n",
            b"VA 2 cX\r\nhi\r\nHD\r\n",
            b"VA 2 cX\r\nh",
            b"VA 1073741824\r\n",
            b"VA 1073741825 c1\r\n",
            b"VA 99999999999999999999\r\n",
            b"HD b kQQ== k!\r\nHD kA b\r\nHD b kZm9v\r\nHD b k====\r\nHD b kA=A=\r\n",
            b"HD kA b\r\nHD bx kQQ==\r\nHD b kQ===\r\nHD b\r\nHD b k\r\n",
            b"ME key exp=-1 la=1 cas=2\r\nME 5\r\nMN\r\n",
            b"HD O O06 O\xff\r\nHD O4294967296\r\n",
            b"HD\nEN \r\n\r\nZZ\r\nSERVER_ERROR x\r\nERROR\r\nHD",
            b"HD \r\r\nHD\r\n\r\n",
            b"HD c18446744073709551615 c18446744073709551616\r\n",
            b"HD t-9223372036854775808 f4294967295 s0 l18446744073709551615\r\n",
            long_opaque.as_bytes(),
            long_line.as_bytes(),
            &long_line.as_bytes()[..MAX_LINE + 4],
        ] {
            reply_parser(case);
        }
        // Replies made of tokens that matter to either parser, spaced,
        // ended and followed by data blocks at random (a fixed seed: the
        // same inputs on every run).
        for input in token_streams(0x2545_F491_4F6C_DD1D, 20_000) {
            reply_parser(&input);
        }
    }

    #[test]
    fn framing_in_memory_matches_the_socket() {
        use std::io::Write;
        use std::net::{Shutdown, TcpListener, TcpStream};

        // memcache's meta connection reads no multi-key `gets` replies
        // (`VALUE`, `END`): those seeds are compared with the naive
        // reference of `reply_parser` instead.
        let gets = |b: &[u8]| b.windows(5).any(|w| w == b"VALUE" || w == b"END\r\n");
        let mut inputs: Vec<Vec<u8>> = seeds()
            .into_iter()
            .map(|(_, b)| b)
            .filter(|b| !gets(b))
            .collect();
        inputs.extend([
            b"VA 10 O0\r\nab\r\nHD O2\r\n".to_vec(),
            b"VA 2 cX\r\nhi\r\nHD O2\r\n".to_vec(),
            b"VA 2\r\nhiXYHD\r\n".to_vec(),
            b"HD\nEN \r\n\r\nZZ\r\nSERVER_ERROR x\r\nERROR\r\nHD".to_vec(),
        ]);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        for input in inputs {
            let client = TcpStream::connect(addr).unwrap();
            let (mut server, _) = listener.accept().unwrap();
            server.write_all(&input).unwrap();
            server.shutdown(Shutdown::Write).unwrap();
            let mut socket = memcache::exp::MetaConnection::from_stream(client);
            let mut memory = &input[..];
            // Up to the end of the bytes.
            loop {
                let from_socket = socket.receive().and_then(memcache::exp::parse_meta_result);
                let from_memory = frame(&mut memory);
                agree(&from_memory, &from_socket, &[]);
                if from_memory.is_err() && memory.is_empty() {
                    break;
                }
            }
        }
    }
}
