//! The async twins of `WindowCounter`, `ShadowCounter`, `RateLimiter`,
//! `ViewCounter` and `CounterMap`, on the embedded store and on real
//! memcached. Every scenario runs in `tokio::spawn`ed tasks on a
//! multi-thread runtime (so the futures are `Send`), 16 tasks at once where
//! a structure promises exact counts under concurrency. Time is a
//! `ManualClock`: no sleeps.

use mcds_testkit::runtime;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mcds_core::{ManualClock, MemoryStore, Scope, Store};
use mcds_counter::{
    CounterMap, Decimal, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// 1_800_000_000 is a multiple of 10, 20 and 60: periods start there.
const EPOCH_MS: u64 = 1_800_000_000_000;
const TASKS: usize = 16;

/// Run `scenario` as a spawned task on a fresh 2-worker runtime.
fn run(scenario: impl Future<Output = ()> + Send + 'static) {
    runtime().block_on(async { tokio::spawn(scenario).await.unwrap() });
}

/// Spawn `TASKS` tasks of `task(t)` and wait for all; their outputs.
async fn together<T, F>(task: impl Fn(usize) -> F) -> Vec<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let handles: Vec<_> = (0..TASKS).map(|t| tokio::spawn(task(t))).collect();
    let mut out = Vec::with_capacity(TASKS);
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// The embedded store, following a manual clock, and a scope reading it.
fn memory() -> (Scope, ManualClock) {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    (Scope::new(store).with_clock(Arc::new(clock.clone())), clock)
}

/// Real memcached, with the structures' time on a manual clock (keys are
/// named by period number, and every TTL here outlasts the test).
fn memcached(server: &MemcachedServer) -> (Scope, ManualClock) {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    (Scope::new(store).with_clock(Arc::new(clock.clone())), clock)
}

fn at(clock: &ManualClock, secs: f64) {
    clock.set_ms(EPOCH_MS + (secs * 1000.0).round() as u64);
}

// ---------------------------------------------------------------- window

const WINDOW_INCRS: u64 = 100;

/// 16 tasks × 100 `incr_async` into one slot: the window shows exactly
/// their sum once the slot is complete, and drops it when it leaves.
async fn window_scenario(scope: Scope, clock: ManualClock) {
    let online = WindowCounter::new(&scope, "async-online", Duration::from_secs(60), 6).unwrap();
    at(&clock, 30.5);
    together(|t| {
        let online = online.clone();
        async move {
            for _ in 0..WINDOW_INCRS {
                online.incr_async(1 + t as u64 % 3).await.unwrap();
            }
        }
    })
    .await;
    let total: u64 = (0..TASKS as u64).map(|t| (1 + t % 3) * WINDOW_INCRS).sum();
    assert_eq!(
        online.value_async().await.unwrap(),
        0,
        "the slot is filling"
    );
    at(&clock, 60.0);
    assert_eq!(online.value_async().await.unwrap(), total);
    assert_eq!(online.incr_async(7).await.unwrap(), 7);
    at(&clock, 120.0);
    assert_eq!(online.value_async().await.unwrap(), total + 7);
    at(&clock, 360.0);
    assert_eq!(
        online.value_async().await.unwrap(),
        7,
        "minute 0 left the window"
    );
    at(&clock, 420.0);
    assert_eq!(online.value_async().await.unwrap(), 0);
}

#[test]
fn window_counter_async_exact_memory() {
    let (scope, clock) = memory();
    run(window_scenario(scope, clock));
}

#[test]
fn window_counter_async_exact_memcached() {
    let server = MemcachedServer::start_default();
    let (scope, clock) = memcached(&server);
    run(window_scenario(scope, clock));
}

// ---------------------------------------------------------------- shadow

/// 16 tasks × 50 `incr_async` in one period: the next period shows exactly
/// their sum, the one after only what was counted during it.
async fn shadow_scenario(scope: Scope, clock: ManualClock) {
    let visitors = ShadowCounter::new(&scope, "async-visitors", Duration::from_secs(10)).unwrap();
    at(&clock, 2.25);
    together(|_| {
        let visitors = visitors.clone();
        async move {
            for _ in 0..50 {
                visitors.incr_async(1).await.unwrap();
            }
        }
    })
    .await;
    assert_eq!(
        visitors.value_async().await.unwrap(),
        0,
        "counting into the shadow"
    );
    at(&clock, 10.0);
    assert_eq!(visitors.value_async().await.unwrap(), TASKS as u64 * 50);
    assert_eq!(visitors.incr_async(3).await.unwrap(), 3);
    at(&clock, 19.999);
    assert_eq!(visitors.value_async().await.unwrap(), TASKS as u64 * 50);
    at(&clock, 20.0);
    assert_eq!(visitors.value_async().await.unwrap(), 3);
}

#[test]
fn shadow_counter_async_exact_memory() {
    let (scope, clock) = memory();
    run(shadow_scenario(scope, clock));
}

#[test]
fn shadow_counter_async_exact_memcached() {
    let server = MemcachedServer::start_default();
    let (scope, clock) = memcached(&server);
    run(shadow_scenario(scope, clock));
}

// ---------------------------------------------------------------- rate

/// Fixed: 16 tasks × 5 `check_async` against a limit of 50 let exactly 50
/// through. Sliding: 16 checks against a limit of 10 let exactly 10
/// through, and half a window later the previous count weighs half.
async fn rate_scenario(scope: Scope, clock: ManualClock) {
    let fixed = RateLimiter::new(
        &scope,
        "async-fixed",
        50,
        Duration::from_secs(10),
        Window::Fixed,
    )
    .unwrap();
    at(&clock, 1.0);
    let allowed: usize = together(|_| {
        let fixed = fixed.clone();
        async move {
            let mut allowed = 0;
            for _ in 0..5 {
                allowed += usize::from(fixed.check_async().await.unwrap().allowed);
            }
            allowed
        }
    })
    .await
    .into_iter()
    .sum();
    assert_eq!(allowed, 50, "exactly the limit is let through");
    let peek = fixed.peek_async().await.unwrap();
    assert!(!peek.allowed);
    assert_eq!((peek.count, peek.remaining), (TASKS as u64 * 5, 0));
    assert_eq!(peek.retry_after, Duration::from_secs(9));
    at(&clock, 10.0);
    let peek = fixed.peek_async().await.unwrap();
    assert!(peek.allowed);
    assert_eq!((peek.count, peek.remaining), (0, 50));

    let sliding = RateLimiter::new(
        &scope,
        "async-sliding",
        10,
        Duration::from_secs(10),
        Window::Sliding,
    )
    .unwrap();
    at(&clock, 20.0);
    let allowed = together(|_| {
        let sliding = sliding.clone();
        async move { sliding.check_async().await.unwrap().allowed }
    })
    .await;
    assert_eq!(allowed.iter().filter(|a| **a).count(), 10);
    // Half a window later the previous window's 16 weigh 8.
    at(&clock, 35.0);
    let peek = sliding.peek_async().await.unwrap();
    assert!(peek.allowed);
    assert_eq!((peek.count, peek.remaining), (8, 2));
    let first = sliding.check_async().await.unwrap();
    assert!(first.allowed);
    assert_eq!((first.count, first.remaining), (9, 1));
    assert!(sliding.check_async().await.unwrap().allowed);
    let denied = sliding.check_async().await.unwrap();
    assert!(!denied.allowed);
    assert!(denied.retry_after > Duration::ZERO);
}

#[test]
fn rate_limiter_async_exact_memory() {
    let (scope, clock) = memory();
    run(rate_scenario(scope, clock));
}

#[test]
fn rate_limiter_async_exact_memcached() {
    let server = MemcachedServer::start_default();
    let (scope, clock) = memcached(&server);
    run(rate_scenario(scope, clock));
}

// ---------------------------------------------------------------- views

/// 16 tasks × 10 `view_async` with an async loader racing the first views:
/// none is lost, and the loader's total is counted once.
async fn view_scenario(scope: Scope) {
    let views = ViewCounter::new(&scope, "async-photo").unwrap();
    let loads = Arc::new(AtomicU32::new(0));
    together(|_| {
        let (views, loads) = (views.clone(), Arc::clone(&loads));
        async move {
            for _ in 0..10 {
                let loads = &loads;
                views
                    .view_async(|| async move {
                        loads.fetch_add(1, Ordering::SeqCst);
                        tokio::task::yield_now().await; // a slow database
                        Ok(1000)
                    })
                    .await
                    .unwrap();
            }
        }
    })
    .await;
    assert!(loads.load(Ordering::SeqCst) >= 1);
    let total = 1000 + TASKS as u64 * 10;
    assert_eq!(views.get_async(|| async { Ok(0) }).await.unwrap(), total);
    assert_eq!(
        views
            .view_by_async(5, || async { panic!("no load on a hit") })
            .await
            .unwrap(),
        total + 5
    );
    views.invalidate_async().await.unwrap();
    assert_eq!(
        views.get_async(|| async { Ok(1234) }).await.unwrap(),
        1234,
        "reloaded after invalidation, seeding the cache"
    );
    assert_eq!(
        views
            .view_async(|| async { panic!("seeded by get") })
            .await
            .unwrap(),
        1235
    );
    views.invalidate_async().await.unwrap();
    assert_eq!(
        views.view_by_async(3, || async { Ok(40) }).await.unwrap(),
        43,
        "a miss seeds the loaded total plus the views"
    );
}

#[test]
fn view_counter_async_exact_memory() {
    run(view_scenario(memory().0));
}

#[test]
fn view_counter_async_exact_memcached() {
    let server = MemcachedServer::start_default();
    run(view_scenario(memcached(&server).0));
}

// ---------------------------------------------------------------- map

const FIELDS: usize = 5;
const MAP_OPS: i64 = 60;

/// Task `t`'s `i`th amount: both signs, so `incr` and `decr` race.
fn amount(t: usize, i: i64) -> i64 {
    (i * 7 + t as i64) % 11 - 4
}

/// 16 tasks increment 5 shared fields by both signs (first touches
/// racing), and two fixed-point fields by 0.1 (exact decimal and f64):
/// every total is exact. Then every read, listing and removal twin.
async fn map_scenario(scope: Scope) {
    let map = CounterMap::new(&scope, "async-shared").unwrap();
    let money = CounterMap::new(&scope, "async-money")
        .unwrap()
        .with_scale(1)
        .unwrap();
    assert!(map.is_empty_async().await.unwrap());
    together(|t| {
        let (map, money) = (map.clone(), money.clone());
        async move {
            for i in 0..MAP_OPS {
                let field = format!("f{}", (t + i as usize) % FIELDS);
                map.incr_async(&field, amount(t, i)).await.unwrap();
                if i % 4 == 0 {
                    money.incr_decimal_async("ann", "0.1").await.unwrap();
                    money.incr_f64_async("bob", -0.1).await.unwrap();
                }
            }
        }
    })
    .await;
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for t in 0..TASKS {
        for i in 0..MAP_OPS {
            *expected
                .entry(format!("f{}", (t + i as usize) % FIELDS))
                .or_default() += amount(t, i);
        }
    }
    let all: BTreeMap<String, i64> = map.get_all_async().await.unwrap().into_iter().collect();
    assert_eq!(all, expected, "every increment counted once");
    for (field, total) in &expected {
        assert_eq!(map.get_async(field).await.unwrap(), *total);
    }
    let mut fields = map.fields_async().await.unwrap();
    fields.sort();
    assert_eq!(fields, expected.keys().cloned().collect::<Vec<_>>());
    assert_eq!(map.len_async().await.unwrap(), FIELDS);
    assert!(!map.is_empty_async().await.unwrap());
    assert_eq!(map.get_async("never").await.unwrap(), 0);

    let tenths = (TASKS as i64) * MAP_OPS.div_euclid(4);
    assert_eq!(
        money.get_decimal_async("ann").await.unwrap(),
        Decimal {
            units: tenths,
            scale: 1
        }
    );
    let decimals: BTreeMap<String, Decimal> = money
        .get_all_decimal_async()
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(decimals["ann"].to_string(), format!("{}.0", tenths / 10));
    assert_eq!(decimals["bob"].to_string(), format!("-{}.0", tenths / 10));

    // Removal, racing: each field is removed by exactly one of the tasks
    // that try.
    let removed: usize = together(|t| {
        let map = map.clone();
        async move { usize::from(map.remove_async(&format!("f{}", t % FIELDS)).await.unwrap()) }
    })
    .await
    .into_iter()
    .sum();
    assert_eq!(removed, FIELDS);
    assert!(map.is_empty_async().await.unwrap());
    assert!(map.get_all_async().await.unwrap().is_empty());
    assert!(!map.remove_async("f0").await.unwrap());
    assert_eq!(money.len_async().await.unwrap(), 2);
}

#[test]
fn counter_map_async_exact_memory() {
    run(map_scenario(memory().0));
}

#[test]
fn counter_map_async_exact_memcached() {
    let server = MemcachedServer::start_default();
    run(map_scenario(memcached(&server).0));
}
