//! The backend conformance suite: the same cases for every [`Store`].
//!
//! Each case is a function taking an [`Env`]; [`conformance_suite!`]
//! expands them into one `#[test]` each for a given store, so a test binary
//! per backend reports its own count. A backend agrees with memcached when it
//! passes every case.
//!
//! [`conformance_suite!`]: crate::conformance_suite

use std::sync::Arc;
use std::time::Duration;

use mc_core::{
    CasOutcome, Clock, DeleteOutcome, Error, Key, ManualClock, MemoryStore, Op, Reply, Store,
    Stored, Ttl, Updated, item_size, traffic,
};
use mc_memcached::MemcachedStore;

use crate::server::{MemcachedServer, ServerOptions, ServerPool};

/// A store under test, plus how to let time pass for it.
pub struct Env {
    /// The store.
    pub store: Arc<dyn Store>,
    /// Which backend ("memory", "memcached", "pool3").
    pub name: &'static str,
    clock: Option<ManualClock>,
    /// Servers kept alive for the store.
    pub servers: Vec<MemcachedServer>,
}

impl Env {
    /// The embedded store with a manual clock.
    pub fn memory() -> Env {
        let clock = ManualClock::new(1_800_000_000_000);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build();
        Env {
            store: Arc::new(store),
            name: "memory",
            clock: Some(clock),
            servers: Vec::new(),
        }
    }

    /// One fresh memcached server.
    pub fn memcached() -> Env {
        let server = MemcachedServer::start(ServerOptions::default());
        let store = MemcachedStore::connect(&server.addr()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "memcached",
            clock: None,
            servers: vec![server],
        }
    }

    /// A pool of three fresh memcached servers.
    pub fn pool3() -> Env {
        let pool = ServerPool::start(3, ServerOptions::default());
        let store = MemcachedStore::connect(&pool.servers_arg()).expect("connect");
        Env {
            store: Arc::new(store),
            name: "pool3",
            clock: None,
            servers: pool.servers,
        }
    }

    /// Let `d` pass: advance the manual clock, or sleep for real servers.
    pub fn advance(&self, d: Duration) {
        match &self.clock {
            Some(clock) => clock.advance(d),
            None => std::thread::sleep(d),
        }
    }

    /// The store as a trait object.
    pub fn s(&self) -> &dyn Store {
        self.store.as_ref()
    }
}

fn k(name: &str) -> Key {
    Key::new(format!("conf:{name}")).expect("valid test key")
}

/// The largest value that fits under `key` with the default 1 MiB limit.
fn max_value_len(key: &Key) -> usize {
    mc_core::DEFAULT_ITEM_SIZE_LIMIT - item_size(key.len(), 0)
}

fn value(env: &Env, key: &Key) -> Option<Vec<u8>> {
    env.s().get(key).expect("get").map(|i| i.value)
}

fn assert_too_large<T: std::fmt::Debug>(r: mc_core::Result<T>) {
    match r {
        Err(Error::ValueTooLarge { .. }) => {}
        other => panic!("expected ValueTooLarge, got {other:?}"),
    }
}

fn assert_non_numeric<T: std::fmt::Debug>(r: mc_core::Result<T>) {
    match r {
        Err(Error::NonNumeric { .. }) => {}
        other => panic!("expected NonNumeric, got {other:?}"),
    }
}

// ---- get / set ----

/// A missing key reads as `None`.
pub fn get_miss(env: &Env) {
    assert_eq!(env.s().get(&k("nothing")).unwrap(), None);
}

/// set then get returns the value, flags 0 and the CAS set returned.
pub fn set_then_get(env: &Env) {
    let key = k("a");
    let cas = env.s().set(&key, b"hello", Ttl::Never).unwrap();
    let item = env.s().get(&key).unwrap().unwrap();
    assert_eq!(item.value, b"hello");
    assert_eq!(item.flags, 0);
    assert_eq!(item.cas, cas);
    assert_ne!(cas, 0);
}

/// set overwrites and changes the CAS.
pub fn set_overwrites(env: &Env) {
    let key = k("a");
    let c1 = env.s().set(&key, b"one", Ttl::Never).unwrap();
    let c2 = env.s().set(&key, b"two", Ttl::secs(100)).unwrap();
    assert_ne!(c1, c2);
    assert_eq!(value(env, &key).unwrap(), b"two");
}

/// A zero-length value is a hit with an empty value, not a miss.
pub fn empty_value(env: &Env) {
    let key = k("empty");
    env.s().set(&key, b"", Ttl::Never).unwrap();
    assert_eq!(value(env, &key), Some(Vec::new()));
}

/// Every byte value survives, including CR, LF and NUL.
pub fn binary_value(env: &Env) {
    let key = k("bin");
    let v: Vec<u8> = (0..=255u8).chain(*b"\r\nEND\r\n").collect();
    env.s().set(&key, &v, Ttl::Never).unwrap();
    assert_eq!(value(env, &key).unwrap(), v);
}

/// UTF-8 keys and 250-byte keys work.
pub fn unusual_keys(env: &Env) {
    for key in [
        Key::new("ключ:キー:키").unwrap(),
        Key::new([b'x'; 250]).unwrap(),
        Key::new("~!@#$%^&*()_+{}|:\"<>?").unwrap(),
    ] {
        env.s().set(&key, b"v", Ttl::Never).unwrap();
        assert_eq!(value(env, &key).unwrap(), b"v", "{key:?}");
    }
}

