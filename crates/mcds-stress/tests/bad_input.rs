//! Bad input on real memcached: keys of every byte value and every length
//! from 0 to 300, garbage written under every structure's keys by another
//! client, and values over the item limit.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, Store, Ttl};
use mcds_counter::{
    Counter, CounterMap, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};
use mcds_eventlog::{Cursor, EventLog};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_set::{IntArray, Set, ShardedSet, Table};
use mcds_testkit::MemcachedServer;
use mcds_timeseries::{PackedSeries, Resolution, SlotWidth, TimeSeries};
use proptest::prelude::*;
use rand::RngExt;

/// A server owned by one test, with a store on it. Each test starts its own
/// (the key test's command counts must not see other tests' traffic), and
/// drops it at its end: a server kept in a `static` is never dropped.
struct Shared {
    server: MemcachedServer,
    store: Arc<MemcachedStore>,
}

impl Shared {
    fn start() -> Shared {
        let server = MemcachedServer::start_default();
        let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
        // Connect now: a new connection's handshake reads (and on a fresh
        // server creates) the incarnation marker, which the per-op command
        // counts must not see.
        store.get(&Key::new("warm-up").unwrap()).unwrap();
        Shared { server, store }
    }

    fn commands(&self) -> (u64, u64) {
        (self.server.stat("cmd_set"), self.server.stat("cmd_get"))
    }
}

/// Every key is either refused before anything is sent, or stored and read
/// back byte for byte, with exactly one command for the write: 512 proptest
/// keys of any bytes (and biased towards printable ones and the protocol's
/// separators), lengths 0 to 299.
#[test]
fn keys_of_any_bytes_are_refused_or_round_trip() {
    use proptest::test_runner::TestRunner;
    let shared = Shared::start();
    let mut runner = TestRunner::new(mcds_testkit::seed::proptest_config(file!(), 512));
    let keys = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(0x21u8..0x7f, 0..300),
        prop::collection::vec(
            prop_oneof![
                Just(b' '),
                Just(b'\r'),
                Just(b'\n'),
                Just(0u8),
                0x21u8..0x7f
            ],
            0..300
        ),
    ];
    let (refused, stored) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&keys, |bytes| {
            let before = shared.commands();
            match Key::new(&bytes) {
                Err(Error::InvalidKey { .. }) => {
                    prop_assert!(
                        bytes.is_empty()
                            || bytes.len() > 250
                            || bytes.iter().any(|&b| b <= 0x20 || b == 0x7f)
                    );
                    prop_assert_eq!(
                        shared.commands(),
                        before,
                        "a refused key reached the server"
                    );
                    refused.set(refused.get() + 1);
                }
                Err(e) => prop_assert!(false, "unexpected error {:?}", e),
                Ok(key) => {
                    prop_assert!((1..=250).contains(&bytes.len()));
                    let value = [bytes.len() as u8; 3];
                    shared.store.set(&key, &value, Ttl::secs(60)).unwrap();
                    prop_assert_eq!(
                        shared.commands(),
                        (before.0 + 1, before.1),
                        "one write, one command"
                    );
                    prop_assert_eq!(
                        shared.store.get(&key).unwrap().map(|i| i.value),
                        Some(value.to_vec())
                    );
                    // The server stored it under exactly these bytes.
                    let reply = shared
                        .server
                        .raw(&[b"get ".as_slice(), &bytes, b"\r\n"].concat(), |l| {
                            l == "END"
                        });
                    let expected = format!("VALUE {} 0 3", String::from_utf8_lossy(&bytes));
                    prop_assert_eq!(reply.first(), Some(&expected));
                    stored.set(stored.get() + 1);
                }
            }
            Ok(())
        })
        .unwrap();
    println!(
        "keys: {} proptest keys, {} refused with InvalidKey (0 commands sent), {} stored with exactly 1 command and read back byte for byte",
        refused.get() + stored.get(),
        refused.get(),
        stored.get()
    );
}

/// What a structure op did with garbage: recovered (Ok) or reported it.
#[derive(Default, Debug)]
struct Tally {
    ok: u32,
    corrupt: u32,
}

impl Tally {
    fn note<T>(&mut self, what: &str, r: mcds_core::Result<T>) {
        match r {
            Ok(_) => self.ok += 1,
            Err(Error::Corrupt { .. } | Error::NonNumeric { .. }) => self.corrupt += 1,
            Err(e) => panic!("{what}: garbage gave {e:?}, not a clear Corrupt/NonNumeric"),
        }
    }
}

