//! Fuzz harnesses. The targets in `fuzz/fuzz_targets/` are one-line calls to
//! these functions, and `tests/fuzz_regressions.rs` replays the seed corpus
//! and every input in `fuzz/regressions/` through them on stable Rust.
//!
//! Each harness checks two things on any input: decoding arbitrary bytes
//! never panics and gives sane output, and the same bytes read as a
//! *structured* input (a sequence of operations or events) round-trip:
//! `decode(encode(x)) == x`, compared against a naive model.

use mc_eventlog::frame;
use mc_set::codec::{Op, binary, text};

/// Read `data` as operations: a byte for the op (low bit: add/remove), a
/// byte for the member length (0–15), then the member.
fn ops(data: &[u8]) -> Vec<(Op, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < data.len() {
        let op = if data[i] & 1 == 0 {
            Op::Add
        } else {
            Op::Remove
        };
        let len = usize::from(data[i + 1] & 15);
        let end = (i + 2 + len).min(data.len());
        out.push((op, data[i + 2..end].to_vec()));
        i = end;
    }
    out
}

/// The naive model of a set log: members in first-insertion order.
fn model(ops: &[(Op, Vec<u8>)]) -> Vec<Vec<u8>> {
    let mut members: Vec<Vec<u8>> = Vec::new();
    for (op, m) in ops {
        let pos = members.iter().position(|x| x == m);
        match (op, pos) {
            (Op::Add, None) => members.push(m.clone()),
            (Op::Remove, Some(i)) => {
                members.remove(i);
            }
            _ => {}
        }
    }
    members
}

fn assert_unique(members: &[Vec<u8>]) {
    let mut sorted: Vec<&Vec<u8>> = members.iter().collect();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        members.len(),
        "decoded members must be unique"
    );
}

/// The text set codec.
pub fn set_text_codec(data: &[u8]) {
    // Arbitrary bytes: no panic, unique members, compaction is lossless.
    let decoded = text::decode(data);
    assert_unique(&decoded.members);
    let compacted = text::encode_set(&decoded.members);
    let again = text::decode(&compacted);
    assert_eq!(
        again.members, decoded.members,
        "compaction must not change the set"
    );
    assert_eq!(again.dirtiness, 0);
    // Structured: a log of operations decodes to the model.
    let ops = ops(data);
    let mut log = Vec::new();
    for (op, m) in &ops {
        text::encode_member(*op, m, &mut log);
    }
    let decoded = text::decode(&log);
    let want = model(&ops);
    assert_eq!(decoded.dirtiness, ops.len() - want.len());
    assert_eq!(decoded.members, want);
}

/// The binary set codec.
pub fn set_binary_codec(data: &[u8]) {
    if let Ok(decoded) = binary::decode(data) {
        assert_unique(&decoded.members);
        let compacted = binary::encode(Op::Add, &decoded.members);
        assert_eq!(
            binary::decode(&compacted).ok().map(|d| d.members),
            Some(decoded.members)
        );
    }
    let ops = ops(data);
    let mut log = Vec::new();
    for (op, m) in &ops {
        binary::encode_member(*op, m, &mut log);
    }
    let decoded = binary::decode(&log).expect("a log we encoded decodes");
    assert_eq!(decoded.members, model(&ops));
    // Any strict prefix that cuts a token is an error, never a panic.
    if let Some(cut) = log.len().checked_sub(1) {
        let _ = binary::decode(&log[..cut]);
    }
}

/// The event frame codec.
pub fn event_frames(data: &[u8]) {
    // Arbitrary bytes: no panic; everything is an event or counted damage.
    let decoded = frame::decode(data);
    let used: usize = decoded
        .events
        .iter()
        .map(|e| frame::frame_len(e.payload.len()))
        .sum();
    assert_eq!(used + decoded.damaged_bytes, data.len());
    // Structured: events (8-byte timestamp, length byte, payload).
    let mut events = Vec::new();
    let mut i = 0;
    while i + 9 <= data.len() {
        let at_ms = u64::from_le_bytes(data[i..i + 8].try_into().unwrap_or_default());
        let len = usize::from(data[i + 8]);
        let end = (i + 9 + len).min(data.len());
        events.push(frame::Event {
            at_ms,
            payload: data[i + 9..end].to_vec(),
        });
        i = end;
    }
    let mut log = Vec::new();
    for e in &events {
        frame::encode(e.at_ms, &e.payload, &mut log);
    }
    let decoded = frame::decode(&log);
    assert_eq!(decoded.damaged_bytes, 0);
    assert_eq!(decoded.events, events);
    // A torn tail loses only the torn frame. (Its bytes are resynchronised
    // over; a payload that itself contains an intact frame would surface as
    // that frame, which is by design.)
    if !events.is_empty() {
        let torn = frame::decode(&log[..log.len() - 1]);
        assert!(torn.events.starts_with(&events[..events.len() - 1]));
        assert!(torn.damaged_bytes > 0);
    }
}