/// get_multi: hits and misses in input order, duplicates answered twice.
pub fn get_multi_mixed(env: &Env) {
    env.s().set(&k("m1"), b"1", Ttl::Never).unwrap();
    env.s().set(&k("m3"), b"3", Ttl::Never).unwrap();
    let keys = [k("m1"), k("m2"), k("m3"), k("m1")];
    let got: Vec<Option<Vec<u8>>> = env
        .s()
        .get_multi(&keys)
        .unwrap()
        .into_iter()
        .map(|i| i.map(|i| i.value))
        .collect();
    assert_eq!(
        got,
        vec![
            Some(b"1".to_vec()),
            None,
            Some(b"3".to_vec()),
            Some(b"1".to_vec())
        ]
    );
}

/// get_multi of nothing is nothing.
pub fn get_multi_empty(env: &Env) {
    assert!(env.s().get_multi(&[]).unwrap().is_empty());
}

/// get_multi over 200 keys (spread over every server of a pool) agrees with get.
pub fn get_multi_many(env: &Env) {
    let keys: Vec<Key> = (0..200).map(|i| k(&format!("many{i}"))).collect();
    for (i, key) in keys.iter().enumerate() {
        if i % 3 != 0 {
            env.s()
                .set(key, i.to_string().as_bytes(), Ttl::Never)
                .unwrap();
        }
    }
    let items = env.s().get_multi(&keys).unwrap();
    assert_eq!(items.len(), 200);
    for (i, item) in items.iter().enumerate() {
        let single = env.s().get(&keys[i]).unwrap();
        assert_eq!(item, &single, "key {i}");
        assert_eq!(item.is_some(), i % 3 != 0);
    }
}

// ---- add / replace ----

/// add on a missing key stores and returns the item's CAS.
pub fn add_miss_stores(env: &Env) {
    let key = k("add");
    let Stored::Stored(cas) = env.s().add(&key, b"v", Ttl::Never).unwrap() else {
        panic!("add on a missing key must store");
    };
    assert_eq!(env.s().get(&key).unwrap().unwrap().cas, cas);
}

/// add on an existing key is NotStored and keeps the value.
pub fn add_hit_not_stored(env: &Env) {
    let key = k("add");
    env.s().set(&key, b"first", Ttl::Never).unwrap();
    assert_eq!(
        env.s().add(&key, b"second", Ttl::Never).unwrap(),
        Stored::NotStored
    );
    assert_eq!(value(env, &key).unwrap(), b"first");
}

/// replace on a missing key is NotStored and creates nothing.
pub fn replace_miss(env: &Env) {
    let key = k("rep");
    assert_eq!(
        env.s().replace(&key, b"v", Ttl::Never).unwrap(),
        Stored::NotStored
    );
    assert_eq!(value(env, &key), None);
}

/// replace on an existing key stores.
pub fn replace_hit(env: &Env) {
    let key = k("rep");
    env.s().set(&key, b"old", Ttl::Never).unwrap();
    assert!(
        env.s()
            .replace(&key, b"new", Ttl::Never)
            .unwrap()
            .is_stored()
    );
    assert_eq!(value(env, &key).unwrap(), b"new");
}

// ---- cas ----

/// cas with the current CAS id stores and returns the new id.
pub fn cas_match(env: &Env) {
    let key = k("cas");
    let c1 = env.s().set(&key, b"1", Ttl::Never).unwrap();
    let CasOutcome::Stored(c2) = env.s().cas(&key, b"2", Ttl::Never, c1).unwrap() else {
        panic!("cas with the current id must store");
    };
    assert_ne!(c1, c2);
    let item = env.s().get(&key).unwrap().unwrap();
    assert_eq!((item.value.as_slice(), item.cas), (&b"2"[..], c2));
}

/// cas with a stale CAS id is Exists and keeps the value.
pub fn cas_mismatch(env: &Env) {
    let key = k("cas");
    let c1 = env.s().set(&key, b"1", Ttl::Never).unwrap();
    env.s().set(&key, b"other", Ttl::Never).unwrap();
    assert_eq!(
        env.s().cas(&key, b"2", Ttl::Never, c1).unwrap(),
        CasOutcome::Exists
    );
    assert_eq!(value(env, &key).unwrap(), b"other");
}

/// cas on a missing key is NotFound and creates nothing.
pub fn cas_missing(env: &Env) {
    let key = k("cas");
    assert_eq!(
        env.s().cas(&key, b"2", Ttl::Never, 12345).unwrap(),
        CasOutcome::NotFound
    );
    assert_eq!(value(env, &key), None);
}

/// append, prepend, incr and touch-free reads: every modification changes
/// the CAS id, so an old id no longer matches.
pub fn cas_changes_on_every_modification(env: &Env) {
    let key = k("casmod");
    let mut last = env.s().set(&key, b"1", Ttl::Never).unwrap();
    let mut check = |what: &str| {
        let now = env.s().get(&key).unwrap().unwrap().cas;
        assert_ne!(now, last, "{what} must change the CAS id");
        last = now;
    };
    env.s().append(&key, b"0").unwrap();
    check("append");
    env.s().prepend(&key, b"1").unwrap();
    check("prepend");
    env.s().incr(&key, 1).unwrap();
    check("incr");
    env.s().decr(&key, 1).unwrap();
    check("decr");
    env.s().incr_or_init(&key, 1, 0, Ttl::Never).unwrap();
    check("incr_or_init");
}

// ---- append / prepend ----

