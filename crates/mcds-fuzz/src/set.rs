//! The set codecs (`mcds-set`): targets `set_text` and `set_binary`.

use mcds_set::fuzzing::{Op, binary, text};

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