fn garbage(rng: &mut impl rand::Rng, round: usize) -> Vec<u8> {
    const SPECIAL: &[&[u8]] = &[
        b"",
        b"18446744073709551616",
        b"-1",
        b" 5",
        b"5 ",
        b"\0",
        b"+",
        b"+a +b -",
        b"%",
        b"\xe7\xe7\xe7\xe7",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    ];
    if let Some(s) = SPECIAL.get(round) {
        return s.to_vec();
    }
    let len = rng.random_range(0..2000);
    (0..len).map(|_| rng.random()).collect()
}

/// Garbage written by a raw client under each structure's keys: every op
/// returns Ok (it recovers, as its docs say) or a clear Corrupt/NonNumeric
/// error, and never panics.
#[test]
fn garbage_under_structure_keys_is_reported_or_recovered() {
    let shared = Shared::start();
    let srv = &shared.server;
    let store: Arc<dyn Store> = shared.store.clone();
    let mut rng = mcds_testkit::seed::rng("garbage");
    let mut tallies: Vec<(&str, Tally)> = Vec::new();
    let min = Duration::from_secs(60);
    for round in 0..60 {
        let name = format!("g{round}");
        let junk = garbage(&mut rng, round);
        let put = |key: &str| srv.raw_set(key, &junk);
        let mut t = Tally::default();

        put(&format!("counter:{name}:value"));
        let c = Counter::new(Arc::clone(&store), &name).unwrap();
        t.note("Counter::get", c.get());
        t.note("Counter::incr", c.incr(1));
        t.note("Counter::decr", c.decr(1));
        tallies.push(("Counter", t));

        let mut t = Tally::default();
        put(&format!("views:{name}:value"));
        let v = ViewCounter::new(Arc::clone(&store), &name).unwrap();
        t.note("ViewCounter::view", v.view(|| Ok(1)));
        // Time-based keys are named by period number (minutes here).
        let minute = mcds_core::Clock::now_secs(&mcds_core::SystemClock) / 60;
        let w = WindowCounter::new(Arc::clone(&store), &name, min, 5).unwrap();
        for slot in minute - 4..=minute {
            put(&format!("window:{name}:{slot}"));
        }
        t.note("WindowCounter::value", w.value());
        t.note("WindowCounter::incr", w.incr(1));
        let sh = ShadowCounter::new(Arc::clone(&store), &name, min).unwrap();
        put(&format!("shadow:{name}:{}", minute - 1));
        put(&format!("shadow:{name}:{minute}"));
        t.note("ShadowCounter::value", sh.value());
        t.note("ShadowCounter::incr", sh.incr(1));
        for mode in [Window::Fixed, Window::Sliding] {
            let r = RateLimiter::new(Arc::clone(&store), &name, 10, min, mode).unwrap();
            let now = mcds_core::Clock::now_secs(&mcds_core::SystemClock) / 60;
            put(&format!("rate:{name}:{now}"));
            put(&format!("rate:{name}:{}", now - 1));
            t.note("RateLimiter::peek", r.peek());
            t.note("RateLimiter::check", r.check());
        }
        tallies.push(("other counters", t));

        let mut t = Tally::default();
        let map = CounterMap::new(Arc::clone(&store), &name).unwrap();
        map.incr("b", 1).unwrap();
        put(&format!("cmap:{name}:fields"));
        put(&String::from_utf8_lossy(
            map.field_key("a").unwrap().as_bytes(),
        ));
        t.note("CounterMap::get", map.get("a"));
        t.note("CounterMap::incr", map.incr("a", 1));
        t.note("CounterMap::incr_decimal", map.incr_decimal("a", "-1"));
        t.note("CounterMap::get_all", map.get_all());
        t.note("CounterMap::fields", map.fields());
        t.note("CounterMap::remove", map.remove("a"));
        t.note("CounterMap::get_all after remove", map.get_all());
        tallies.push(("counter map", t));

        let mut t = Tally::default();
        put(&format!("set:{name}:log"));
        let s = Set::new(Arc::clone(&store), &name).unwrap();
        t.note("Set::members", s.members());
        t.note("Set::contains", s.contains("a"));
        t.note("Set::add", s.add(&["a"]));
        t.note("Set::members after add", s.members());
        let ss = ShardedSet::new(Arc::clone(&store), &name, 4).unwrap();
        for shard in 0..4 {
            put(&format!("sset:{name}:{shard}"));
        }
        t.note("ShardedSet::members", ss.members());
        put(&format!("ints:{name}:log"));
        let ia = IntArray::new(Arc::clone(&store), &name).unwrap();
        t.note("IntArray::members", ia.members());
        put(&format!("table:{name}:members"));
        put(&format!("table:{name}:v:ann"));
        let tb = Table::new(Arc::clone(&store), &name).unwrap();
        t.note("Table::keys", tb.keys());
        t.note("Table::get", tb.get("ann"));
        t.note("Table::entries", tb.entries());
        t.note("Table::set", tb.set("bob", b"1"));
        tallies.push(("sets and tables", t));

        let mut t = Tally::default();
        let log = EventLog::new(Arc::clone(&store), &name, min, 4).unwrap();
        for chunk in minute - 3..=minute {
            put(&format!("log:{name}:{chunk}"));
        }
        t.note(
            "EventLog::fetch_checked",
            log.fetch_checked(0, u64::MAX / 2),
        );
        t.note("EventLog::since", log.since(&Cursor::start()));
        t.note("EventLog::latest", log.latest(10));
        t.note("EventLog::fetch_rev", log.fetch_rev(0, u64::MAX / 2));
        t.note("EventLog::count", log.count(0, u64::MAX / 2));
        t.note("EventLog::put", log.put(b"after garbage"));
        t.note("EventLog::since after put", log.since(&Cursor::start()));
        tallies.push(("event log", t));

        let mut t = Tally::default();
        put(&format!("lock:{name}:owner"));
        let lock = Lock::new(Arc::clone(&store), &name, min).unwrap();
        t.note("Lock::holder", lock.holder());
        t.note(
            "Lock::try_acquire",
            lock.try_acquire().map(|g| assert!(g.is_none())),
        );
        store
            .delete(&Key::new(format!("lock:{name}:owner")).unwrap())
            .unwrap();
        let g = lock.try_acquire().unwrap().unwrap();
        put(&format!("lock:{name}:owner"));
        assert_eq!(g.release().unwrap(), Release::Lost, "overwritten lock");
        tallies.push(("lock", t));

        let mut t = Tally::default();
        let now_ms = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
        let hour = Duration::from_secs(3600);
        let series = TimeSeries::new(
            Arc::clone(&store),
            &name,
            &[Resolution::new(min, hour).unwrap()],
        )
        .unwrap();
        put(&format!("ts:{name}:60000:{}", now_ms / 60_000));
        t.note("TimeSeries::range", series.range(now_ms, now_ms, min));
        t.note("TimeSeries::record", series.record(now_ms, 5));
        let packed =
            PackedSeries::new(Arc::clone(&store), &name, min, 60, SlotWidth::U16, hour).unwrap();
        put(&format!("packed:{name}:60000:60:{}", now_ms / 3_600_000));
        t.note("PackedSeries::range", packed.range(now_ms, now_ms));
        t.note("PackedSeries::incr", packed.incr(now_ms, 1));
        tallies.push(("time series", t));
    }
    let mut summary: Vec<(&str, Tally)> = Vec::new();
    for (name, t) in tallies {
        match summary.iter_mut().find(|(n, _)| *n == name) {
            Some((_, acc)) => {
                acc.ok += t.ok;
                acc.corrupt += t.corrupt;
            }
            None => summary.push((name, t)),
        }
    }
    let text: Vec<String> = summary
        .iter()
        .map(|(n, t)| format!("{n}: {} recovered, {} Corrupt/NonNumeric", t.ok, t.corrupt))
        .collect();
    println!(
        "garbage under structure keys, 60 rounds: {}; no panic",
        text.join("; ")
    );
}