/// append and prepend extend an existing value.
pub fn append_prepend_hit(env: &Env) {
    let key = k("cat");
    env.s().set(&key, b"mid", Ttl::Never).unwrap();
    assert!(env.s().append(&key, b">").unwrap());
    assert!(env.s().prepend(&key, b"<").unwrap());
    assert_eq!(value(env, &key).unwrap(), b"<mid>");
}

/// append and prepend on a missing key return false and create nothing.
pub fn append_prepend_miss(env: &Env) {
    let key = k("cat");
    assert!(!env.s().append(&key, b"x").unwrap());
    assert!(!env.s().prepend(&key, b"x").unwrap());
    assert_eq!(value(env, &key), None);
}

/// append_or_add creates a missing key, then appends.
pub fn append_or_add(env: &Env) {
    let key = k("aoa");
    env.s().append_or_add(&key, b"+a ", Ttl::secs(100)).unwrap();
    env.s().append_or_add(&key, b"+b ", Ttl::secs(100)).unwrap();
    assert_eq!(value(env, &key).unwrap(), b"+a +b ");
}

/// An append that would grow the item past the limit is ValueTooLarge and
/// leaves the value intact.
pub fn append_past_limit(env: &Env) {
    let key = k("bigcat");
    let big = vec![b'x'; max_value_len(&key) - 10];
    env.s().set(&key, &big, Ttl::Never).unwrap();
    assert_too_large(env.s().append(&key, &[b'y'; 100]));
    assert_too_large(env.s().append_or_add(&key, &[b'y'; 100], Ttl::Never));
    assert_eq!(value(env, &key).unwrap().len(), big.len());
    assert!(
        env.s().append(&key, &[b'y'; 10]).unwrap(),
        "exactly full still fits"
    );
}

// ---- counters ----

/// incr and decr on an existing counter.
pub fn incr_decr_hit(env: &Env) {
    let key = k("n");
    env.s().set(&key, b"10", Ttl::Never).unwrap();
    assert_eq!(env.s().incr(&key, 5).unwrap(), Some(15));
    assert_eq!(env.s().decr(&key, 3).unwrap(), Some(12));
    assert_eq!(env.s().get(&key).unwrap().unwrap().counter(), Some(12));
}

/// incr and decr on a missing key are None and create nothing.
pub fn incr_decr_miss(env: &Env) {
    let key = k("n");
    assert_eq!(env.s().incr(&key, 1).unwrap(), None);
    assert_eq!(env.s().decr(&key, 1).unwrap(), None);
    assert_eq!(value(env, &key), None);
}

/// incr wraps at 2^64.
pub fn incr_wraps(env: &Env) {
    let key = k("n");
    env.s()
        .set(&key, u64::MAX.to_string().as_bytes(), Ttl::Never)
        .unwrap();
    assert_eq!(env.s().incr(&key, 1).unwrap(), Some(0));
    env.s()
        .set(&key, b"18446744073709551610", Ttl::Never)
        .unwrap();
    assert_eq!(env.s().incr(&key, 10).unwrap(), Some(4));
}

/// decr stops at 0.
pub fn decr_floors(env: &Env) {
    let key = k("n");
    env.s().set(&key, b"5", Ttl::Never).unwrap();
    assert_eq!(env.s().decr(&key, 100).unwrap(), Some(0));
    assert_eq!(env.s().decr(&key, 1).unwrap(), Some(0));
}

/// A shortened number is space-padded in place ("10" - 1 = "9 ") and still
/// reads and increments correctly; a longer one grows.
pub fn decr_pads_with_spaces(env: &Env) {
    let key = k("pad");
    env.s().set(&key, b"100", Ttl::Never).unwrap();
    assert_eq!(env.s().decr(&key, 91).unwrap(), Some(9));
    let item = env.s().get(&key).unwrap().unwrap();
    assert_eq!(item.value, b"9  ");
    assert_eq!(item.counter(), Some(9));
    assert_eq!(env.s().incr(&key, 1).unwrap(), Some(10));
    assert_eq!(value(env, &key).unwrap(), b"10 ");
    assert_eq!(env.s().incr(&key, 990).unwrap(), Some(1000));
    assert_eq!(value(env, &key).unwrap(), b"1000");
}

/// Values memcached's incr accepts or refuses, exactly as it does.
pub fn incr_parsing(env: &Env) {
    /// Stored value, then the incr result and the bytes left behind.
    type Case = (&'static [u8], Option<(u64, &'static [u8])>);
    let cases: &[Case] = &[
        (b" 7", Some((8, b"8 "))),
        (b"+3", Some((4, b"4 "))),
        (b"-0", Some((1, b"1 "))),
        (b"12 34", Some((13, b"13   "))),
        (b"007", Some((8, b"8  "))),
        (b"-5", None),
        (b"12abc", None),
        (b"abc", None),
        (b"18446744073709551616", None),
        (b"", None),
    ];
    for (i, (stored, want)) in cases.iter().enumerate() {
        let key = k(&format!("parse{i}"));
        env.s().set(&key, stored, Ttl::Never).unwrap();
        match want {
            Some((n, bytes)) => {
                assert_eq!(env.s().incr(&key, 1).unwrap(), Some(*n), "{stored:?}");
                assert_eq!(value(env, &key).unwrap(), *bytes, "{stored:?}");
            }
            None => {
                assert_non_numeric(env.s().incr(&key, 1));
                assert_non_numeric(env.s().decr(&key, 1));
                assert_eq!(value(env, &key).unwrap(), *stored, "left intact");
            }
        }
    }
}

