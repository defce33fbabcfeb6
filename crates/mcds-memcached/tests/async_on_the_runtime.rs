//! Async callers inside a tokio runtime drive the shared connections on the
//! runtime itself (the `tokio` feature, `mux/native.rs`): no helper thread
//! is started, any runtime flavor works, a store outlives the runtimes that
//! used it, cancelled callers never take others' replies with them, and
//! `drive_on_runtime(false)` and other executors keep the helper path.
//! Random parts print their seed (`MCDS_TEST_SEED=<n>` replays it).
#![cfg(feature = "tokio")]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

mod support;

use support::{Rng, k, seed};

use mcds_core::{Error, Key, Op, Reply, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

/// How many of the store's connections started a helper thread.
fn helper_threads(store: &MemcachedStore) -> usize {
    store.connection_stats().helper_threads
}

/// A store of one shared connection to the memcached at `addr` (and one
/// async one): every caller's request goes out on the same connection.
fn one_lane(addr: &str) -> Arc<MemcachedStore> {
    one_lane_with(addr, Duration::from_secs(1))
}

/// [`one_lane`] with an I/O timeout of `io_timeout`.
fn one_lane_with(addr: &str, io_timeout: Duration) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(io_timeout)
            .connect([addr])
            .unwrap(),
    )
}

/// `incr_or_init(key, 1, 1)`, async: one more, counting from nothing.
async fn bump(store: &MemcachedStore, key: &Key) -> mcds_core::Result<u64> {
    let op = Op::IncrOrInit {
        key,
        delta: 1,
        initial: 1,
        ttl: Ttl::Never,
    };
    store.execute_async(&op).await?.value()
}

/// `incr(key, by)`, async.
async fn add(store: &MemcachedStore, key: &Key, by: u64) -> mcds_core::Result<Option<u64>> {
    store
        .execute_async(&Op::Incr { key, delta: by })
        .await?
        .counter()
}

fn open(server: &MemcachedServer, on_runtime: bool) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .drive_on_runtime(on_runtime)
            .connect([server.addr()])
            .unwrap(),
    )
}