/// Values over the item limit are a clear ValueTooLarge from every
/// structure that stores caller bytes, and nothing is written.
#[test]
fn values_over_the_item_limit_are_refused() {
    let shared = Shared::start();
    let store: Arc<dyn Store> = shared.store.clone();
    let huge = vec![b'm'; mcds_core::DEFAULT_ITEM_SIZE_LIMIT];
    let too_large = |what: &str, r: mcds_core::Result<()>| match r {
        Err(e @ Error::ValueTooLarge { .. }) => {
            assert!(e.to_string().contains("item limit"), "{e}");
        }
        other => panic!("{what}: expected ValueTooLarge, got {other:?}"),
    };
    let set = Set::new(Arc::clone(&store), "huge").unwrap();
    too_large("Set::add", set.add(&[&huge]));
    assert!(set.members().unwrap().is_empty());
    let table = Table::new(Arc::clone(&store), "huge").unwrap();
    too_large("Table::set", table.set("m", &huge));
    assert!(
        table.keys().unwrap().is_empty(),
        "a refused value listed its member"
    );
    let log = EventLog::new(Arc::clone(&store), "huge", Duration::from_secs(60), 4).unwrap();
    too_large("EventLog::put", log.put(&huge).map(drop));
    assert!(log.since(&Cursor::start()).unwrap().0.is_empty());
    let key = Key::new("huge:raw").unwrap();
    too_large("Store::set", store.set(&key, &huge, Ttl::Never).map(drop));
    println!(
        "over the item limit: Set::add, Table::set, EventLog::put, Store::set all ValueTooLarge, nothing written"
    );
}