/// A value made only of whitespace is not a number: incr, decr and
/// incr_or_init are NonNumeric and leave it as it was.
///
/// This pins a *fresh* memcached. memcached parses the value with
/// `strtoull`, which skips leading whitespace, and `\r\n` (stored after every
/// value) is whitespace too, so on an all-whitespace value it reads on into
/// the rest of the slab chunk. A fresh server's chunks are zeroed, and the
/// zero byte ends the parse: NonNumeric. Later in a server's life the chunk
/// may hold an older item's digits, and the same command then "succeeds"
/// with a number read from stale memory. That is why the differential test
/// skips counter ops on such values, and why the embedded store (and every
/// structure) treats them as NonNumeric, the only deterministic answer.
pub fn incr_whitespace_value(env: &Env) {
    let values: &[&[u8]] = &[
        b"\x0c",
        b" ",
        b"\t",
        b"\r\n",
        b"\x0b",
        b"   ",
        b" \r\n\t\x0b\x0c",
    ];
    for (i, stored) in values.iter().enumerate() {
        let key = k(&format!("ws{i}"));
        env.s().set(&key, stored, Ttl::Never).unwrap();
        assert_non_numeric(env.s().incr(&key, 1));
        assert_non_numeric(env.s().decr(&key, 5));
        assert_non_numeric(env.s().incr_or_init(&key, 1, 7, Ttl::Never));
        assert_eq!(value(env, &key).unwrap(), *stored, "{stored:?} left intact");
    }
}

/// incr_or_init creates the counter with `initial` (not initial + delta).
pub fn incr_or_init_creates(env: &Env) {
    let key = k("ioi");
    assert_eq!(
        env.s().incr_or_init(&key, 5, 100, Ttl::secs(100)).unwrap(),
        100
    );
    assert_eq!(
        env.s().incr_or_init(&key, 5, 100, Ttl::secs(100)).unwrap(),
        105
    );
    assert_eq!(env.s().get(&key).unwrap().unwrap().value, b"105");
}

/// incr_or_init with Ttl::Never, and on an existing counter.
pub fn incr_or_init_existing(env: &Env) {
    let key = k("ioi");
    env.s().set(&key, b"41", Ttl::Never).unwrap();
    assert_eq!(env.s().incr_or_init(&key, 1, 0, Ttl::Never).unwrap(), 42);
    let fresh = k("ioi2");
    assert_eq!(env.s().incr_or_init(&fresh, 1, 0, Ttl::Never).unwrap(), 0);
    assert_eq!(env.s().incr_or_init(&fresh, 1, 0, Ttl::Never).unwrap(), 1);
}

/// incr_or_init on a non-numeric value is NonNumeric and changes nothing.
pub fn incr_or_init_non_numeric(env: &Env) {
    let key = k("ioi");
    env.s().set(&key, b"text", Ttl::Never).unwrap();
    assert_non_numeric(env.s().incr_or_init(&key, 1, 0, Ttl::Never));
    assert_eq!(value(env, &key).unwrap(), b"text");
}

// ---- delete ----

/// delete removes an existing key; a second delete is false.
pub fn delete(env: &Env) {
    let key = k("del");
    env.s().set(&key, b"v", Ttl::Never).unwrap();
    assert!(env.s().delete(&key).unwrap());
    assert!(!env.s().delete(&key).unwrap());
    assert_eq!(value(env, &key), None);
}

/// delete_cas with the current CAS id deletes.
pub fn delete_cas_match(env: &Env) {
    let key = k("dcas");
    let cas = env.s().set(&key, b"v", Ttl::Never).unwrap();
    assert_eq!(
        env.s().delete_cas(&key, cas).unwrap(),
        DeleteOutcome::Deleted
    );
    assert_eq!(value(env, &key), None);
    // The key is really gone: add works at once.
    assert!(env.s().add(&key, b"next", Ttl::Never).unwrap().is_stored());
}

/// delete_cas with a stale CAS id keeps the (new) value.
pub fn delete_cas_mismatch(env: &Env) {
    let key = k("dcas");
    let old = env.s().set(&key, b"v", Ttl::Never).unwrap();
    env.s().set(&key, b"new owner", Ttl::Never).unwrap();
    assert_eq!(
        env.s().delete_cas(&key, old).unwrap(),
        DeleteOutcome::Exists
    );
    assert_eq!(value(env, &key).unwrap(), b"new owner");
}

/// delete_cas on a missing key is NotFound.
pub fn delete_cas_missing(env: &Env) {
    assert_eq!(
        env.s().delete_cas(&k("dcas"), 1).unwrap(),
        DeleteOutcome::NotFound
    );
}

// ---- touch and expiry ----

/// touch on a missing key is false; on an existing one true.
pub fn touch(env: &Env) {
    let key = k("touch");
    assert!(!env.s().touch(&key, Ttl::secs(10)).unwrap());
    env.s().set(&key, b"v", Ttl::secs(10)).unwrap();
    assert!(env.s().touch(&key, Ttl::Never).unwrap());
    assert_eq!(value(env, &key).unwrap(), b"v");
}