/// Elements from fuzz bytes: a length byte (0–15), then that many bytes.
fn elements(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let len = usize::from(data[i] & 15);
        let end = (i + 1 + len).min(data.len());
        out.push(&data[i + 1..end]);
        i = end;
    }
    out
}

/// The HyperLogLog register codec: arbitrary bytes decode or are refused
/// without panicking, and what decodes re-encodes to the same bytes; the
/// same bytes read as elements build registers that round-trip, ignore a
/// second insertion, and merge commutatively.
pub fn hll_registers(data: &[u8]) {
    use mc_sketch::hll::{ENCODED_LEN, MAX_RANK, REGISTERS, Registers};
    if let Ok(r) = Registers::decode(data) {
        assert_eq!(data.len(), ENCODED_LEN);
        assert_eq!(r.encode(), data, "decode/encode must round-trip");
        assert!((0..REGISTERS).all(|i| r.get(i) <= MAX_RANK));
        let _ = r.count();
    }
    // The same bytes padded into a register image: decodes only if every
    // register is a valid rank.
    let mut image = mc_sketch::hll::MAGIC.to_vec();
    image.extend(data.iter().copied().cycle().take(ENCODED_LEN - 4));
    if let Ok(r) = Registers::decode(&image) {
        assert_eq!(r.encode(), image);
    }
    let items = elements(data);
    let (half_a, half_b) = items.split_at(items.len() / 2);
    let mut a = Registers::new();
    for e in half_a {
        a.insert(e);
    }
    let mut b = Registers::new();
    for e in half_b {
        b.insert(e);
    }
    assert_eq!(Registers::decode(&a.encode()).as_ref(), Ok(&a));
    for e in half_a {
        assert!(!a.insert(e), "a second insertion changes nothing");
    }
    let mut ab = a.clone();
    ab.merge(&b);
    let mut ba = b.clone();
    ba.merge(&a);
    assert_eq!(ab, ba, "merge commutes");
    if items.is_empty() {
        assert_eq!(ab.count(), 0);
    }
}

/// The Bloom filter's block format and hashing: a shape taken from the
/// first bytes checks arbitrary blocks without panicking, locates every
/// element inside its block, and a block built from the elements contains
/// each of them (no false negatives).
pub fn bloom_blocks(data: &[u8]) {
    use mc_sketch::bloom::{HEADER_LEN, Shape};
    let [k, blocks, bits, rest @ ..] = data else {
        return;
    };
    let shape = Shape {
        k: k % 30 + 1,
        blocks: u32::from(blocks % 4) + 1,
        block_bits: (u64::from(*bits) % 64 + 1) * 64,
    };
    let _ = shape.check_block(rest);
    let mut blocks: Vec<Vec<u8>> = (0..shape.blocks).map(|_| shape.empty_block()).collect();
    for b in &blocks {
        assert_eq!(shape.check_block(b), Ok(()));
    }
    let items = elements(rest);
    for e in &items {
        let (block, positions) = shape.locate(e);
        assert!(block < shape.blocks as usize);
        for p in positions {
            assert!(p < shape.block_bits);
            blocks[block][HEADER_LEN + (p / 8) as usize] |= 1 << (p % 8);
        }
    }
    for e in &items {
        let (block, mut positions) = shape.locate(e);
        let bits = &blocks[block][HEADER_LEN..];
        assert!(positions.all(|p| bits[(p / 8) as usize] & (1 << (p % 8)) != 0));
    }
}

/// The activity bitmap's bit layout: counting any range of arbitrary bytes
/// agrees with a bit-by-bit count.
pub fn bitmap_bits(data: &[u8]) {
    use mc_sketch::bitmap::{bit, count_range};
    let [a, b, bytes @ ..] = data else {
        return;
    };
    let len_bits = bytes.len() as u64 * 8 + 16;
    let (x, y) = (u64::from(*a) * 7 % len_bits, u64::from(*b) * 13 % len_bits);
    let (first, last) = (x.min(y), x.max(y));
    let naive = (first..=last).filter(|&i| bit(bytes, i)).count() as u64;
    assert_eq!(count_range(bytes, first, last), naive);
}
