//! Every counter's documented limits (the `# Limits` section of each
//! type's docs): the value at a limit works, one past it is the documented
//! error, and nothing was written (the store's item count, read back, is
//! unchanged). On the embedded store and on real memcached, time moved by
//! a manual clock (no sleeps).

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, MemoryStore, Scope, Store};
use mcds_counter::{
    Counter, CounterMap, MAX_FIELD_LEN, MAX_SCALE, MAX_VALUE, MIN_VALUE, RateLimiter,
    ShadowCounter, ViewCounter, Window, WindowCounter,
};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// 1_800_000_000 s is a multiple of every period used here.
const EPOCH_MS: u64 = 1_800_000_000_000;

/// The largest amount one `CounterMap::incr` adds either way (2^56 − 1).
const MAX_AMOUNT: i64 = (1 << 56) - 1;

/// A store under test and a way to count the items it holds.
enum Backend {
    Memory(Arc<MemoryStore>),
    Memcached(Box<MemcachedServer>, Arc<dyn Store>),
}

impl Backend {
    fn memory() -> Backend {
        Backend::Memory(Arc::new(MemoryStore::new()))
    }

    fn memcached() -> Backend {
        let server = MemcachedServer::start_default();
        let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
        // The first exchange writes the store's own items (its restart
        // markers): counted before any test counts.
        store.get(&mcds_core::Key::new("warm").unwrap()).unwrap();
        Backend::Memcached(Box::new(server), store)
    }

    fn both() -> [Backend; 2] {
        [Backend::memory(), Backend::memcached()]
    }

    fn name(&self) -> &'static str {
        match self {
            Backend::Memory(_) => "memory",
            Backend::Memcached(..) => "memcached",
        }
    }

    fn store(&self) -> Arc<dyn Store> {
        match self {
            Backend::Memory(store) => Arc::clone(store) as Arc<dyn Store>,
            Backend::Memcached(_, store) => Arc::clone(store),
        }
    }

    /// A scope on the store with a manual clock at [`EPOCH_MS`] (memcached
    /// still expires by its own clock; every TTL here outlasts the test).
    fn scope(&self) -> (Scope, mcds_core::ManualClock) {
        let clock = mcds_core::ManualClock::new(EPOCH_MS);
        (
            Scope::new(self.store()).with_clock(Arc::new(clock.clone())),
            clock,
        )
    }

    /// How many items the store holds.
    fn items(&self) -> u64 {
        match self {
            Backend::Memory(store) => store.len() as u64,
            Backend::Memcached(server, _) => server.stat("curr_items"),
        }
    }
}

/// A name of exactly `len` bytes in keys: `:` (3 bytes escaped) as far as
/// it goes, then plain bytes, so that the escaping is counted too.
fn name_of(len: usize) -> String {
    let colons = len / 3 - 1;
    format!("{}{}", ":".repeat(colons), "n".repeat(len - 3 * colons))
}

/// `make` at a name of `max` key bytes works (and writes what it writes);
/// at `max + 1` it is `InvalidKey` and nothing more is written.
fn name_limit(
    backend: &Backend,
    what: &str,
    max: usize,
    make: impl Fn(&Scope, &str) -> mcds_core::Result<()>,
) {
    let (scope, _) = backend.scope();
    make(&scope, &name_of(max))
        .unwrap_or_else(|e| panic!("{what}, {}: a {max}-byte name: {e}", backend.name()));
    let before = backend.items();
    let err = make(&scope, &name_of(max + 1)).unwrap_err();
    assert!(
        matches!(err, Error::InvalidKey { .. }),
        "{what}, {}: {err}",
        backend.name()
    );
    assert_eq!(backend.items(), before, "{what}: nothing written");
    // An empty name is refused the same way.
    let err = make(&scope, "").unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{what}: {err}");
    assert_eq!(backend.items(), before, "{what}: nothing written");
}

#[test]
fn a_counter_name_of_236_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written() {
    for backend in Backend::both() {
        name_limit(&backend, "Counter", 236, |scope, name| {
            let c = Counter::new(scope, name)?;
            assert_eq!(c.key().len(), 250);
            assert_eq!(c.incr(3)?, 3);
            assert_eq!(c.get()?, 3);
            Ok(())
        });
    }
}

