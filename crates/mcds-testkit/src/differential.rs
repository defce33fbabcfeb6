//! Differential testing: the same random op sequence on two stores must give
//! the same results (CAS ids compared by whether they match, not by value).

use mcds_core::{CasOutcome, Error, Item, Key, Op, OpArgs, OpKind, Reply, Store, Stored, Ttl};
use proptest::prelude::*;

/// One step of a sequence: an op of any kind in the op table, or a
/// `get_multi` (a typed method that is a batch, not an op).
#[derive(Clone, Debug)]
pub enum Step {
    /// An op of this kind, its arguments taken from [`Args`] (see
    /// [`Op::build`]): every kind of the table is drawn, so a new op is
    /// compared without a change here.
    Op(OpKind, Args),
    /// `get_multi` of these keys, duplicates allowed.
    GetMulti(Vec<usize>),
}

/// The arguments of one [`Step::Op`], by field name (see [`Op::build`]).
#[derive(Clone, Debug)]
pub struct Args {
    /// The key's index in `0..KEYS`.
    pub key: usize,
    /// "value".
    pub value: Vec<u8>,
    /// "delta".
    pub delta: u64,
    /// "initial".
    pub initial: u64,
    /// "cas": the id of a fresh read of the key (`true`) or a stale id.
    pub fresh_cas: bool,
    /// "ttl": an hour (`true`) or none.
    pub ttl_hour: bool,
}

/// The number of distinct keys an op sequence uses.
pub const KEYS: usize = 4;

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            &b""[..],
            b"0",
            b"1",
            b"10",
            b"99",
            b"100",
            b"9 ",
            b" 7",
            b"+5",
            b"-0",
            b"-3",
            b"abc",
            b"12x",
            b"18446744073709551615",
            b"18446744073709551616",
            b"+a -b ",
        ])
        .prop_map(|v| v.to_vec()),
        prop::collection::vec(any::<u8>(), 0..20),
    ]
}

fn delta() -> impl Strategy<Value = u64> {
    prop_oneof![0..20u64, Just(u64::MAX), Just(u64::MAX - 1), any::<u64>()]
}

/// A strategy for one step: any kind of the op table, or a `get_multi`.
pub fn op() -> impl Strategy<Value = Step> {
    let args = (
        0..KEYS,
        value(),
        delta(),
        delta(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(key, value, delta, initial, fresh_cas, ttl_hour)| Args {
            key,
            value,
            delta,
            initial,
            fresh_cas,
            ttl_hour,
        });
    prop_oneof![
        14 => (prop::sample::select(OpKind::ALL), args).prop_map(|(k, a)| Step::Op(k, a)),
        1 => prop::collection::vec(0..KEYS, 0..6).prop_map(Step::GetMulti),
    ]
}

/// A result with CAS ids and error details removed, so two stores compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An op's reply, its CAS ids zeroed (they differ between stores).
    Reply(Reply),
    /// `get_multi`: values and flags.
    Items(Vec<Option<(Vec<u8>, u32)>>),
    /// An error, by kind.
    Error(&'static str),
}

fn kind(e: &Error) -> &'static str {
    match e {
        Error::NonNumeric { .. } => "NonNumeric",
        Error::ValueTooLarge { .. } => "ValueTooLarge",
        Error::InvalidKey { .. } => "InvalidKey",
        Error::Conflict { .. } => "Conflict",
        _ => "other",
    }
}

fn strip(item: Option<Item>) -> Option<(Vec<u8>, u32)> {
    item.map(|i| (i.value, i.flags))
}

/// `reply` without the CAS ids a store chose.
fn without_cas(reply: Reply) -> Reply {
    match reply {
        Reply::Item(item) => Reply::Item(item.map(|i| Item { cas: 0, ..i })),
        Reply::Cas(_) => Reply::Cas(0),
        Reply::CasOutcome(CasOutcome::Stored(_)) => Reply::CasOutcome(CasOutcome::Stored(0)),
        Reply::Stored(Stored::Stored(_)) => Reply::Stored(Stored::Stored(0)),
        other => other,
    }
}

/// A CAS id no store hands out in a test.
const STALE_CAS: u64 = u64::MAX / 3;

/// The arguments of a [`Step::Op`] on one store: the "cas" field reads
/// that store's own id of the key when the step asks for a fresh one.
struct StoreArgs<'a> {
    store: &'a dyn Store,
    key: &'a Key,
    args: &'a Args,
}

