//! mcds-counter on the embedded store with a manual clock (no sleeps) and on
//! real memcached.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Clock, CountingStore, Error, ManualClock, MemoryStore, Scope, Store, Ttl, traffic,
};
use mcds_counter::{Counter, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// 1_800_000_000 is a multiple of 20, 60 and 360: periods start there.
const EPOCH_MS: u64 = 1_800_000_000_000;

fn memory() -> (Arc<dyn Store>, ManualClock, Scope) {
    let clock = ManualClock::new(EPOCH_MS);
    let store = MemoryStore::builder()
        .clock(Arc::new(clock.clone()))
        .build();
    let store: Arc<dyn Store> = Arc::new(store);
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    (store, clock, scope)
}

fn at(clock: &ManualClock, secs: f64) {
    clock.set_ms(EPOCH_MS + (secs * 1000.0).round() as u64);
}

fn threads_times(store: Arc<dyn Store>) -> u64 {
    let counter = Counter::new(store, "hits").unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..10_000 {
                    counter.incr(1).unwrap();
                }
            });
        }
    });
    counter.get().unwrap()
}

#[test]
fn eight_threads_times_10000_memory() {
    let (store, _, _) = memory();
    let total = threads_times(store);
    println!("counter, memory, 8 threads x 10000: {total}");
    assert_eq!(total, 80_000);
}

#[test]
fn eight_threads_times_10000_memcached() {
    let server = MemcachedServer::start_default();
    let total = threads_times(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
    println!("counter, memcached, 8 threads x 10000: {total}");
    assert_eq!(total, 80_000);
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let rt = |f: &dyn Fn()| traffic::measure(f).1.round_trips;
    let counter = Counter::new(Arc::clone(&store), "rt").unwrap();
    counter.get().unwrap(); // warm the connection
    assert_eq!(
        rt(&|| {
            let _ = counter.incr(1).unwrap();
        }),
        1,
        "Counter::incr, first touch"
    );
    assert_eq!(
        rt(&|| {
            let _ = counter.incr(1).unwrap();
        }),
        1,
        "Counter::incr"
    );
    assert_eq!(
        rt(&|| {
            let _ = counter.get().unwrap();
        }),
        1,
        "Counter::get"
    );
    assert_eq!(
        rt(&|| {
            let _ = counter.decr(1).unwrap();
        }),
        1,
        "Counter::decr"
    );

    let window = WindowCounter::new(Arc::clone(&store), "w", Duration::from_secs(60), 6).unwrap();
    assert_eq!(
        rt(&|| {
            let _ = window.incr(1).unwrap();
        }),
        1,
        "WindowCounter::incr"
    );
    assert_eq!(
        rt(&|| {
            let _ = window.value().unwrap();
        }),
        1,
        "WindowCounter::value"
    );

    let shadow = ShadowCounter::new(Arc::clone(&store), "s", Duration::from_secs(60)).unwrap();
    assert_eq!(
        rt(&|| {
            let _ = shadow.incr(1).unwrap();
        }),
        1,
        "ShadowCounter::incr"
    );
    assert_eq!(
        rt(&|| {
            let _ = shadow.value().unwrap();
        }),
        1,
        "ShadowCounter::value"
    );

    for mode in [Window::Fixed, Window::Sliding] {
        let limiter =
            RateLimiter::new(Arc::clone(&store), "r", 10, Duration::from_secs(60), mode).unwrap();
        let check = rt(&|| {
            let _ = limiter.check().unwrap();
        });
        assert_eq!(check, 1, "RateLimiter::check {mode:?}");
        assert_eq!(
            rt(&|| {
                let _ = limiter.peek().unwrap();
            }),
            1,
            "RateLimiter::peek {mode:?}"
        );
    }

    let many: Vec<Counter> = (0..100)
        .map(|i| Counter::new(Arc::clone(&store), &format!("many{i}")).unwrap())
        .collect();
    let batch: Vec<(&Counter, u64)> = many.iter().map(|c| (c, 3)).collect();
    let (results, t) = traffic::measure(|| Counter::incr_many(&batch));
    assert_eq!(
        (t.round_trips, t.commands),
        (1, 100),
        "Counter::incr_many over 100 counters"
    );
    assert!(results.into_iter().all(|r| r.unwrap() == 3));

    let views = ViewCounter::new(Arc::clone(&store), "v").unwrap();
    assert_eq!(
        rt(&|| {
            let _ = views.view(|| Ok(10)).unwrap();
        }),
        2,
        "ViewCounter::view on a miss"
    );
    assert_eq!(
        rt(&|| {
            let _ = views.view(|| Ok(10)).unwrap();
        }),
        1,
        "ViewCounter::view"
    );
    println!(
        "round trips on memcached: Counter::incr 1 (first touch 1), WindowCounter::value 1, \
         RateLimiter::check 1 fixed / 1 sliding, peek 1, Counter::incr_many(100) 1, ViewCounter::view 1 (2 on a miss)"
    );
}

#[test]
fn counter_basics_and_corruption() {
    let (store, _, _) = memory();
    let c = Counter::new(Arc::clone(&store), "c").unwrap();
    assert_eq!(c.get().unwrap(), 0);
    assert_eq!(c.decr(5).unwrap(), 0, "decr of a missing counter");
    assert_eq!(store.get(c.key()).unwrap(), None, "decr created nothing");
    assert_eq!(c.incr(10).unwrap(), 10);
    assert_eq!(c.decr(3).unwrap(), 7);
    assert_eq!(c.decr(30).unwrap(), 0, "floors at 0");
    c.reset().unwrap();
    assert_eq!(c.get().unwrap(), 0);
    store.set(c.key(), b"not a number", Ttl::Never).unwrap();
    assert!(matches!(c.get(), Err(Error::Corrupt { .. })));
    assert!(matches!(c.incr(1), Err(Error::NonNumeric { .. })));
}

#[test]
fn view_counter_seeds_with_add_and_loses_no_first_view() {
    let server = MemcachedServer::start_default();
    for store in [
        memory().0,
        Arc::new(MemcachedStore::connect(&server.addr()).unwrap()) as Arc<dyn Store>,
    ] {
        let views = ViewCounter::new(Arc::clone(&store), "photo").unwrap();
        let loads = std::sync::atomic::AtomicU32::new(0);
        let loader = || {
            loads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(5)); // a slow database
            Ok(1000)
        };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..100 {
                        views.view(loader).unwrap();
                    }
                });
            }
        });
        assert_eq!(
            views.get(|| Ok(0)).unwrap(),
            1800,
            "{}",
            store.backend_name()
        );
        assert!(loads.load(std::sync::atomic::Ordering::SeqCst) >= 1);
        views.invalidate().unwrap();
        assert_eq!(
            views.get(|| Ok(1234)).unwrap(),
            1234,
            "reloaded after invalidation"
        );
    }
}