#[test]
fn a_scope_prefix_takes_its_bytes_from_the_name() {
    for backend in Backend::both() {
        let (scope, _) = backend.scope();
        let scope = scope.with_prefix("tenant-7/").unwrap();
        let c = Counter::new(&scope, &name_of(236 - 9)).unwrap();
        assert_eq!(c.incr(1).unwrap(), 1);
        let before = backend.items();
        let err = Counter::new(&scope, &name_of(236 - 8)).unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
        assert_eq!(backend.items(), before, "nothing written");
    }
}

#[test]
fn a_view_counter_name_of_238_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written()
{
    for backend in Backend::both() {
        name_limit(&backend, "ViewCounter", 238, |scope, name| {
            let v = ViewCounter::new(scope, name)?;
            assert_eq!(v.view(|| Ok(10))?, 11);
            assert_eq!(v.get(|| Ok(0))?, 11);
            Ok(())
        });
    }
}

#[test]
fn a_shadow_counter_name_of_222_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written()
 {
    for backend in Backend::both() {
        name_limit(&backend, "ShadowCounter", 222, |scope, name| {
            let s = ShadowCounter::new(scope, name, Duration::from_secs(60))?;
            assert_eq!(s.incr(2)?, 2);
            Ok(())
        });
    }
}

#[test]
fn a_window_counter_name_of_222_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written()
 {
    for backend in Backend::both() {
        name_limit(&backend, "WindowCounter", 222, |scope, name| {
            let w = WindowCounter::new(scope, name, Duration::from_secs(60), 6)?;
            assert_eq!(w.incr(2)?, 2);
            Ok(())
        });
    }
}

#[test]
fn a_rate_limiter_name_of_224_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written()
{
    for backend in Backend::both() {
        name_limit(&backend, "RateLimiter", 224, |scope, name| {
            let r = RateLimiter::new(scope, name, 5, Duration::from_secs(60), Window::Sliding)?;
            assert!(r.check()?.allowed);
            Ok(())
        });
    }
}

#[test]
fn a_counter_map_name_of_206_bytes_counts_and_one_more_byte_is_invalid_key_and_nothing_is_written()
{
    for backend in Backend::both() {
        name_limit(&backend, "CounterMap", 206, |scope, name| {
            let m = CounterMap::new(scope, name)?;
            assert_eq!(m.incr("f", 4)?, 4);
            assert_eq!(m.get_all()?, [("f".to_string(), 4)]);
            Ok(())
        });
    }
}

#[test]
fn a_counter_holds_u64_max_on_the_embedded_store() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let c = Counter::new(store, "max").unwrap();
    assert_eq!(c.incr(u64::MAX - 1).unwrap(), u64::MAX - 1);
    assert_eq!(c.incr(1).unwrap(), u64::MAX);
    assert_eq!(c.get().unwrap(), u64::MAX);
}

#[test]
fn a_counter_on_memcached_counts_to_2_pow_63_minus_1() {
    let backend = Backend::memcached();
    let c = Counter::new(backend.store(), "high").unwrap();
    assert_eq!(c.incr((1 << 63) - 2).unwrap(), (1 << 63) - 2);
    assert_eq!(c.incr(1).unwrap(), (1 << 63) - 1);
    assert_eq!(c.get().unwrap(), (1 << 63) - 1);
}

#[test]
fn a_decrement_past_zero_stops_at_zero_and_a_missing_counter_is_not_created() {
    for backend in Backend::both() {
        let c = Counter::new(backend.store(), "down").unwrap();
        let before = backend.items();
        assert_eq!(c.decr(5).unwrap(), 0, "{}", backend.name());
        assert_eq!(backend.items(), before, "a decr creates nothing");
        c.incr(3).unwrap();
        assert_eq!(c.decr(u64::MAX).unwrap(), 0);
        assert_eq!(c.get().unwrap(), 0);
    }
}

