//! How a pipelined batch is cut so that ops on one key still apply in
//! order when some of them may be finished after the batch.

use std::collections::HashSet;
use std::ops::Range;

use mcds_core::Op;

/// The segments of `ops`, in order, each sent as one pipelined round: a
/// new segment starts where a key comes again after an op on it that
/// `may_finish_late` (an append that answered "not stored" is finished by
/// a probe after its batch, so a later op on its key must wait for it).
pub fn segments(ops: &[Op<'_>], may_finish_late: impl Fn(&Op<'_>) -> bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut late: HashSet<&[u8]> = HashSet::new();
    for (i, op) in ops.iter().enumerate() {
        let key = op.key().as_bytes();
        if late.contains(key) {
            out.push(start..i);
            start = i;
            late.clear();
        }
        if may_finish_late(op) {
            late.insert(key);
        }
    }
    out.push(start..ops.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcds_core::{Key, Ttl};

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn a_key_after_a_late_op_starts_a_segment() {
        let (a, b) = (Key::new("a").unwrap(), Key::new("b").unwrap());
        let ops = [
            Op::Append {
                key: &a,
                value: b"x",
            },
            Op::Get(&b),
            Op::Get(&a),
            Op::Set {
                key: &b,
                value: b"y",
                ttl: Ttl::Never,
            },
            Op::Get(&b),
        ];
        let late = |op: &Op<'_>| matches!(op, Op::Append { .. });
        assert_eq!(segments(&ops, late), [0..2, 2..5]);
        assert_eq!(segments(&ops, |_| false), [0..5]);
        assert_eq!(segments(&ops, |_| true), [0..2, 2..4, 4..5]);
        assert_eq!(segments(&[], late), [0..0]);
    }
}