/// `n` increments of `key` from `tasks` tasks on `rt`; the final value.
fn count(rt: &tokio::runtime::Runtime, store: &Arc<MemcachedStore>, key: &Key, tasks: u64) -> u64 {
    rt.block_on(async {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let (store, key) = (store.clone(), key.clone());
                tokio::spawn(async move {
                    for _ in 0..50 {
                        bump(&store, &key).await.unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        add(store, key, 0).await.unwrap().unwrap()
    })
}

#[test]
fn a_multi_thread_runtime_drives_its_own_calls_with_no_helper_thread() {
    let server = MemcachedServer::start_default();
    let store = open(&server, true);
    let rt = support::runtime();
    let key = k("native:mt");
    assert_eq!(count(&rt, &store, &key, 1), 50);
    assert_eq!(
        helper_threads(&store),
        0,
        "an async call started a helper thread"
    );
    // More tasks than async lanes: the others queue on the shared lanes,
    // batched there by their helper threads.
    assert_eq!(count(&rt, &store, &key, 16), 50 + 16 * 50);
}

#[test]
fn a_current_thread_runtime_keeps_the_helper_thread() {
    // Its tasks run only inside its `block_on`: a driver's task there
    // could hold a connection other callers need while it does not run.
    let server = MemcachedServer::start_default();
    let store = open(&server, true);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = k("native:ct");
    assert_eq!(count(&rt, &store, &key, 8), 8 * 50);
    assert!(helper_threads(&store) >= 1);
}

#[test]
fn a_store_outlives_the_runtimes_that_drove_it() {
    // Each runtime registers the connection with its own reactor; the one
    // before it has shut down (or is another runtime altogether).
    let server = MemcachedServer::start_default();
    let store = open(&server, true);
    let key = k("native:runtimes");
    let mut expected = 0;
    for round in 0..6 {
        let rt = if round % 2 == 0 {
            support::runtime()
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        };
        expected += 4 * 50;
        assert_eq!(count(&rt, &store, &key, 4), expected, "round {round}");
        drop(rt);
        // Blocking calls between runtimes use the same connections.
        assert_eq!(store.incr(&key, 0).unwrap(), Some(expected));
    }
    // Two runtimes at once, both live, on one store.
    let (a, b) = (support::runtime(), support::runtime());
    std::thread::scope(|s| {
        s.spawn(|| count(&a, &store, &key, 4));
        s.spawn(|| count(&b, &store, &key, 4));
    });
    assert_eq!(store.incr(&key, 0).unwrap(), Some(expected + 2 * 4 * 50));
}

#[test]
fn the_helper_path_stays_for_drive_on_runtime_false_and_other_executors() {
    let server = MemcachedServer::start_default();
    let store = open(&server, false);
    let rt = support::runtime();
    let key = k("native:off");
    assert_eq!(count(&rt, &store, &key, 4), 200);
    assert!(
        helper_threads(&store) >= 1,
        "drive_on_runtime(false) used no helper"
    );
    // No runtime at all: a plain executor polls the future, and the
    // default store takes the helper path.
    let other = open(&server, true);
    assert_eq!(mcds_core::block_on(bump(&other, &key)).unwrap(), 201);
}

#[test]
fn blocking_calls_inside_tasks_never_wait_behind_a_drivers_task() {
    // Every worker thread of the runtime held by a blocking call made
    // inside a task (an anti-pattern, but a common one) while other tasks
    // drive connections: the blocking calls use connections of their own,
    // so nothing waits for a task that cannot run.
    let server = MemcachedServer::start_default();
    let store = open(&server, true);
    let rt = support::runtime();
    let key = k("native:blocking-inside");
    let done = rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                let (store, key) = (store.clone(), key.clone());
                tokio::spawn(async move {
                    for _ in 0..100 {
                        if t % 2 == 0 {
                            store.incr_or_init(&key, 1, 1, Ttl::Never).unwrap();
                        } else {
                            bump(&store, &key).await.unwrap();
                        }
                    }
                })
            })
            .collect();
        tokio::time::timeout(Duration::from_secs(20), async {
            for task in tasks {
                task.await.unwrap();
            }
        })
        .await
    });
    assert!(done.is_ok(), "blocking calls inside tasks hung");
    assert_eq!(store.incr(&key, 0).unwrap(), Some(800));
}

#[test]
fn blocking_threads_and_tasks_share_connections_and_count_exactly() {
    let server = MemcachedServer::start_default();
    let store = one_lane(&server.addr());
    let rt = support::runtime();
    let key = k("native:mixed");
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..300 {
                    store.incr_or_init(&key, 1, 1, Ttl::Never).unwrap();
                }
            });
        }
        s.spawn(|| count(&rt, &store, &key, 6));
    });
    assert_eq!(store.incr(&key, 0).unwrap(), Some(3 * 300 + 6 * 50));
    // A `stats` listing (what retention reads) through the async path.
    let retention = rt.block_on(store.retention_async(&key));
    assert!(retention.is_ok(), "{retention:?}");
}