/// Items expire after their TTL whichever op created them; touch, append
/// and incr keep or change the TTL as memcached does; long TTLs live.
/// (Sleeps about 2.2 s on real servers: the only sleeping case.)
pub fn expiry(env: &Env) {
    let s = env.s();
    let short = Ttl::secs(1);
    s.set(&k("x-set"), b"v", short).unwrap();
    s.add(&k("x-add"), b"v", short).unwrap();
    let cas = s.set(&k("x-cas"), b"v", Ttl::Never).unwrap();
    s.cas(&k("x-cas"), b"v2", short, cas).unwrap();
    s.set(&k("x-rep"), b"v", Ttl::Never).unwrap();
    s.replace(&k("x-rep"), b"v2", short).unwrap();
    s.incr_or_init(&k("x-ioi"), 1, 1, short).unwrap();
    s.append_or_add(&k("x-aoa"), b"v", short).unwrap();
    // append keeps the TTL the item was created with.
    s.set(&k("x-app"), b"v", short).unwrap();
    s.append(&k("x-app"), b"w").unwrap();
    // incr keeps the TTL too.
    s.set(&k("x-inc"), b"1", short).unwrap();
    s.incr(&k("x-inc"), 1).unwrap();
    // touch extends.
    s.set(&k("x-touched"), b"v", short).unwrap();
    s.touch(&k("x-touched"), Ttl::secs(100)).unwrap();
    // incr_or_init on an existing counter does not change its TTL.
    s.set(&k("x-ioi-long"), b"1", Ttl::secs(100)).unwrap();
    s.incr_or_init(&k("x-ioi-long"), 1, 1, short).unwrap();
    s.set(&k("x-long"), b"v", Ttl::secs(100)).unwrap();
    s.set(&k("x-never"), b"v", Ttl::Never).unwrap();
    // 40 days must mean 40 days, not 1970 (memcached reads > 30 days as a
    // Unix time).
    s.set(&k("x-40days"), b"v", Ttl::secs(40 * 86_400)).unwrap();
    s.add(&k("x-40days-add"), b"v", Ttl::secs(40 * 86_400))
        .unwrap();
    s.incr_or_init(&k("x-40days-ioi"), 1, 1, Ttl::secs(40 * 86_400))
        .unwrap();

    env.advance(Duration::from_millis(2200));

    for gone in [
        "x-set", "x-add", "x-cas", "x-rep", "x-ioi", "x-aoa", "x-app", "x-inc",
    ] {
        assert_eq!(value(env, &k(gone)), None, "{gone} should have expired");
    }
    for alive in [
        "x-touched",
        "x-ioi-long",
        "x-long",
        "x-never",
        "x-40days",
        "x-40days-add",
        "x-40days-ioi",
    ] {
        assert!(value(env, &k(alive)).is_some(), "{alive} should be alive");
    }
    // Expired keys behave as missing for every op.
    assert!(!s.append(&k("x-set"), b"z").unwrap());
    assert_eq!(s.incr(&k("x-inc"), 1).unwrap(), None);
    assert!(
        s.add(&k("x-add"), b"again", Ttl::Never)
            .unwrap()
            .is_stored()
    );
}

// ---- limits and input ----

/// The largest value that fits (1 MiB minus key and 59 bytes of item
/// overhead) stores; one byte more is ValueTooLarge and keeps the old value.
pub fn item_size_limit(env: &Env) {
    let key = k("limit");
    let fits = vec![b'x'; max_value_len(&key)];
    env.s().set(&key, &fits, Ttl::Never).unwrap();
    assert_eq!(value(env, &key).unwrap().len(), fits.len());
    let over = vec![b'y'; fits.len() + 1];
    assert_too_large(env.s().set(&key, &over, Ttl::Never));
    assert_eq!(value(env, &key).unwrap(), fits, "old value intact");
}

/// Every write refuses an oversized value and nothing is created.
pub fn value_too_large_every_write(env: &Env) {
    let key = k("toolarge");
    let over = vec![b'z'; 2 * 1024 * 1024];
    assert_too_large(env.s().set(&key, &over, Ttl::Never));
    assert_too_large(env.s().add(&key, &over, Ttl::Never));
    assert_too_large(env.s().replace(&key, &over, Ttl::Never));
    assert_too_large(env.s().cas(&key, &over, Ttl::Never, 1));
    assert_too_large(env.s().append_or_add(&key, &over, Ttl::Never));
    assert_eq!(value(env, &key), None);
    env.s().set(&key, b"small", Ttl::Never).unwrap();
    assert_too_large(env.s().append(&key, &over));
    assert_too_large(env.s().prepend(&key, &over));
    assert_eq!(value(env, &key).unwrap(), b"small");
}

/// Keys that could inject commands are refused before any store sees them.
pub fn bad_keys_rejected(env: &Env) {
    for bad in [
        &b"x\r\nflush_all"[..],
        b"a b",
        b"tab\there",
        b"nul\0",
        b"del\x7f",
        b"",
        &[b'k'; 251],
    ] {
        assert!(
            matches!(Key::new(bad), Err(Error::InvalidKey { .. })),
            "{bad:?}"
        );
    }
    // The store still works and holds nothing unexpected.
    assert_eq!(env.s().get(&k("flush_all")).unwrap(), None);
}

// ---- the update helper ----

/// An update function: the stored decimal number plus one (0 if missing).
fn bump(cur: Option<&[u8]>) -> Option<Vec<u8>> {
    let n: u64 = cur
        .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
        .unwrap_or(0);
    Some((n + 1).to_string().into_bytes())
}

/// update creates, modifies and declines.
pub fn update_helper(env: &Env) {
    let key = k("upd");
    for _ in 0..3 {
        env.s().update(&key, Ttl::Never, 10, &mut bump).unwrap();
    }
    assert_eq!(value(env, &key).unwrap(), b"3");
    let out = env.s().update(&key, Ttl::Never, 10, &mut |_| None).unwrap();
    assert_eq!(out, Updated::Unchanged);
}