#[test]
fn shadow_counter_rolls_over_exactly_and_dodges_the_one_second_trap() {
    let (_, clock, scope) = memory();
    let c = ShadowCounter::new(scope, "visitors", Duration::from_secs(10)).unwrap();
    // Period [0, 10): key 0 is read, key 1 counts. Counting starts at
    // 5.031 s: the data-structures article's example of a key created mid-second.
    at(&clock, 5.031);
    c.incr(1).unwrap();
    at(&clock, 9.999);
    c.incr(2).unwrap();
    assert_eq!(c.value().unwrap(), 0, "still counting into the shadow");
    at(&clock, 10.0);
    assert_eq!(c.value().unwrap(), 3, "roles swap exactly at 10 s");
    c.incr(100).unwrap(); // counts into key 0 now
    at(&clock, 19.999);
    assert_eq!(c.value().unwrap(), 3, "constant for the whole period");
    at(&clock, 20.0);
    assert_eq!(c.value().unwrap(), 100);
    // Key 1 (created at 5.031 with TTL 2T - 5 = 15 s) expired exactly at
    // 20 s. With the article's uncorrected TTL of 2T it would live until 25 s
    // and this increment would land on the stale 3.
    at(&clock, 20.5);
    c.incr(7).unwrap();
    at(&clock, 30.0);
    assert_eq!(c.value().unwrap(), 7, "no stale count mixed in");
    // A quiet period reads 0.
    at(&clock, 50.0);
    assert_eq!(c.value().unwrap(), 0);
}

#[test]
fn window_counter_rolls_over_exactly() {
    let (_, clock, scope) = memory();
    let online = WindowCounter::new(scope, "online", Duration::from_secs(60), 6).unwrap();
    // One event in each of the first six minutes, mid-minute and at odd
    // milliseconds.
    for minute in 0..6 {
        at(&clock, minute as f64 * 60.0 + 30.417);
        online.incr(minute + 1).unwrap();
    }
    // At 5:59.999 the current slot is minute 5: the value is minutes 0..=4.
    at(&clock, 359.999);
    assert_eq!(online.value().unwrap(), 1 + 2 + 3 + 4 + 5);
    // At 6:00 slot 0 comes round again: minute 0 leaves the window, minute
    // 5 enters it.
    at(&clock, 360.0);
    assert_eq!(online.value().unwrap(), 2 + 3 + 4 + 5 + 6);
    // Slot 0 was created at 0:30.417 with TTL N·p − 30 = 330 s: it is gone
    // exactly at 6:00, so a new event starts it from zero (with TTL N·p it
    // would live until 6:30 and the old 1 would be mixed in).
    at(&clock, 360.2);
    assert_eq!(online.incr(10).unwrap(), 10, "reused slot starts fresh");
    at(&clock, 420.0);
    assert_eq!(online.value().unwrap(), 3 + 4 + 5 + 6 + 10);
    // Much later everything has expired.
    at(&clock, 2000.0);
    assert_eq!(online.value().unwrap(), 0);
}