impl<'a> OpArgs<'a> for StoreArgs<'a> {
    fn key(&mut self, _field: &'static str) -> &'a Key {
        self.key
    }
    fn bytes(&mut self, _field: &'static str) -> &'a [u8] {
        &self.args.value
    }
    fn ttl(&mut self, _field: &'static str) -> Ttl {
        if self.args.ttl_hour {
            Ttl::secs(3600)
        } else {
            Ttl::Never
        }
    }
    fn number(&mut self, field: &'static str) -> u64 {
        match field {
            "cas" if self.args.fresh_cas => self
                .store
                .get(self.key)
                .ok()
                .flatten()
                .map_or(STALE_CAS, |i| i.cas),
            "cas" => STALE_CAS,
            "initial" => self.args.initial,
            _ => self.args.delta,
        }
    }
}

/// Apply `step` to `store` with keys `keys`; the normalized outcome. An
/// op goes through [`Store::execute`], which every typed method wraps.
pub fn apply(store: &dyn Store, keys: &[Key], step: &Step) -> Outcome {
    let r: Result<Outcome, Error> = match step {
        Step::Op(kind, args) => {
            let mut source = StoreArgs {
                store,
                key: &keys[args.key],
                args,
            };
            let op = Op::build(*kind, &mut source);
            store.execute(&op).map(|r| Outcome::Reply(without_cas(r)))
        }
        Step::GetMulti(ks) => {
            let list: Vec<Key> = ks.iter().map(|&k| keys[k].clone()).collect();
            store
                .get_multi(&list)
                .map(|v| Outcome::Items(v.into_iter().map(strip).collect()))
        }
    };
    r.unwrap_or_else(|e| Outcome::Error(kind(&e)))
}

/// The key of a counter op (one whose reply is a number), if `step` is one.
fn counter_key(step: &Step) -> Option<usize> {
    match step {
        Step::Op(OpKind::Incr | OpKind::Decr | OpKind::IncrOrInit, args) => Some(args.key),
        _ => None,
    }
}

/// Counter ops whose answer on a real memcached depends on stale memory, not
/// on the op sequence. They are skipped on both stores, so neither state
/// moves; every other op is compared exactly.
///
/// memcached (1.6.18, and later as far as we know) parses a counter with
/// `strtoull` on the item data, which is followed by `\r\n` but is not
/// NUL-terminated, so two kinds of value make it read past the item into
/// whatever the slab chunk held before:
///
/// * **All whitespace** (space, `\t`, `\n`, `\v`, `\f`, `\r`; at least one
///   byte). `strtoull` skips leading whitespace, including the item's own
///   `\r\n`, and reads on. A zeroed chunk (a fresh server) gives
///   NonNumeric; a chunk that once held an older item's digits gives a number
///   (seen: `decr` on `"\x0c"` answered 0, `incr_or_init` answered
///   46744073709551615). The conformance case `incr_whitespace_value` pins
///   the fresh-server answer, which the embedded store gives.
/// * **2^63 or more.** The value is checked for a '-' with `strchr`, which
///   runs past the data to the next NUL, so the answer is NonNumeric or not
///   depending on stale bytes. (The conformance suite covers wrapping on a
///   fresh server, whose memory is zeroed.)
fn memcached_quirk(reference: &dyn Store, keys: &[Key], step: &Step) -> bool {
    let Some(k) = counter_key(step) else {
        return false;
    };
    let Some(current) = reference.get(&keys[k]).ok().flatten() else {
        return false;
    };
    let whitespace = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let all_whitespace = !current.value.is_empty() && current.value.iter().all(whitespace);
    let at_least_2_63 =
        mcds_core::backend::parse_counter(&current.value).is_some_and(|n| n >= 1 << 63);
    all_whitespace || at_least_2_63
}

/// After a counter op on `key`: if the two stores hold the same number,
/// padded with spaces in one and not the other, write `b`'s bytes into `a`.
///
/// A `decr` (or a wrapping `incr`) that shortens a number writes it over
/// the old digits and pads it with spaces ("10" → "0 "), as memcached's
/// `do_add_delta` does in place, but memcached does that only while no one
/// else holds a reference to the item (`refcount == 2`); otherwise it links
/// a new item of the exact length ("0"). A read holds a reference for a
/// while: on a raw socket to memcached 1.6.18, `add`, `mg`, `cas`, `mg`
/// and a shortening `ma` in one write never padded (200 of 200), and the
/// same commands each awaited padded 300 of 300; this test, where each
/// `add` and `cas` is followed by an `mg` that reads the value, saw both
/// (for example after an async LRU bump, which also holds a reference).
/// The number is the same either way; only later bytes (an append after
/// it) would differ, so the states are aligned here and every op is
/// still compared exactly.
fn align_padding(a: &dyn Store, b: &dyn Store, key: &Key) -> Result<(), String> {
    let (Ok(Some(va)), Ok(Some(vb))) = (a.get(key), b.get(key)) else {
        return Ok(());
    };
    let digits = |v: &[u8]| {
        let n = v.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
        let d = &v[..n];
        (!d.is_empty() && d.iter().all(u8::is_ascii_digit)).then_some(d.to_vec())
    };
    if va.value != vb.value
        && let (Some(da), Some(db)) = (digits(&va.value), digits(&vb.value))
        && da == db
    {
        a.set(key, &vb.value, Ttl::secs(3600))
            .map_err(|e| format!("aligning the padding of {key}: {e}"))?;
    }
    Ok(())
}

/// Run `ops` on both stores (keys `<prefix>0..3`); `Err` describes the first
/// difference, including a final comparison of every key.
pub fn compare(a: &dyn Store, b: &dyn Store, prefix: &str, ops: &[Step]) -> Result<usize, String> {
    let keys: Vec<Key> = (0..KEYS)
        .map(|i| Key::new(format!("{prefix}{i}")).expect("valid key"))
        .collect();
    for (i, op) in ops.iter().enumerate() {
        if memcached_quirk(a, &keys, op) {
            continue;
        }
        let ra = apply(a, &keys, op);
        let rb = apply(b, &keys, op);
        if ra != rb {
            return Err(format!(
                "op #{i} {op:?}: {} gave {ra:?}, {} gave {rb:?}",
                a.backend_name(),
                b.backend_name()
            ));
        }
        if let Some(k) = counter_key(op) {
            align_padding(a, b, &keys[k]).map_err(|e| format!("op #{i} {op:?}: {e}"))?;
        }
    }
    let all = Step::GetMulti((0..KEYS).collect());
    let (fa, fb) = (apply(a, &keys, &all), apply(b, &keys, &all));
    if fa != fb {
        return Err(format!("final state differs: {fa:?} vs {fb:?}"));
    }
    Ok(ops.len())
}