#[test]
fn cancelled_callers_never_take_other_callers_replies_with_them() {
    // 24 tasks on one connection, each adding its own amounts to a counter
    // of its own and reading values tagged with its name; a third of the
    // calls are cancelled by timeouts of 0 to 300 µs, mid-write or
    // mid-read. Every completed call's answer must be its own; a counter
    // ends between its acknowledged sum and that plus the cancelled adds.
    let seed = seed();
    let server = MemcachedServer::start_default();
    let store = one_lane(&server.addr());
    let rt = support::runtime();
    let wrong = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicUsize::new(0));
    let sums: Arc<Vec<(AtomicI64, AtomicI64)>> = Arc::new(
        (0..24)
            .map(|_| (AtomicI64::new(0), AtomicI64::new(0)))
            .collect(),
    );
    rt.block_on(async {
        let tasks: Vec<_> = (0..24u64)
            .map(|t| {
                let (store, wrong, cancelled, sums) = (
                    store.clone(),
                    wrong.clone(),
                    cancelled.clone(),
                    sums.clone(),
                );
                tokio::spawn(async move {
                    let mut rng = Rng(seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let counter = k(&format!("native:cancel:{t}"));
                    let tagged = k(&format!("native:tag:{t}"));
                    let value =
                        format!("task {t}: \r\nVA 2 O1\r\nMN\r\n").repeat(1 + t as usize * 40);
                    let set = |key, value| Op::Set {
                        key,
                        value,
                        ttl: Ttl::Never,
                    };
                    store
                        .execute_async(&set(&tagged, value.as_bytes()))
                        .await
                        .unwrap();
                    store.execute_async(&set(&counter, b"0")).await.unwrap();
                    for _ in 0..300 {
                        let cancel = rng.below(3) == 0;
                        let budget = if cancel {
                            Duration::from_micros(rng.below(300))
                        } else {
                            Duration::from_secs(5)
                        };
                        if rng.below(2) == 0 {
                            let by = 1 + rng.below(9);
                            let call = add(&store, &counter, by);
                            match tokio::time::timeout(budget, call).await {
                                Ok(Ok(Some(_))) => {
                                    sums[t as usize].0.fetch_add(by as i64, Ordering::Relaxed);
                                }
                                Ok(Err(Error::Ambiguous { .. })) | Err(_) => {
                                    cancelled.fetch_add(1, Ordering::Relaxed);
                                    sums[t as usize].1.fetch_add(by as i64, Ordering::Relaxed);
                                }
                                other => {
                                    eprintln!("task {t}: incr gave {other:?}");
                                    wrong.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        } else {
                            let ops = [Op::Get(&tagged), Op::Get(&counter)];
                            let call = store.pipeline_async(&ops);
                            if let Ok(replies) = tokio::time::timeout(budget, call).await {
                                match replies.into_iter().next() {
                                    Some(Ok(Reply::Item(Some(item))))
                                        if item.value == value.as_bytes() => {}
                                    other => {
                                        eprintln!("task {t}: read gave {other:?}");
                                        wrong.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                            } else {
                                cancelled.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(wrong.load(Ordering::Relaxed), 0, "seed {seed}");
    assert!(
        cancelled.load(Ordering::Relaxed) > 0,
        "nothing was cancelled (seed {seed})"
    );
    for t in 0..24 {
        let counter = k(&format!("native:cancel:{t}"));
        let value = store.incr(&counter, 0).unwrap().unwrap() as i64;
        let (acked, maybe) = (&sums[t].0, &sums[t].1);
        let (acked, maybe) = (acked.load(Ordering::Relaxed), maybe.load(Ordering::Relaxed));
        assert!(
            (acked..=acked + maybe).contains(&value),
            "counter {t}: {value}, acknowledged {acked}, cancelled {maybe} (seed {seed})"
        );
    }
    // The lane is usable afterwards, from both sides.
    let key = k("native:after");
    assert_eq!(count(&rt, &store, &key, 4), 200);
    assert_eq!(store.incr(&key, 1).unwrap(), Some(201));
}

#[test]
fn a_killed_server_fails_async_calls_and_they_recover_after_a_restart() {
    let mut server = MemcachedServer::start_default();
    let store = open(&server, true);
    let rt = support::runtime();
    let key = k("native:kill");
    assert_eq!(count(&rt, &store, &key, 4), 200);
    server.kill();
    let failed = rt.block_on(bump(&store, &key));
    assert!(failed.is_err(), "{failed:?}");
    server.restart();
    // (The store's backoff may refuse a moment longer.)
    let mut recovered = None;
    for _ in 0..200 {
        if let Ok(v) = rt.block_on(bump(&store, &key)) {
            recovered = Some(v);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(recovered, Some(1), "a restarted server starts empty");
}

#[test]
fn a_frozen_server_times_async_calls_out_on_the_runtimes_timer() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(200))
            .connect([server.addr()])
            .unwrap(),
    );
    let rt = support::runtime();
    let key = k("native:frozen");
    let set = Op::Set {
        key: &key,
        value: b"1",
        ttl: Ttl::Never,
    };
    rt.block_on(store.execute_async(&set)).unwrap();
    server.pause();
    let started = std::time::Instant::now();
    let r = rt.block_on(store.execute_async(&Op::Get(&key)));
    let took = started.elapsed();
    server.resume();
    assert!(
        matches!(r, Err(Error::Timeout { .. }) | Err(Error::Io { .. })),
        "{r:?}"
    );
    assert!(took < Duration::from_millis(200 + 150), "took {took:?}");
    let item = rt
        .block_on(store.execute_async(&Op::Get(&key)))
        .unwrap()
        .item();
    assert_eq!(item.unwrap().map(|i| i.value), Some(b"1".to_vec()));
}

#[test]
fn a_pipeline_waiting_on_a_frozen_server_holds_up_no_other_servers_callers() {
    // From an adversarial review: a pipeline across two servers, one of
    // them frozen, reads its tickets in turn; the healthy server's lane
    // must not wait for that turn (a single `get` there took 450 ms when
    // the pipeline drove it on the runtime).
    let frozen = MemcachedServer::start_default();
    let healthy = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_millis(500))
            .connect([frozen.addr(), healthy.addr()])
            .unwrap(),
    );
    let rt = support::runtime();
    let keys: Vec<Key> = (0..2000).map(|i| k(&format!("hol:{i}"))).collect();
    let (on_frozen, on_healthy): (Vec<&Key>, Vec<&Key>) =
        keys.iter().partition(|key| store.server_for(key) == 0);
    rt.block_on(async {
        for key in &keys {
            let value = key.as_bytes().repeat(12);
            let set = Op::Set {
                key,
                value: &value,
                ttl: Ttl::Never,
            };
            store.execute_async(&set).await.unwrap();
        }
    });
    frozen.pause();
    let single = rt.block_on(async {
        // The frozen server's keys first: the pipeline reads its tickets
        // in server order.
        let owned: Vec<Key> = on_frozen
            .iter()
            .take(20)
            .chain(on_healthy.iter())
            .map(|key| (*key).clone())
            .collect();
        let store_p = store.clone();
        let pipeline = tokio::spawn(async move {
            let ops: Vec<Op<'_>> = owned.iter().map(Op::Get).collect();
            store_p.pipeline_async(&ops).await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = std::time::Instant::now();
        let got = store.execute_async(&Op::Get(on_healthy[0])).await;
        let took = started.elapsed();
        let replies = pipeline.await.unwrap();
        assert!(
            replies.iter().any(|r| r.is_err()),
            "the frozen server answered"
        );
        // Its own share on the healthy server read whole: the frozen
        // server's dial (of a shared connection: only async ones were used
        // before) did not spend the round's time (a second review's
        // finding: most of the healthy server's reads failed).
        let healthy_share = &replies[replies.len() - on_healthy.len()..];
        for (key, reply) in on_healthy.iter().zip(healthy_share) {
            let item = reply.as_ref().map(|r| r.clone().item());
            assert!(
                matches!(&item, Ok(Ok(Some(i))) if i.value == key.as_bytes().repeat(12)),
                "{key:?}: {item:?}"
            );
        }
        (got, took)
    });
    frozen.resume();
    let (got, took) = single;
    let item = got.unwrap().item().unwrap().unwrap();
    assert_eq!(item.value, on_healthy[0].as_bytes().repeat(12));
    assert!(
        took < Duration::from_millis(150),
        "a healthy server's get took {took:?}"
    );
}

/// A future of `op` polled exactly once (so that it is mid-read, driving
/// its connection): `None` when its first poll finished.
fn polled_once<'s>(
    rt: &tokio::runtime::Runtime,
    store: &'s MemcachedStore,
    op: &'s Op<'s>,
) -> Option<mcds_core::BoxFuture<'s, mcds_core::Result<Reply>>> {
    let mut future = store.execute_async(op);
    let pending = rt.block_on(async {
        tokio::select! {
            biased;
            _ = &mut future => false,
            _ = std::future::ready(()) => true,
        }
    });
    pending.then_some(future)
}

/// One connection a server, a 200 ms I/O timeout, and a 1 MB value under
/// `big` and a small one under `small`.
fn one_lane_with_a_big_value(
    server: &MemcachedServer,
    rt: &tokio::runtime::Runtime,
    big: &Key,
    small: &Key,
) -> Arc<MemcachedStore> {
    let store = one_lane_with(&server.addr(), Duration::from_millis(200));
    let value = vec![b'A'; 1_000_000];
    for (key, value) in [(big, &value[..]), (small, b"B")] {
        let set = Op::Set {
            key,
            value,
            ttl: Ttl::Never,
        };
        rt.block_on(store.execute_async(&set)).unwrap();
    }
    store
}

#[test]
fn a_future_polled_once_and_kept_holds_up_no_other_caller() {
    // From an adversarial review: a future polled once drives its
    // connection; kept unpolled, every caller queued behind it waited
    // (over 3 s with a 200 ms I/O timeout). Nobody queues behind a driver.
    let server = MemcachedServer::start_default();
    let rt = support::runtime();
    let (big, small) = (k("futurelock:big"), k("futurelock:small"));
    let store = one_lane_with_a_big_value(&server, &rt, &big, &small);
    let get_big = Op::Get(&big);
    let kept = (0..100).find_map(|_| polled_once(&rt, &store, &get_big));
    let kept = kept.expect("every first poll finished the read");
    let started = std::time::Instant::now();
    let other = rt.block_on(async {
        let (store, small) = (store.clone(), small.clone());
        let get = tokio::spawn(async move { store.execute_async(&Op::Get(&small)).await });
        tokio::time::timeout(Duration::from_secs(3), get).await
    });
    let took = started.elapsed();
    let item = other.expect("another caller waited behind the kept future");
    assert_eq!(item.unwrap().unwrap().item().unwrap().unwrap().value, b"B");
    assert!(took < Duration::from_millis(150), "took {took:?}");
    // And the kept one still finishes when polled again.
    let value = rt.block_on(kept).unwrap().item().unwrap().unwrap().value;
    assert_eq!(value.len(), 1_000_000);
}

#[test]
fn a_driver_dropped_inside_a_current_thread_runtime_leaves_no_lane_waiting() {
    // From an adversarial review: its rescue task was spawned on the
    // current-thread runtime, which ran it only in its next `block_on`.
    let server = MemcachedServer::start_default();
    let rt = support::runtime();
    let idle = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (big, small) = (k("dropped:big"), k("dropped:small"));
    let store = one_lane_with_a_big_value(&server, &rt, &big, &small);
    let get_big = Op::Get(&big);
    let kept = (0..100).find_map(|_| polled_once(&rt, &store, &get_big));
    let kept = kept.expect("every first poll finished the read");
    idle.block_on(async move { drop(kept) });
    for _ in 0..3 {
        let get = Op::Get(&small);
        let got = rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(3), store.execute_async(&get)).await
        });
        let got = got.expect("a get waited behind a rescue parked on an idle runtime");
        assert_eq!(got.unwrap().item().unwrap().unwrap().value, b"B");
    }
    // The big value still reads whole.
    let value = rt
        .block_on(store.execute_async(&get_big))
        .unwrap()
        .item()
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(value.len(), 1_000_000);
    drop(idle);
}