#[test]
fn incr_many_across_two_stores_is_invalid_argument_for_each_and_nothing_is_written() {
    let [a, b] = Backend::both();
    let on_a = Counter::new(a.store(), "x").unwrap();
    let on_b = Counter::new(b.store(), "x").unwrap();
    // At the limit: every counter on one store.
    let same = Counter::new(a.store(), "y").unwrap();
    let ok: Vec<u64> = Counter::incr_many(&[(&on_a, 1), (&same, 2)])
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ok, [1, 2]);
    let (items_a, items_b) = (a.items(), b.items());
    let results = Counter::incr_many(&[(&on_a, 1), (&on_b, 1)]);
    assert_eq!(results.len(), 2);
    for r in results {
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    }
    assert_eq!(
        (a.items(), b.items()),
        (items_a, items_b),
        "nothing written"
    );
    assert_eq!(on_a.get().unwrap(), 1);
    assert_eq!(on_b.get().unwrap(), 0);
}

#[test]
fn a_view_counter_seeded_past_u64_max_saturates_on_the_embedded_store() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let at = ViewCounter::new(Arc::clone(&store), "at").unwrap();
    assert_eq!(at.view(|| Ok(u64::MAX - 1)).unwrap(), u64::MAX);
    let past = ViewCounter::new(store, "past").unwrap();
    assert_eq!(past.view_by(2, || Ok(u64::MAX)).unwrap(), u64::MAX);
    assert_eq!(past.get(|| Ok(0)).unwrap(), u64::MAX);
}

#[test]
fn a_view_counter_on_memcached_counts_to_2_pow_63_minus_1() {
    let backend = Backend::memcached();
    let v = ViewCounter::new(backend.store(), "high").unwrap();
    assert_eq!(v.view(|| Ok((1 << 63) - 3)).unwrap(), (1 << 63) - 2);
    assert_eq!(v.view(|| Ok(0)).unwrap(), (1 << 63) - 1);
}

#[test]
fn a_failing_loader_is_returned_and_nothing_is_cached() {
    for backend in Backend::both() {
        let v = ViewCounter::new(backend.store(), "photo").unwrap();
        let before = backend.items();
        let failing = || Err(Error::InvalidArgument("the database is down".into()));
        assert!(matches!(v.view(failing), Err(Error::InvalidArgument(_))));
        assert!(matches!(v.get(failing), Err(Error::InvalidArgument(_))));
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing cached",
            backend.name()
        );
        assert_eq!(v.view(|| Ok(7)).unwrap(), 8);
    }
}

#[test]
fn a_window_counter_takes_2_to_1000_slots_and_else_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        let (scope, clock) = backend.scope();
        for slots in [2usize, 1000] {
            let w = WindowCounter::new(&scope, &format!("w{slots}"), Duration::from_secs(1), slots)
                .unwrap();
            assert_eq!(w.incr(1).unwrap(), 1);
            // Counted for the N−1 complete slots after its own, then not.
            clock.advance(Duration::from_secs(slots as u64 - 1));
            assert_eq!(w.value().unwrap(), 1, "{}: {slots} slots", backend.name());
            clock.advance(Duration::from_secs(1));
            assert_eq!(w.value().unwrap(), 0, "{}: {slots} slots", backend.name());
        }
        let before = backend.items();
        for slots in [0usize, 1, 1001] {
            let err = WindowCounter::new(&scope, "w", Duration::from_secs(1), slots).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{slots}: {err}");
        }
        assert_eq!(backend.items(), before, "nothing written");
    }
}

/// The period-length check every time-based counter shares: 1 s works,
/// anything under it or with a fraction of a second is refused.
fn whole_seconds_at_least_one(
    backend: &Backend,
    what: &str,
    make: impl Fn(&Scope, Duration) -> mcds_core::Result<u64>,
) {
    let (scope, _) = backend.scope();
    assert_eq!(make(&scope, Duration::from_secs(1)).unwrap(), 1, "{what}");
    let before = backend.items();
    for bad in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_millis(1500),
    ] {
        let err = make(&scope, bad).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(_)),
            "{what} {bad:?}: {err}"
        );
    }
    assert_eq!(backend.items(), before, "{what}: nothing written");
}

