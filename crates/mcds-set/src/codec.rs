//! The set codecs: an append-only log of `+member` / `-member` tokens.
//!
//! A set's value is a log of operations. Adding members appends `+m`
//! tokens, removing them appends `-m` tokens; no read is needed to modify a
//! set, and concurrent appends never lose each other. Decoding replays the
//! log.
//!
//! ## Text codec
//!
//! Byte for byte Dustin Sallings' `encodeSet`/`decodeSet` ("Maintaining a set in memcached") for
//! members without whitespace, control bytes or `%`: each token is the op,
//! the member and one space — `+a +b -a ` decodes to `{b}`.
//!
//! **Escaping.** A member byte that the format cannot carry — ASCII
//! whitespace and control bytes (0x00–0x20), DEL (0x7f) — and `%` itself is
//! written as `%XX` (two uppercase hex digits), like URL encoding: the member
//! `a b%` is the token `+a%20b%25 `. Bytes ≥ 0x80 (UTF-8) are written as
//! they are. The decoder turns `%XX` back into the byte and reads a `%` not
//! followed by two hex digits literally, so logs written by the Python seed
//! (where `%` is an ordinary byte) still decode.
//!
//! **Decoding** splits on ASCII whitespace, as Python 2's `str.split()` does.
//! A token that starts with neither `+` nor `-` is ignored (and counted as
//! dirt, so the next compaction drops it).
//!
//! ## Binary codec
//!
//! For arbitrary bytes without escaping: each token is the op byte (`+` or
//! `-`), the member length as an unsigned LEB128 varint, and the member
//! bytes. A truncated or malformed log is an error.
//!
//! ## Order and dirtiness
//!
//! Decoding keeps first-insertion order: a member sits where the `+` that
//! made it a member stands (a member removed and added again moves to the
//! end). *Dirtiness* is the number of tokens that no longer contribute — a
//! removed member's `+` and its `-`, a repeated `+`, a `-` of a non-member,
//! an unknown token — that is, what compaction would drop. It is the
//! compaction hint.
//!
//! The module is private: a set's codec is chosen with
//! [`Codec`](crate::Codec), and `mcds-fuzz` reaches these functions through
//! the `fuzzing` feature. The example of these docs is the unit test
//! `module_example`.