#[test]
fn fixed_rate_limiter_windows() {
    let (_, clock, scope) = memory();
    let limiter =
        RateLimiter::new(scope, "api", 3, Duration::from_secs(10), Window::Fixed).unwrap();
    at(&clock, 2.5);
    for remaining in [2, 1, 0] {
        let d = limiter.check().unwrap();
        assert!(d.allowed);
        assert_eq!(d.remaining, remaining);
        assert_eq!(d.retry_after, Duration::ZERO);
    }
    let peek = limiter.peek().unwrap();
    assert!(!peek.allowed, "peek: a 4th request would be denied");
    at(&clock, 7.25);
    let denied = limiter.check().unwrap();
    assert!(!denied.allowed);
    assert_eq!(denied.remaining, 0);
    assert_eq!(
        denied.retry_after,
        Duration::from_millis(2750),
        "until the window ends at 10 s"
    );
    at(&clock, 9.999);
    assert!(!limiter.check().unwrap().allowed);
    at(&clock, 10.0);
    let fresh = limiter.peek().unwrap();
    assert!(fresh.allowed && fresh.remaining == 3, "{fresh:?}");
    assert!(
        limiter.check().unwrap().allowed,
        "new window at exactly 10 s"
    );
}

#[test]
fn sliding_rate_limiter_weighs_the_previous_window() {
    let (_, clock, scope) = memory();
    let limiter =
        RateLimiter::new(scope, "api", 10, Duration::from_secs(10), Window::Sliding).unwrap();
    at(&clock, 5.0);
    for _ in 0..10 {
        assert!(limiter.check().unwrap().allowed);
    }
    assert!(!limiter.check().unwrap().allowed, "11th in the window");
    // 2.5 s into the next window the previous one (11 counted, one denied)
    // still weighs 75%: 8.25, so one more fits (9.25) and the rest wait.
    at(&clock, 12.5);
    let d = limiter.check().unwrap();
    assert!(d.allowed, "{d:?}");
    assert_eq!(d.remaining, 0, "10 - 9.25");
    let denied = limiter.check().unwrap();
    assert!(!denied.allowed, "{denied:?}");
    assert!(
        denied.retry_after > Duration::ZERO && denied.retry_after <= Duration::from_millis(7500)
    );
    // At the end of the window the previous window no longer counts.
    at(&clock, 19.999);
    assert!(limiter.peek().unwrap().allowed);
    at(&clock, 25.0);
    let d = limiter.peek().unwrap();
    assert!(d.allowed);
    assert_eq!(d.remaining, 10 - 1, "half of the 2 counted at 12.5 s");
}

#[test]
fn bad_arguments() {
    let (store, _, _) = memory();
    assert!(matches!(
        WindowCounter::new(Arc::clone(&store), "w", Duration::from_secs(60), 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ShadowCounter::new(Arc::clone(&store), "s", Duration::from_millis(1500)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        RateLimiter::new(
            Arc::clone(&store),
            "r",
            0,
            Duration::from_secs(1),
            Window::Fixed
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Counter::new(Arc::clone(&store), "a b"),
        Err(Error::InvalidKey { .. })
    ));
    assert!(matches!(
        RateLimiter::new(
            store,
            &"n".repeat(240),
            1,
            Duration::from_secs(1),
            Window::Fixed
        ),
        Err(Error::InvalidKey { .. })
    ));
}

/// The one real-TTL counter test: on memcached a shadow key is gone by the
/// time it is reused, so periods never mix. T = 4 s and reads well away from
/// boundaries, because memcached's whole-second ticks are not aligned to
/// Unix seconds.
#[test]
fn shadow_counter_on_memcached_real_ttl() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let clock = mcds_core::SystemClock;
    let t = 4u64;
    let c = ShadowCounter::new(Arc::clone(&store), "live", Duration::from_secs(t)).unwrap();
    let sleep_until = |unix_ms: u64| {
        let now = clock.now_ms();
        if unix_ms > now {
            std::thread::sleep(Duration::from_millis(unix_ms - now));
        }
    };
    let start = clock.now_secs() / t + 1;
    // Early in a period: the shadow key is created with TTL 2T, ending at
    // the boundary B = (start + 2)·T.
    sleep_until((start * t) * 1000 + 200);
    c.incr(5).unwrap();
    // 3.5 s before B (memcached may expire up to 1 s off): still readable.
    sleep_until(((start + 1) * t) * 1000 + 500);
    assert_eq!(c.value().unwrap(), 5);
    // 1.5 s after B: the key is the shadow again and must start fresh.
    sleep_until(((start + 2) * t) * 1000 + 1500);
    assert_eq!(
        c.incr(1).unwrap(),
        1,
        "the old shadow key expired before reuse"
    );
}