/// Concurrent updates from 4 threads lose nothing.
pub fn update_concurrent(env: &Env) {
    let key = k("updc");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..25 {
                    env.s().update(&key, Ttl::Never, 1000, &mut bump).unwrap();
                }
            });
        }
    });
    assert_eq!(value(env, &key).unwrap(), b"100");
}

/// incr_or_init from 4 threads: no increment lost, exactly one creation.
pub fn incr_or_init_concurrent(env: &Env) {
    let key = k("ioic");
    let created = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..250 {
                    if env.s().incr_or_init(&key, 1, 1, Ttl::Never).unwrap() == 1 {
                        created.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(env.s().get(&key).unwrap().unwrap().counter(), Some(1000));
    assert_eq!(created.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// append_or_add from 4 threads: every piece lands exactly once.
pub fn append_or_add_concurrent(env: &Env) {
    let key = k("aoac");
    std::thread::scope(|scope| {
        for t in 0..4 {
            let key = &key;
            scope.spawn(move || {
                for i in 0..50 {
                    env.s()
                        .append_or_add(key, format!("{t}.{i} ").as_bytes(), Ttl::Never)
                        .unwrap();
                }
            });
        }
    });
    let text = String::from_utf8(value(env, &key).unwrap()).unwrap();
    let mut pieces: Vec<&str> = text.split_whitespace().collect();
    pieces.sort_unstable();
    let mut want: Vec<String> = (0..4)
        .flat_map(|t| (0..50).map(move |i| format!("{t}.{i}")))
        .collect();
    want.sort_unstable();
    assert_eq!(pieces, want);
}

/// add from 4 threads on one key: exactly one wins.
pub fn add_race_one_winner(env: &Env) {
    let wins = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for t in 0..4 {
            let wins = &wins;
            scope.spawn(move || {
                for round in 0..20 {
                    let key = k(&format!("race{round}"));
                    if env
                        .s()
                        .add(&key, format!("{t}").as_bytes(), Ttl::Never)
                        .unwrap()
                        .is_stored()
                    {
                        wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(wins.load(std::sync::atomic::Ordering::SeqCst), 20);
}

/// flags read back as 0 for values mcds writes.
pub fn flags_are_zero(env: &Env) {
    let key = k("flags");
    env.s().set(&key, b"v", Ttl::Never).unwrap();
    env.s().append(&key, b"w").unwrap();
    assert_eq!(env.s().get(&key).unwrap().unwrap().flags, 0);
}

/// The store's name is non-empty (used in messages).
pub fn backend_name(env: &Env) {
    assert!(!env.s().backend_name().is_empty());
    if let Some(clock) = &env.clock {
        assert!(clock.now_ms() > 0);
    }
}

// ---- pipeline ----

/// A reply with CAS ids blanked, for comparing two runs.
fn shape(r: &mc_core::Result<Reply>) -> String {
    match r {
        Ok(Reply::Item(Some(i))) => format!("item {:?}", String::from_utf8_lossy(&i.value)),
        Ok(Reply::Cas(_)) => "cas".into(),
        Ok(Reply::Stored(Stored::Stored(_))) => "stored".into(),
        Ok(Reply::CasOutcome(CasOutcome::Stored(_))) => "cas stored".into(),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("error {e:?}").split_whitespace().take(2).collect(),
    }
}

/// Every op kind in one batch, hits and misses, several on the same keys:
/// the same replies as running the ops one by one (CAS ids aside).
pub fn pipeline_every_op(env: &Env) {
    let s = env.s();
    let run = |prefix: &str, piped: bool| -> Vec<String> {
        let key = |n: &str| k(&format!("{prefix}{n}"));
        let names = [
            "hit", "miss", "new", "new2", "hit2", "num", "aoa", "ioi", "del", "dc", "dc2",
        ];
        let [hit, miss, new, new2, hit2, num, aoa, ioi, del, dc, dc2] = names.map(key);
        s.set(&hit, b"v", Ttl::Never).unwrap();
        s.set(&hit2, b"w", Ttl::Never).unwrap();
        s.set(&num, b"10", Ttl::Never).unwrap();
        s.set(&del, b"x", Ttl::Never).unwrap();
        let dc_cas = s.set(&dc, b"x", Ttl::Never).unwrap();
        let dc2_cas = s.set(&dc2, b"x", Ttl::Never).unwrap();
        let ops = [
            Op::Get(&hit),
            Op::Get(&miss),
            Op::Set {
                key: &new,
                value: b"s",
                ttl: Ttl::secs(100),
            },
            Op::Add {
                key: &hit,
                value: b"no",
                ttl: Ttl::Never,
            },
            Op::Add {
                key: &new2,
                value: b"a",
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &miss,
                value: b"no",
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &hit2,
                value: b"r",
                ttl: Ttl::Never,
            },
            Op::Cas {
                key: &hit2,
                value: b"no",
                ttl: Ttl::Never,
                cas: 1,
            },
            Op::Cas {
                key: &miss,
                value: b"no",
                ttl: Ttl::Never,
                cas: 1,
            },
            Op::Append {
                key: &hit,
                value: b">",
            },
            Op::Append {
                key: &miss,
                value: b">",
            },
            Op::Prepend {
                key: &hit,
                value: b"<",
            },
            Op::Prepend {
                key: &miss,
                value: b"<",
            },
            Op::AppendOrAdd {
                key: &aoa,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::AppendOrAdd {
                key: &aoa,
                value: b"2",
                ttl: Ttl::Never,
            },
            Op::Incr {
                key: &num,
                delta: 5,
            },
            Op::Incr {
                key: &miss,
                delta: 5,
            },
            Op::Decr {
                key: &num,
                delta: 100,
            },
            Op::Decr {
                key: &miss,
                delta: 1,
            },
            Op::IncrOrInit {
                key: &ioi,
                delta: 1,
                initial: 7,
                ttl: Ttl::Never,
            },
            Op::IncrOrInit {
                key: &ioi,
                delta: 1,
                initial: 7,
                ttl: Ttl::Never,
            },
            Op::Delete(&del),
            Op::Delete(&miss),
            Op::DeleteCas {
                key: &dc,
                cas: dc_cas,
            },
            Op::DeleteCas {
                key: &dc2,
                cas: dc2_cas + 1000,
            },
            Op::DeleteCas { key: &miss, cas: 1 },
            Op::Touch {
                key: &hit,
                ttl: Ttl::secs(100),
            },
            Op::Touch {
                key: &miss,
                ttl: Ttl::secs(100),
            },
            Op::Get(&hit),
            Op::Get(&num),
        ];
        let replies = if piped {
            s.pipeline(&ops)
        } else {
            ops.iter().map(|op| s.execute(op)).collect()
        };
        let mut out: Vec<String> = replies.iter().map(shape).collect();
        out.push(format!("aoa={:?}", value(env, &aoa).map(String::from_utf8)));
        out.push(format!("new={:?}", value(env, &new).map(String::from_utf8)));
        out
    };
    let piped = run("p1:", true);
    let one_by_one = run("p2:", false);
    assert_eq!(piped, one_by_one, "{}", env.name);
    let expected = [
        "item \"v\"",
        "Item(None)",
        "cas",
        "Stored(NotStored)",
        "stored",
        "Stored(NotStored)",
        "stored",
        "CasOutcome(Exists)",
        "CasOutcome(NotFound)",
        "Applied(true)",
        "Applied(false)",
        "Applied(true)",
        "Applied(false)",
        "Done",
        "Done",
        "Counter(Some(15))",
        "Counter(None)",
        "Counter(Some(0))",
        "Counter(None)",
        "Value(7)",
        "Value(8)",
        "Applied(true)",
        "Applied(false)",
        "Deleted(Deleted)",
        "Deleted(Exists)",
        "Deleted(NotFound)",
        "Applied(true)",
        "Applied(false)",
        "item \"<v>\"",
    ];
    assert_eq!(&piped[..expected.len()], expected, "{}", env.name);
    assert!(piped[29].starts_with("item \"0"), "{}", piped[29]);
    assert_eq!(piped[30], "aoa=Some(Ok(\"12\"))");
    assert_eq!(piped[31], "new=Some(Ok(\"s\"))");
}

/// Ops on the same key in one batch apply in order, also when one of them
/// must be finished after its payload (an append that misses, an
/// append_or_add creating its key on memcached before 1.6.20).
pub fn pipeline_same_key_keeps_order(env: &Env) {
    let s = env.s();
    let run = |prefix: &str, piped: bool| -> Vec<String> {
        let key = |n: &str| k(&format!("{prefix}{n}"));
        let [a, b, c, d] = ["a", "b", "c", "d"].map(key);
        let ops = [
            Op::Append {
                key: &a,
                value: b"x",
            },
            Op::Set {
                key: &a,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::AppendOrAdd {
                key: &b,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::Delete(&b),
            Op::AppendOrAdd {
                key: &c,
                value: b"1",
                ttl: Ttl::Never,
            },
            Op::Get(&c),
            Op::Prepend {
                key: &d,
                value: b"<",
            },
            Op::AppendOrAdd {
                key: &d,
                value: b"2",
                ttl: Ttl::Never,
            },
            Op::Prepend {
                key: &d,
                value: b"<",
            },
            Op::Get(&d),
        ];
        let replies = if piped {
            s.pipeline(&ops)
        } else {
            ops.iter().map(|op| s.execute(op)).collect()
        };
        let mut out: Vec<String> = replies.iter().map(shape).collect();
        for key in [&a, &b, &c, &d] {
            out.push(format!("{:?}", value(env, key).map(String::from_utf8)));
        }
        out
    };
    let piped = run("o1:", true);
    assert_eq!(piped, run("o2:", false), "{}", env.name);
    assert_eq!(
        piped,
        [
            "Applied(false)",
            "cas",
            "Done",
            "Applied(true)",
            "Done",
            "item \"1\"",
            "Applied(false)",
            "Done",
            "Applied(true)",
            "item \"<2\"",
            "Some(Ok(\"v\"))",
            "None",
            "Some(Ok(\"1\"))",
            "Some(Ok(\"<2\"))",
        ]
    );
}

/// A failing op fails alone: the ops around it (quiet or not, on the same
/// server) keep their own results.
pub fn pipeline_errors_are_per_op(env: &Env) {
    let s = env.s();
    let (text, n, d, big) = (k("pe:text"), k("pe:n"), k("pe:d"), k("pe:big"));
    s.set(&text, b"abc", Ttl::Never).unwrap();
    s.set(&n, b"1", Ttl::Never).unwrap();
    s.set(&d, b"x", Ttl::Never).unwrap();
    let huge = vec![b'x'; mc_core::DEFAULT_ITEM_SIZE_LIMIT];
    let ops = [
        Op::Delete(&d),
        Op::Incr {
            key: &text,
            delta: 1,
        },
        Op::Get(&n),
        Op::Set {
            key: &big,
            value: &huge,
            ttl: Ttl::Never,
        },
        Op::IncrOrInit {
            key: &text,
            delta: 1,
            initial: 0,
            ttl: Ttl::Never,
        },
        Op::Incr { key: &n, delta: 1 },
        Op::Append {
            key: &text,
            value: b"x",
        },
    ];
    let mut r = s.pipeline(&ops).into_iter();
    assert_eq!(r.next().unwrap().unwrap(), Reply::Applied(true));
    assert_non_numeric(r.next().unwrap());
    assert_eq!(
        r.next().unwrap().unwrap().item().unwrap().unwrap().value,
        b"1"
    );
    assert_too_large(r.next().unwrap());
    assert_non_numeric(r.next().unwrap());
    assert_eq!(r.next().unwrap().unwrap(), Reply::Counter(Some(2)));
    assert_eq!(r.next().unwrap().unwrap(), Reply::Applied(true));
    assert!(r.next().is_none());
    assert_eq!(value(env, &text).unwrap(), b"abcx");
    assert_eq!(value(env, &d), None);
    assert_eq!(value(env, &big), None);
    // The store is still in step afterwards.
    assert_eq!(s.incr(&n, 1).unwrap(), Some(3));
}

/// A batch larger than one payload (thousands of ops) is cut into payloads
/// and every op gets its own reply; an empty batch costs nothing.
pub fn pipeline_large_batch(env: &Env) {
    let s = env.s();
    let keys: Vec<Key> = (0..3000).map(|i| k(&format!("pl:{i:05}"))).collect();
    let ops: Vec<Op<'_>> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| Op::IncrOrInit {
            key,
            delta: 1,
            initial: i as u64,
            ttl: Ttl::Never,
        })
        .collect();
    for (i, r) in s.pipeline(&ops).into_iter().enumerate() {
        assert_eq!(r.unwrap().value().unwrap(), i as u64);
    }
    let gets: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
    let (replies, t) = traffic::measure(|| s.pipeline(&gets));
    for (i, r) in replies.into_iter().enumerate() {
        let item = r.unwrap().item().unwrap().unwrap();
        assert_eq!(item.counter(), Some(i as u64));
    }
    assert!(t.round_trips >= 1 && t.commands == 3000, "{t:?}");
    // Distinct keys: one round trip per server.
    let ten: Vec<Op<'_>> = keys[..10]
        .iter()
        .map(|key| Op::Incr { key, delta: 1 })
        .collect();
    let (_, t) = traffic::measure(|| s.pipeline(&ten));
    let servers = env.servers.len().max(1) as u64;
    assert!(t.round_trips <= servers, "{}: {t:?}", env.name);
    let (empty, t) = traffic::measure(|| s.pipeline(&[]));
    assert!(empty.is_empty());
    assert_eq!(t.round_trips, 0);
}

/// Expands every conformance case into a `#[test]` for one store.
///
/// In a test file of its own (one per backend, so each reports its count):
///
/// ```text
/// mc_testkit::conformance_suite!(mc_testkit::conformance::Env::memory);
/// ```
#[macro_export]
macro_rules! conformance_suite {
    ($env:expr) => {
        $crate::conformance_suite!(@cases $env;
            get_miss, set_then_get, set_overwrites, empty_value, binary_value,
            unusual_keys, get_multi_mixed, get_multi_empty, get_multi_many,
            add_miss_stores, add_hit_not_stored, replace_miss, replace_hit,
            cas_match, cas_mismatch, cas_missing, cas_changes_on_every_modification,
            append_prepend_hit, append_prepend_miss, append_or_add, append_past_limit,
            incr_decr_hit, incr_decr_miss, incr_wraps, decr_floors, decr_pads_with_spaces,
            incr_parsing, incr_whitespace_value, incr_or_init_creates, incr_or_init_existing,
            incr_or_init_non_numeric, delete, delete_cas_match, delete_cas_mismatch,
            delete_cas_missing, touch, expiry, item_size_limit,
            value_too_large_every_write, bad_keys_rejected, update_helper,
            update_concurrent, incr_or_init_concurrent, append_or_add_concurrent,
            add_race_one_winner, flags_are_zero, backend_name, pipeline_every_op,
            pipeline_errors_are_per_op, pipeline_large_batch, pipeline_same_key_keeps_order,
        );
    };
    (@cases $env:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let env = ($env)();
                $crate::conformance::$case(&env);
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Every `pub fn <case>(env: &Env)` of this file is in the list that
    /// [`conformance_suite!`] expands, and the list names nothing else: a
    /// case left off the list would never run.
    #[test]
    fn the_suite_runs_every_case() {
        let source = include_str!("conformance.rs");
        let defined: BTreeSet<&str> = source
            .lines()
            .filter_map(|l| l.strip_prefix("pub fn "))
            .filter_map(|l| l.strip_suffix("(env: &Env) {"))
            .collect();
        let list_start = source
            .find("$crate::conformance_suite!(@cases $env;")
            .expect("the case list");
        let list = &source[list_start..];
        let list = &list[list.find(';').unwrap() + 1..list.find(");").unwrap()];
        let listed: BTreeSet<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        assert!(defined.len() > 40, "found only {defined:?}");
        let missing: Vec<_> = defined.difference(&listed).collect();
        let unknown: Vec<_> = listed.difference(&defined).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "cases not in conformance_suite!: {missing:?}; listed but not defined: {unknown:?}"
        );
    }
}