use std::borrow::Cow;
use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Add or remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+member`.
    Add,
    /// `-member`.
    Remove,
}

impl Op {
    fn byte(self) -> u8 {
        match self {
            Op::Add => b'+',
            Op::Remove => b'-',
        }
    }
}

/// A decoded set: the members in first-insertion order and the dirtiness
/// (what [`Set::decoded`](crate::Set::decoded) returns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The members, in the order the `+` tokens that made them members
    /// stand.
    pub members: Vec<Vec<u8>>,
    /// Tokens that no longer contribute (what compaction would drop).
    pub dirtiness: usize,
}

/// Replays tokens into a [`Decoded`]: one allocation per member added (a
/// repeated add allocates nothing). The hash table holds only indices into
/// `order` (4 bytes a slot), so it stays in cache where a map of owned keys
/// would miss on every token, and each thread keeps its table between
/// decodes (up to [`KEPT_TABLE_SLOTS`]) instead of faulting in fresh pages
/// every time.
struct Replay {
    /// Live members and removed slots, in insertion order (collected in
    /// place into the result).
    order: Vec<Option<Vec<u8>>>,
    /// Indices of the live members in `order`.
    index: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    tokens: usize,
}

/// The largest table a thread keeps between decodes (4 MiB of slots).
const KEPT_TABLE_SLOTS: usize = 1 << 20;

thread_local! {
    static TABLE: std::cell::RefCell<HashTable<u32>> = const { std::cell::RefCell::new(HashTable::new()) };
}

impl Replay {
    /// Room for `tokens` tokens up front: growing the table while replaying
    /// costs more than the decoding itself.
    fn with_capacity(tokens: usize) -> Replay {
        let mut index = TABLE.with(|t| std::mem::take(&mut *t.borrow_mut()));
        index.clear();
        let hasher = foldhash::fast::RandomState::default();
        index.reserve(tokens, |_| 0); // empty: nothing to rehash
        Replay {
            order: Vec::with_capacity(tokens),
            index,
            hasher,
            tokens: 0,
        }
    }

    fn apply(&mut self, op: Op, member: Cow<'_, [u8]>) {
        self.tokens += 1;
        let Replay {
            order,
            index,
            hasher,
            ..
        } = self;
        let hash = hasher.hash_one(member.as_ref());
        let same = |&i: &u32| order[i as usize].as_deref() == Some(member.as_ref());
        match op {
            Op::Add => {
                let rehash =
                    |&j: &u32| hasher.hash_one(order[j as usize].as_deref().unwrap_or_default());
                // u32 indices keep the table small enough for the cache; a
                // log has far fewer than 2^32 tokens (an item is at most
                // 1 GiB and a token at least 2 bytes).
                let next = u32::try_from(order.len()).unwrap_or(u32::MAX);
                if let hashbrown::hash_table::Entry::Vacant(slot) = index.entry(hash, same, rehash)
                {
                    slot.insert(next);
                    order.push(Some(member.into_owned()));
                }
            }
            Op::Remove => {
                if let Ok(entry) = index.find_entry(hash, same) {
                    let (i, _) = entry.remove();
                    order[i as usize] = None;
                }
            }
        }
    }

    fn skip(&mut self) {
        self.tokens += 1;
    }

    fn finish(mut self) -> Decoded {
        if self.index.capacity() <= KEPT_TABLE_SLOTS {
            let index = std::mem::take(&mut self.index);
            TABLE.with(|t| *t.borrow_mut() = index);
        }
        // filter_map (unlike flatten) collects in place: no second buffer.
        #[allow(clippy::filter_map_identity)]
        let members: Vec<Vec<u8>> = self.order.into_iter().filter_map(|m| m).collect();
        Decoded {
            dirtiness: self.tokens - members.len(),
            members,
        }
    }
}

/// The text codec (see the docs of `codec.rs`).
pub mod text {
    use std::borrow::Cow;

    use super::{Decoded, Op, Replay};

    fn needs_escape(b: u8) -> bool {
        b <= 0x20 || b == 0x7f || b == b'%'
    }

    const HEX: &[u8; 16] = b"0123456789ABCDEF";

    /// Append one token for `member` to `out`.
    pub fn encode_member(op: Op, member: &[u8], out: &mut Vec<u8>) {
        out.push(op.byte());
        for &b in member {
            if needs_escape(b) {
                out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            } else {
                out.push(b);
            }
        }
        out.push(b' ');
    }

    /// Encode `members` with `op`: `+a +b ` for adds.
    pub fn encode<M: AsRef<[u8]>>(op: Op, members: &[M]) -> Vec<u8> {
        let mut out = Vec::with_capacity(members.iter().map(|m| m.as_ref().len() + 2).sum());
        for m in members {
            encode_member(op, m.as_ref(), &mut out);
        }
        out
    }

    /// Encode a whole set as its compacted log (adds only).
    // Only the fuzz harness calls it (through the `fuzzing` feature).
    #[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
    pub fn encode_set<M: AsRef<[u8]>>(members: &[M]) -> Vec<u8> {
        encode(Op::Add, members)
    }

    fn hex(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    }

    /// Undo the escaping of one token's member.
    pub fn unescape(token: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(token.len());
        let mut i = 0;
        while i < token.len() {
            let b = token[i];
            if b == b'%'
                && let (Some(h), Some(l)) = (
                    token.get(i + 1).copied().and_then(hex),
                    token.get(i + 2).copied().and_then(hex),
                )
            {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
            out.push(b);
            i += 1;
        }
        out
    }

    /// Whether `b` separates tokens: ASCII whitespace or 0x0b.
    fn is_separator(b: u8) -> bool {
        b <= b' ' && (b == b' ' || (0x09..=0x0d).contains(&b))
    }

    /// Whether `member` is in the set the log `bytes` decodes to, without
    /// decoding it: the last `+` or `-` token of `member` decides. A scan
    /// that compares bytes, a microsecond or two for a 4 KiB bucket where a
    /// full decode builds a hash table.
    pub fn contains(bytes: &[u8], member: &[u8]) -> bool {
        let mut present = false;
        for_each_token(bytes, |token, escaped| {
            let op = token[0];
            if op != b'+' && op != b'-' {
                return;
            }
            let same = if escaped {
                unescape(&token[1..]) == member
            } else {
                &token[1..] == member
            };
            if same {
                present = op == b'+';
            }
        });
        present
    }

    /// Call `f(token, escaped)` for each whitespace-separated token of
    /// `bytes` (never empty), `escaped` when it holds a `%`.
    #[inline]
    fn for_each_token(bytes: &[u8], mut f: impl FnMut(&[u8], bool)) {
        let mut i = 0;
        while i < bytes.len() {
            if is_separator(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            let mut escaped = false;
            while i < bytes.len() && !is_separator(bytes[i]) {
                escaped |= bytes[i] == b'%';
                i += 1;
            }
            f(&bytes[start..i], escaped);
        }
    }

    /// Decode a log. Never fails: unknown tokens are skipped and counted as
    /// dirt.
    pub fn decode(bytes: &[u8]) -> Decoded {
        // Every token the encoder writes ends with a space.
        let mut replay = Replay::with_capacity(bytes.iter().filter(|&&b| b == b' ').count());
        for_each_token(bytes, |token, escaped| {
            let member = || {
                if escaped {
                    Cow::Owned(unescape(&token[1..]))
                } else {
                    Cow::Borrowed(&token[1..])
                }
            };
            match token[0] {
                b'+' => replay.apply(Op::Add, member()),
                b'-' => replay.apply(Op::Remove, member()),
                _ => replay.skip(),
            }
        });
        replay.finish()
    }
}

/// The length-prefixed binary codec (see the docs of `codec.rs`).
pub mod binary {
    use super::{Decoded, Op, Replay};

    /// Why a binary log could not be decoded.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct DecodeError {
        /// Byte offset of the bad token.
        pub offset: usize,
        /// What was wrong.
        pub reason: &'static str,
    }

    impl std::fmt::Display for DecodeError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{} at byte {}", self.reason, self.offset)
        }
    }

    impl std::error::Error for DecodeError {}

    /// Append one token for `member` to `out`.
    pub fn encode_member(op: Op, member: &[u8], out: &mut Vec<u8>) {
        out.push(op.byte());
        let mut n = member.len() as u64;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(member);
    }

    /// Encode `members` with `op`.
    pub fn encode<M: AsRef<[u8]>>(op: Op, members: &[M]) -> Vec<u8> {
        let mut out = Vec::with_capacity(members.iter().map(|m| m.as_ref().len() + 3).sum());
        for m in members {
            encode_member(op, m.as_ref(), &mut out);
        }
        out
    }

    /// Whether `member` is in the set the log `bytes` decodes to, without
    /// decoding it (see [`text::contains`](super::text::contains)); a
    /// malformed log is an error, as for [`decode`].
    pub fn contains(bytes: &[u8], member: &[u8]) -> Result<bool, DecodeError> {
        let mut present = false;
        let mut i = 0;
        while i < bytes.len() {
            let (op, range) = token(bytes, i)?;
            if &bytes[range.clone()] == member {
                present = op == Op::Add;
            }
            i = range.end;
        }
        Ok(present)
    }

    /// The token starting at `start`: its op and its member's byte range.
    fn token(bytes: &[u8], start: usize) -> Result<(Op, std::ops::Range<usize>), DecodeError> {
        let op = match bytes[start] {
            b'+' => Op::Add,
            b'-' => Op::Remove,
            _ => {
                return Err(DecodeError {
                    offset: start,
                    reason: "a token must start with '+' or '-'",
                });
            }
        };
        let mut i = start + 1;
        let mut len: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(&b) = bytes.get(i) else {
                return Err(DecodeError {
                    offset: start,
                    reason: "truncated length",
                });
            };
            i += 1;
            if shift > 56 {
                return Err(DecodeError {
                    offset: start,
                    reason: "length varint too long",
                });
            }
            len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| i.checked_add(len))
            .filter(|&end| end <= bytes.len())
            .ok_or(DecodeError {
                offset: start,
                reason: "member runs past the end of the log",
            })?;
        Ok((op, i..end))
    }

    /// Decode a log; any malformed or truncated token is an error.
    pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let mut replay = Replay::with_capacity(bytes.len() / 16);
        let mut i = 0;
        while i < bytes.len() {
            let (op, range) = token(bytes, i)?;
            i = range.end;
            replay.apply(op, std::borrow::Cow::Borrowed(&bytes[range]));
        }
        Ok(replay.finish())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Codec;

    #[test]
    fn module_example() {
        let log = [
            text::encode(Op::Add, &["a", "b"]),
            text::encode(Op::Remove, &["a"]),
        ]
        .concat();
        assert_eq!(log, b"+a +b -a ");
        let decoded = text::decode(&log);
        assert_eq!(decoded.members, vec![b"b".to_vec()]);
        assert_eq!(decoded.dirtiness, 2);
    }

    #[test]
    fn seed_examples_byte_for_byte() {
        // encodeSet(['a', 'b', 'c']) == '+a +b +c '
        assert_eq!(text::encode(Op::Add, &["a", "b", "c"]), b"+a +b +c ");
        // decodeSet('+a +b +c -b -x') == (2, set(['a', 'c'])); mcds also
        // counts the dead '+b' as dirt: 3.
        let d = text::decode(b"+a +b +c -b -x");
        assert_eq!(d.members, vec![b"a".to_vec(), b"c".to_vec()]);
        assert_eq!(d.dirtiness, 3);
        assert_eq!(text::decode(b"+a +b -a ").members, vec![b"b".to_vec()]);
    }

    #[test]
    fn escaping_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let members = [
            all.clone(),
            b"a b".to_vec(),
            b"%".to_vec(),
            b"%41".to_vec(),
            Vec::new(),
        ];
        let log = text::encode(Op::Add, &members);
        assert!(!log[..log.len() - 1].contains(&b'\n'));
        assert_eq!(text::decode(&log).members, members.to_vec());
        assert_eq!(text::encode(Op::Add, &["a b%"]), b"+a%20b%25 ");
        // A '%' written by the Python seed reads literally.
        assert_eq!(
            text::decode(b"+50% +x%4 ").members,
            vec![b"50%".to_vec(), b"x%4".to_vec()]
        );
    }

    #[test]
    fn order_and_dirtiness() {
        let d = text::decode(b"+a +b +a -a +c +a -zz junk ");
        assert_eq!(d.members, vec![b"b".to_vec(), b"c".to_vec(), b"a".to_vec()]);
        assert_eq!(d.dirtiness, 8 - 3);
    }

    #[test]
    fn binary_round_trip_and_errors() {
        let members = [vec![0u8; 300], b" \r\n".to_vec(), Vec::new()];
        let mut log = binary::encode(Op::Add, &members);
        log.extend(binary::encode(Op::Remove, &[b" \r\n"]));
        let d = binary::decode(&log).unwrap();
        assert_eq!(d.members, vec![vec![0u8; 300], Vec::new()]);
        assert_eq!(d.dirtiness, 2);
        assert!(binary::decode(&log[..log.len() - 1]).is_err());
        assert!(binary::decode(b"x").is_err());
        assert!(binary::decode(b"+\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01").is_err());
    }

    /// A naive model: a Vec of members in first-insertion order.
    fn model(ops: &[(bool, Vec<u8>)]) -> Vec<Vec<u8>> {
        let mut members: Vec<Vec<u8>> = Vec::new();
        for (add, m) in ops {
            let pos = members.iter().position(|x| x == m);
            match (add, pos) {
                (true, None) => members.push(m.clone()),
                (false, Some(i)) => {
                    members.remove(i);
                }
                _ => {}
            }
        }
        members
    }

    fn log(ops: &[(bool, Vec<u8>)], codec: Codec) -> Vec<u8> {
        let mut out = Vec::new();
        for (add, m) in ops {
            let op = if *add { Op::Add } else { Op::Remove };
            match codec {
                Codec::Text => text::encode_member(op, m, &mut out),
                Codec::Binary => binary::encode_member(op, m, &mut out),
            }
        }
        out
    }

    proptest! {
        #![proptest_config(mcds_testkit::seed::proptest_config(file!(), 256))]
        #[test]
        fn codecs_match_a_naive_model(ops in prop::collection::vec((any::<bool>(), prop::collection::vec(prop_oneof![Just(b'a'), Just(b' '), Just(b'%'), any::<u8>()], 0..6)), 0..60)) {
            let want = model(&ops);
            let t = text::decode(&log(&ops, Codec::Text));
            prop_assert_eq!(&t.members, &want);
            prop_assert_eq!(t.dirtiness, ops.len() - want.len());
            let b = binary::decode(&log(&ops, Codec::Binary)).unwrap();
            prop_assert_eq!(&b.members, &want);
        }
    }
}