#[test]
fn a_period_of_one_second_counts_and_a_shorter_or_fractional_one_is_invalid_argument() {
    for backend in Backend::both() {
        whole_seconds_at_least_one(&backend, "WindowCounter slot", |scope, slot| {
            WindowCounter::new(scope, "w", slot, 2)?.incr(1)
        });
        whole_seconds_at_least_one(&backend, "ShadowCounter period", |scope, period| {
            ShadowCounter::new(scope, "s", period)?.incr(1)
        });
        whole_seconds_at_least_one(&backend, "RateLimiter window", |scope, window| {
            Ok(RateLimiter::new(scope, "r", 3, window, Window::Fixed)?
                .check()?
                .count)
        });
    }
}

#[test]
fn a_rate_limit_of_one_admits_one_and_zero_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        let (scope, _) = backend.scope();
        for mode in [Window::Fixed, Window::Sliding] {
            let one = RateLimiter::new(
                &scope,
                &format!("one{mode:?}"),
                1,
                Duration::from_secs(10),
                mode,
            )
            .unwrap();
            assert!(one.check().unwrap().allowed);
            assert!(!one.check().unwrap().allowed, "{mode:?}");
            let most = RateLimiter::new(
                &scope,
                &format!("most{mode:?}"),
                u64::MAX,
                Duration::from_secs(10),
                mode,
            )
            .unwrap();
            let d = most.check().unwrap();
            assert!(d.allowed && d.remaining > 0, "{mode:?}: {d:?}");
        }
        let before = backend.items();
        let err = RateLimiter::new(&scope, "zero", 0, Duration::from_secs(10), Window::Fixed)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert_eq!(backend.items(), before, "nothing written");
    }
}

#[test]
fn a_field_name_of_1024_bytes_counts_and_one_more_byte_is_invalid_argument_and_nothing_is_written()
{
    for backend in Backend::both() {
        let map = CounterMap::new(backend.store(), "fields").unwrap();
        // 1024 bytes at the limit: two-byte characters, and spaces (each
        // escaped to 3 bytes in the registry).
        let longest = "é".repeat(MAX_FIELD_LEN / 4) + &" ".repeat(MAX_FIELD_LEN / 2);
        assert_eq!(longest.len(), MAX_FIELD_LEN);
        assert_eq!(map.incr(&longest, 5).unwrap(), 5);
        assert_eq!(map.get_all().unwrap(), [(longest.clone(), 5)]);
        let before = backend.items();
        let too_long = longest.clone() + "x";
        for err in [
            map.incr(&too_long, 1).unwrap_err(),
            map.get(&too_long).unwrap_err(),
            map.remove(&too_long).unwrap_err(),
            map.field_key(&too_long).unwrap_err(),
            map.incr("", 1).unwrap_err(),
        ] {
            assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
        assert_eq!(map.fields().unwrap(), [longest], "{}", backend.name());
    }
}

#[test]
fn an_amount_of_2_pow_56_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        let map = CounterMap::new(backend.store(), "amounts").unwrap();
        // At the limit, both ways, on a first touch and after.
        assert_eq!(map.incr("up", MAX_AMOUNT).unwrap(), MAX_AMOUNT);
        assert_eq!(map.incr("down", -MAX_AMOUNT).unwrap(), -MAX_AMOUNT);
        assert_eq!(map.incr("up", -MAX_AMOUNT).unwrap(), 0);
        let before = backend.items();
        for by in [MAX_AMOUNT + 1, -MAX_AMOUNT - 1, i64::MAX, i64::MIN] {
            for field in ["up", "new"] {
                let err = map.incr(field, by).unwrap_err();
                assert!(matches!(err, Error::InvalidArgument(_)), "{by}: {err}");
            }
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
        assert_eq!(map.get("up").unwrap(), 0);
        assert_eq!(map.fields().unwrap(), ["up", "down"]);
    }
}

/// Move `field` to `target` in steps of the largest amount.
fn walk(map: &CounterMap, field: &str, target: i64) {
    let mut v = map.get(field).unwrap();
    while v != target {
        v = map
            .incr(field, (target - v).clamp(-MAX_AMOUNT, MAX_AMOUNT))
            .unwrap();
    }
}

