//! Differential testing: the same random op sequence on two stores must give
//! the same results (CAS ids compared by whether they match, not by value).

use mcds_core::{CasOutcome, DeleteOutcome, Error, Item, Key, Store, Stored, Ttl};
use proptest::prelude::*;

/// One operation on one of [`KEYS`] keys (the `usize` is the key's index).
#[derive(Clone, Debug)]
pub enum Op {
    /// `get`.
    Get(usize),
    /// `get_multi` of these keys, duplicates allowed.
    GetMulti(Vec<usize>),
    /// `set` this value.
    Set(usize, Vec<u8>),
    /// `add` this value.
    Add(usize, Vec<u8>),
    /// `replace` with this value.
    Replace(usize, Vec<u8>),
    /// `cas` with the id from a fresh read (`true`) or a stale id.
    Cas(usize, Vec<u8>, bool),
    /// `append` this value.
    Append(usize, Vec<u8>),
    /// `prepend` this value.
    Prepend(usize, Vec<u8>),
    /// `append_or_add` this value.
    AppendOrAdd(usize, Vec<u8>),
    /// `incr` by this delta.
    Incr(usize, u64),
    /// `decr` by this delta.
    Decr(usize, u64),
    /// `incr_or_init` with this delta and initial value.
    IncrOrInit(usize, u64, u64),
    /// `delete`.
    Delete(usize),
    /// `delete_cas` with the id from a fresh read (`true`) or a stale id.
    DeleteCas(usize, bool),
    /// `touch` to one hour.
    Touch(usize),
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

/// A strategy for one op.
pub fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS;
    prop_oneof![
        key.clone().prop_map(Op::Get),
        prop::collection::vec(0..KEYS, 0..6).prop_map(Op::GetMulti),
        (key.clone(), value()).prop_map(|(k, v)| Op::Set(k, v)),
        (key.clone(), value()).prop_map(|(k, v)| Op::Add(k, v)),
        (key.clone(), value()).prop_map(|(k, v)| Op::Replace(k, v)),
        (key.clone(), value(), any::<bool>()).prop_map(|(k, v, c)| Op::Cas(k, v, c)),
        (key.clone(), value()).prop_map(|(k, v)| Op::Append(k, v)),
        (key.clone(), value()).prop_map(|(k, v)| Op::Prepend(k, v)),
        (key.clone(), value()).prop_map(|(k, v)| Op::AppendOrAdd(k, v)),
        (key.clone(), delta()).prop_map(|(k, d)| Op::Incr(k, d)),
        (key.clone(), delta()).prop_map(|(k, d)| Op::Decr(k, d)),
        (key.clone(), delta(), delta()).prop_map(|(k, d, i)| Op::IncrOrInit(k, d, i)),
        key.clone().prop_map(Op::Delete),
        (key.clone(), any::<bool>()).prop_map(|(k, c)| Op::DeleteCas(k, c)),
        key.prop_map(Op::Touch),
    ]
}

/// A result with CAS ids and error details removed, so two stores compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `get`: value and flags.
    Item(Option<(Vec<u8>, u32)>),
    /// `get_multi`: values and flags.
    Items(Vec<Option<(Vec<u8>, u32)>>),
    /// `set` succeeded (its CAS id is not compared).
    Cas(u64),
    /// `add`/`replace`: stored or not.
    Stored(bool),
    /// `cas`: "stored", "exists" or "not found".
    CasResult(&'static str),
    /// `append`/`prepend`/`delete`/`touch`.
    Bool(bool),
    /// Counter ops.
    Number(Option<u64>),
    /// `append_or_add`.
    Unit,
    /// `delete_cas`.
    Deleted(DeleteOutcome),
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

/// A CAS id no store hands out in a test.
const STALE_CAS: u64 = u64::MAX / 3;

/// Apply `op` to `store` with keys `keys`; the normalized outcome.
pub fn apply(store: &dyn Store, keys: &[Key], op: &Op) -> Outcome {
    let fresh_cas = |k: usize, fresh: bool| -> u64 {
        if !fresh {
            return STALE_CAS;
        }
        store
            .get(&keys[k])
            .ok()
            .flatten()
            .map_or(STALE_CAS, |i| i.cas)
    };
    let ttl = Ttl::Never;
    let r: Result<Outcome, Error> = match op {
        Op::Get(k) => store.get(&keys[*k]).map(|i| Outcome::Item(strip(i))),
        Op::GetMulti(ks) => {
            let list: Vec<Key> = ks.iter().map(|&k| keys[k].clone()).collect();
            store
                .get_multi(&list)
                .map(|v| Outcome::Items(v.into_iter().map(strip).collect()))
        }
        Op::Set(k, v) => store.set(&keys[*k], v, ttl).map(|_| Outcome::Cas(0)),
        Op::Add(k, v) => store
            .add(&keys[*k], v, ttl)
            .map(|s| Outcome::Stored(s != Stored::NotStored)),
        Op::Replace(k, v) => store
            .replace(&keys[*k], v, ttl)
            .map(|s| Outcome::Stored(s != Stored::NotStored)),
        Op::Cas(k, v, fresh) => {
            let cas = fresh_cas(*k, *fresh);
            store.cas(&keys[*k], v, ttl, cas).map(|c| {
                Outcome::CasResult(match c {
                    CasOutcome::Stored(_) => "stored",
                    CasOutcome::Exists => "exists",
                    CasOutcome::NotFound => "not found",
                })
            })
        }
        Op::Append(k, v) => store.append(&keys[*k], v).map(Outcome::Bool),
        Op::Prepend(k, v) => store.prepend(&keys[*k], v).map(Outcome::Bool),
        Op::AppendOrAdd(k, v) => store
            .append_or_add(&keys[*k], v, ttl)
            .map(|_| Outcome::Unit),
        Op::Incr(k, d) => store.incr(&keys[*k], *d).map(Outcome::Number),
        Op::Decr(k, d) => store.decr(&keys[*k], *d).map(Outcome::Number),
        Op::IncrOrInit(k, d, i) => store
            .incr_or_init(&keys[*k], *d, *i, ttl)
            .map(|n| Outcome::Number(Some(n))),
        Op::Delete(k) => store.delete(&keys[*k]).map(Outcome::Bool),
        Op::DeleteCas(k, fresh) => {
            let cas = fresh_cas(*k, *fresh);
            store.delete_cas(&keys[*k], cas).map(Outcome::Deleted)
        }
        Op::Touch(k) => store.touch(&keys[*k], Ttl::secs(3600)).map(Outcome::Bool),
    };
    r.unwrap_or_else(|e| Outcome::Error(kind(&e)))
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
fn memcached_quirk(reference: &dyn Store, keys: &[Key], op: &Op) -> bool {
    let k = match op {
        Op::Incr(k, _) | Op::Decr(k, _) | Op::IncrOrInit(k, _, _) => *k,
        _ => return false,
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
pub fn compare(a: &dyn Store, b: &dyn Store, prefix: &str, ops: &[Op]) -> Result<usize, String> {
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
        if let Op::Incr(k, _) | Op::Decr(k, _) | Op::IncrOrInit(k, _, _) = op {
            align_padding(a, b, &keys[*k]).map_err(|e| format!("op #{i} {op:?}: {e}"))?;
        }
    }
    let all = Op::GetMulti((0..KEYS).collect());
    let (fa, fb) = (apply(a, &keys, &all), apply(b, &keys, &all));
    if fa != fb {
        return Err(format!("final state differs: {fa:?} vs {fb:?}"));
    }
    Ok(ops.len())
}
