//! The sketches' stored forms (`mcds-sketch`): targets `hll_registers`,
//! `bloom_blocks`, `bitmap_bits` and `topk_board`.

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
/// second insertion, and merge commutatively. Then the stored segment
/// items (`hll_segment`).
pub fn hll_registers(data: &[u8]) {
    use mcds_sketch::fuzzing::hll::{ENCODED_LEN, MAX_RANK};
    use mcds_sketch::hll::{REGISTERS, Registers};
    if let Ok(r) = Registers::decode(data) {
        assert_eq!(data.len(), ENCODED_LEN);
        assert_eq!(r.encode(), data, "decode/encode must round-trip");
        assert!((0..REGISTERS).all(|i| r.get(i) <= MAX_RANK));
        let _ = r.count();
    }
    // The same bytes padded into a register image: decodes only if every
    // register is a valid rank.
    let mut image = mcds_sketch::hll::MAGIC.to_vec();
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
    hll_segment(data);
}

/// The HyperLogLog segment item (base and log): arbitrary bytes decode or
/// are refused without panicking; what decodes has valid ranks, and its
/// compacted form decodes to the same registers with an empty log; the
/// bytes with a record appended decode to the registers raised by it.
fn hll_segment(data: &[u8]) {
    use mcds_sketch::fuzzing::hll::{MAX_RANK, decode_segment, encode_segment};
    use mcds_sketch::hll::{SEGMENT_MAGIC, SEGMENT_REGISTERS};
    // As given, and behind the magic (so the forms themselves are reached).
    let mut framed = SEGMENT_MAGIC.to_vec();
    framed.extend_from_slice(data);
    for bytes in [data, &framed] {
        let Ok((registers, log)) = decode_segment(bytes) else {
            continue;
        };
        assert_eq!(registers.len(), SEGMENT_REGISTERS);
        assert!(registers.iter().all(|&r| r <= MAX_RANK));
        assert!(2 * log <= bytes.len());
        let compact = encode_segment(&registers);
        assert_eq!(decode_segment(&compact), Ok((registers.clone(), 0)));
        // An appended record raises exactly its register.
        let (local, rank) = (
            usize::from(data.len() as u16 % 1024),
            data.len() as u8 % MAX_RANK + 1,
        );
        let mut appended = compact;
        appended.extend_from_slice(&(((local as u16) << 6) | u16::from(rank)).to_le_bytes());
        let mut expected = registers;
        expected[local] = expected[local].max(rank);
        assert_eq!(decode_segment(&appended), Ok((expected, 1)));
    }
}

/// The Bloom filter's block format and hashing: a shape taken from the
/// first bytes checks arbitrary blocks without panicking, locates every
/// element inside its block, and a block built from the elements contains
/// each of them (no false negatives).
pub fn bloom_blocks(data: &[u8]) {
    use mcds_sketch::bloom::Shape;
    use mcds_sketch::fuzzing::bloom::HEADER_LEN;
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
    use mcds_sketch::bitmap::bit;
    use mcds_sketch::fuzzing::bitmap::count_range;
    let [a, b, bytes @ ..] = data else {
        return;
    };
    let len_bits = bytes.len() as u64 * 8 + 16;
    let (x, y) = (u64::from(*a) * 7 % len_bits, u64::from(*b) * 13 % len_bits);
    let (first, last) = (x.min(y), x.max(y));
    let naive = (first..=last).filter(|&i| bit(bytes, i)).count() as u64;
    assert_eq!(count_range(bytes, first, last), naive);
}

/// The leaderboard's stored board (`mcds_sketch::topk::SpaceSaving`):
/// arbitrary bytes decode or are refused without panicking, and what
/// decodes re-encodes to the same bytes with counts summing to its total.
/// The same bytes read as a capacity and increments build a board that
/// keeps Space-Saving's guarantees against the exact counts, round-trips,
/// and is refused when truncated or with a bit flipped.
pub fn topk_board(data: &[u8]) {
    use mcds_sketch::topk::SpaceSaving;
    if let Ok(board) = SpaceSaving::decode(data) {
        assert_eq!(board.encode(), data, "decode/encode must round-trip");
        let all = board.top(board.len());
        assert_eq!(all.len(), board.len());
        assert_eq!(all.iter().map(|e| e.count).sum::<u64>(), board.total());
        assert!(all.iter().all(|e| e.error <= e.count));
    }
    let [capacity, rest @ ..] = data else {
        return;
    };
    let mut board = SpaceSaving::new(u32::from(capacity % 8) + 1);
    let mut truth: std::collections::HashMap<&[u8], u64> = std::collections::HashMap::new();
    for member in elements(rest) {
        let by = u64::from(member.first().copied().unwrap_or(0)) + 1;
        let count = board
            .insert(member, by)
            .expect("a short member, a small total");
        *truth.entry(member).or_default() += by;
        assert!(count >= truth[member]);
    }
    let total: u64 = truth.values().sum();
    assert_eq!(board.total(), total);
    let bound = total / u64::from(board.capacity());
    assert!(board.max_error() <= bound);
    for (member, &t) in &truth {
        match board.get(member) {
            Some(e) => {
                assert!(e.lower_bound() <= t && t <= e.count);
                assert!(e.error <= bound);
                assert!(!board.is_exact() || e.count == t);
            }
            None => assert!(t <= board.max_error() && !board.is_exact()),
        }
    }
    let encoded = board.encode();
    assert_eq!(SpaceSaving::decode(&encoded).as_ref(), Ok(&board));
    assert!(SpaceSaving::decode(&encoded[..encoded.len() - 1]).is_err());
    let mut flipped = encoded.clone();
    flipped[data.len() % encoded.len()] ^= 1 << (data.len() % 8);
    assert!(SpaceSaving::decode(&flipped).is_err(), "a flipped bit");
}