#[test]
fn an_increment_past_max_value_is_invalid_argument_and_is_undone() {
    for backend in Backend::both() {
        let map = CounterMap::new(backend.store(), "bounds").unwrap();
        walk(&map, "high", MAX_VALUE - 1);
        assert_eq!(map.incr("high", 1).unwrap(), MAX_VALUE);
        for by in [1, MAX_AMOUNT] {
            let err = map.incr("high", by).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
            assert_eq!(map.get("high").unwrap(), MAX_VALUE, "{}", backend.name());
        }
        assert_eq!(map.get_all().unwrap(), [("high".to_string(), MAX_VALUE)]);
    }
}

#[test]
fn a_decrement_past_min_value_stops_at_min_value() {
    for backend in Backend::both() {
        let map = CounterMap::new(backend.store(), "bounds").unwrap();
        walk(&map, "low", MIN_VALUE + 1);
        assert_eq!(map.incr("low", -1).unwrap(), MIN_VALUE);
        assert_eq!(map.incr("low", -1).unwrap(), MIN_VALUE);
        assert_eq!(map.incr("low", -MAX_AMOUNT).unwrap(), MIN_VALUE);
        assert_eq!(map.get("low").unwrap(), MIN_VALUE, "{}", backend.name());
    }
}

#[test]
fn a_scale_of_18_places_counts_and_19_is_invalid_argument() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let map = CounterMap::new(Arc::clone(&store), "fine")
        .unwrap()
        .with_scale(MAX_SCALE)
        .unwrap();
    assert_eq!(
        map.incr_decimal("f", "0.000000000000000001")
            .unwrap()
            .to_string(),
        "0.000000000000000001"
    );
    let err = CounterMap::new(store, "fine")
        .unwrap()
        .with_scale(MAX_SCALE + 1)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn a_decimal_amount_past_its_scale_or_its_bound_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        let map = CounterMap::new(backend.store(), "money")
            .unwrap()
            .with_scale(MAX_SCALE)
            .unwrap();
        // The largest amount at scale 18: 2^56 − 1 units.
        assert_eq!(
            map.incr_decimal("a", "0.072057594037927935").unwrap().units,
            MAX_AMOUNT
        );
        assert_eq!(
            map.incr_decimal("a", "-0.072057594037927935")
                .unwrap()
                .units,
            0
        );
        let before = backend.items();
        for (field, amount) in [
            ("a", "0.072057594037927936"),   // one unit past the largest amount
            ("a", "0.0000000000000000001"),  // more places than the scale
            ("new", "9.223372036854775808"), // past an i64 of units
            ("new", "1e-3"),                 // not a decimal
        ] {
            let err = map.incr_decimal(field, amount).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{amount}: {err}");
        }
        for amount in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30] {
            let err = map.incr_f64("new", amount).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{amount}: {err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
        assert_eq!(map.get("a").unwrap(), 0);
        assert_eq!(map.fields().unwrap(), ["a"]);
    }
}

/// A period of 100 years is the longest: one more second is refused by
/// `new`, before the multiples of it (slots, milliseconds, a TTL of 3
/// periods) could overflow, and nothing is written.
#[test]
fn a_period_of_100_years_counts_and_one_second_more_is_invalid_argument() {
    let memory = Arc::new(MemoryStore::new());
    let store: Arc<dyn Store> = memory.clone();
    let store_len = |_: &Arc<dyn Store>| memory.len();
    let longest = Duration::from_secs(mcds_core::MAX_PERIOD_SECS);
    let past = longest + Duration::from_secs(1);
    WindowCounter::new(Arc::clone(&store), "w", longest, 1000)
        .unwrap()
        .incr(1)
        .unwrap();
    ShadowCounter::new(Arc::clone(&store), "s", longest)
        .unwrap()
        .incr(1)
        .unwrap();
    let limiter = RateLimiter::new(Arc::clone(&store), "r", 1, longest, Window::Sliding).unwrap();
    assert!(limiter.check().unwrap().allowed);
    let before = store_len(&store);
    for huge in [past, Duration::from_secs(u64::MAX)] {
        assert!(matches!(
            WindowCounter::new(Arc::clone(&store), "w2", huge, 1000),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            ShadowCounter::new(Arc::clone(&store), "s2", huge),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            RateLimiter::new(Arc::clone(&store), "r2", 1, huge, Window::Fixed),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert_eq!(store_len(&store), before, "nothing written");
}
