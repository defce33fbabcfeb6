//! HyperLogLog's stored form: 16 segments, sparse or dense, with an append
//! log compacted by CAS. Every test compares the stored registers with a
//! local model ([`Registers`]) built from the same elements.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{Error, MemoryStore, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_sketch::HyperLogLog;
use mcds_sketch::hll::{COMPACT_AT, Registers, SEGMENT_MAGIC};
use mcds_testkit::{MemcachedServer, ServerOptions};

fn item(prefix: &str, i: u64) -> Vec<u8> {
    format!("{prefix}:{i}").into_bytes()
}

/// The largest segment item of `hll`, in bytes.
fn largest_segment(store: &dyn Store, hll: &HyperLogLog) -> usize {
    hll.keys()
        .iter()
        .filter_map(|k| store.get(k).unwrap())
        .map(|i| i.value.len())
        .max()
        .unwrap_or(0)
}

/// One writer: every add answers what the model answers (did a register
/// change?), through many compactions of every segment; the stored
/// registers equal the model's, and no log outgrows the compaction point.
fn one_writer_matches_the_model(store: Arc<dyn Store>) -> (usize, usize) {
    let hll = HyperLogLog::new(Arc::clone(&store), "model").unwrap();
    let mut model = Registers::new();
    let mut largest = 0;
    // 12 000 distinct elements (750 adds a segment: 2 compactions each),
    // each tenth added twice.
    for i in 0..12_000u64 {
        let e = item("m", i);
        assert_eq!(hll.add(&e).unwrap(), model.insert(&e), "add #{i}");
        if i % 10 == 0 {
            assert!(!hll.add(&e).unwrap(), "a second add of #{i}");
        }
        if i % 500 == 0 {
            largest = largest.max(largest_segment(&*store, &hll));
        }
    }
    assert_eq!(hll.registers().unwrap(), model);
    assert_eq!(hll.count().unwrap(), model.count());
    // A dense base (5 + 768 bytes) and a log of at most COMPACT_AT records
    // (the add that finds COMPACT_AT compacts).
    let bound = SEGMENT_MAGIC.len() + 1 + 768 + 2 * (COMPACT_AT + 1);
    assert!(
        largest <= bound,
        "a segment of {largest} bytes (bound {bound})"
    );
    (largest, bound)
}

#[test]
fn one_writer_matches_the_model_on_both_backends() {
    let (embedded, bound) = one_writer_matches_the_model(Arc::new(MemoryStore::new()));
    let server = MemcachedServer::start_default();
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (real, _) = one_writer_matches_the_model(store);
    println!(
        "hll, 13200 adds by one writer: every answer equals the model's; largest segment {embedded} bytes (embedded), {real} (memcached), bound {bound}"
    );
}

/// A small sketch is small (sparse segments), a large one dense.
#[test]
fn sparse_while_small_then_dense() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let hll = HyperLogLog::new(Arc::clone(&store), "sizes").unwrap();
    hll.add("a").unwrap();
    let sizes: Vec<usize> = hll
        .keys()
        .iter()
        .filter_map(|k| store.get(k).unwrap())
        .map(|i| i.value.len())
        .collect();
    assert_eq!(sizes, [9], "one sparse segment of one register");
    let mut buffer = hll.buffer();
    for i in 0..200_000 {
        buffer.add(item("d", i));
    }
    buffer.flush().unwrap();
    for k in hll.keys() {
        let v = store.get(k).unwrap().unwrap().value;
        assert_eq!(v.len(), 4 + 1 + 768, "dense");
        assert_eq!(v[4], b'D');
    }
    let n = hll.count().unwrap();
    assert!((196_000..=204_000).contains(&n), "{n}");
}

/// Many writers on memcached, a pool, and async tasks: nothing lost
/// through compactions that race appends.
#[test]
fn concurrent_adders_through_compactions_lose_nothing() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "racing").unwrap();
    let threads = 8u64;
    let per = 1_500u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let hll = &hll;
            s.spawn(move || {
                for i in 0..per {
                    hll.add(item(&format!("t{t}"), i)).unwrap();
                }
            });
        }
    });
    let mut model = Registers::new();
    for t in 0..threads {
        for i in 0..per {
            model.insert(&item(&format!("t{t}"), i));
        }
    }
    assert_eq!(hll.registers().unwrap(), model, "threads lost a register");
    let largest = largest_segment(&*store, &hll);

    // 64 async tasks on a pool of 3, with add_many and flushes mixed in.
    let pool = mcds_testkit::ServerPool::start(3, ServerOptions::default());
    let pooled: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&pooled), "racing-async").unwrap();
    let rt = mcds_testkit::runtime();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for t in 0..64u64 {
            let hll = hll.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..150 {
                    let e = item(&format!("a{t}"), i);
                    match i % 50 {
                        0 => {
                            hll.add_many_async(&[e]).await.unwrap();
                        }
                        1 => {
                            let mut b = hll.buffer();
                            b.add(e);
                            b.flush_async().await.unwrap();
                        }
                        _ => {
                            hll.add_async(e).await.unwrap();
                        }
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    let mut model = Registers::new();
    for t in 0..64u64 {
        for i in 0..150 {
            model.insert(&item(&format!("a{t}"), i));
        }
    }
    assert_eq!(hll.registers().unwrap(), model, "tasks lost a register");
    println!(
        "hll: 8 threads x {per} adds (memcached) and 64 tasks x 150 (pool of 3): registers equal the model; largest segment after the threads {largest} bytes"
    );
}

/// `-C`: a sketch cannot compact, so its first write is refused (as every
/// CAS update is), and nothing is half-written.
#[test]
fn a_server_without_cas_refuses_hll_writes() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "nocas").unwrap();
    let add = hll.add("a");
    assert!(matches!(add, Err(Error::Unsupported { .. })), "{add:?}");
    let many = hll.add_many(&["a", "b"]);
    assert!(matches!(many, Err(Error::Unsupported { .. })), "{many:?}");
    assert_eq!(hll.count().unwrap(), 0);
    println!("-C: HyperLogLog::add gave {add:?}");
}

/// With a TTL, every add touches all 16 segments: a segment written first
/// outlives its own TTL while adds continue, and all expire together.
/// Real expiry (memcached's clock ticks are not aligned to Unix seconds,
/// so the waits leave a second of slack either side).
#[test]
fn a_ttl_expires_the_segments_together() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "ttl")
        .unwrap()
        .with_ttl(Ttl::secs(4));
    let first: Vec<Vec<u8>> = (0..200).map(|i| item("early", i)).collect();
    for e in &first {
        hll.add(e).unwrap();
    }
    let early = hll
        .keys()
        .iter()
        .filter(|k| store.get(k).unwrap().is_some())
        .count();
    assert_eq!(early, 16, "200 elements reach every segment");
    std::thread::sleep(Duration::from_millis(2500));
    hll.add("late").unwrap(); // one segment written, all touched
    std::thread::sleep(Duration::from_millis(2500));
    // 5 s after the early writes (past their own 4 s), 2.5 s after the touch.
    let alive = hll
        .keys()
        .iter()
        .filter(|k| store.get(k).unwrap().is_some())
        .count();
    assert_eq!(alive, 16, "the touch kept every segment");
    let mut model = Registers::new();
    for e in &first {
        model.insert(e);
    }
    model.insert(b"late");
    assert_eq!(hll.registers().unwrap(), model);
    std::thread::sleep(Duration::from_millis(3500));
    // 6 s after the touch.
    assert_eq!(hll.count().unwrap(), 0, "all expired together");
    println!(
        "hll with a 4 s TTL: 16 segments alive 5 s after their first write (touched at 2.5 s), all gone at 8.5 s"
    );
}

/// kill -9 and restart under 4 writer threads, each calling `write(hll,
/// thread, round)` in a loop (the elements it wrote, or `None` if it
/// failed): the elements of every write that started after the restart
/// and succeeded are all in the sketch (a compaction or CAS write that read
/// before the restart never overwrites the new items: CAS ids restart at
/// 1). How many there were.
fn kept_after_a_restart(
    name: &str,
    write: impl Fn(&HyperLogLog, u64, u64) -> Option<Vec<Vec<u8>>> + Sync,
) -> usize {
    let mut server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), name).unwrap();
    let stop = AtomicBool::new(false);
    let restarted: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);
    let kept: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let (hll, stop, restarted, write) = (&hll, &stop, &restarted, &write);
                s.spawn(move || {
                    let mut after = Vec::new();
                    let mut round = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let wrote = write(hll, t, round);
                        round += 1;
                        if let Some(elements) = wrote
                            && restarted.lock().unwrap().is_some_and(|r| started > r)
                        {
                            after.extend(elements);
                        }
                    }
                    after
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(700));
        server.restart();
        *restarted.lock().unwrap() = Some(Instant::now());
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let stored = hll.registers().unwrap();
    let mut model = Registers::new();
    for e in kept.iter().flatten() {
        model.insert(e);
    }
    let mut union = stored.clone();
    assert!(
        !union.merge(&model),
        "an element written after the restart was lost"
    );
    let n: usize = kept.iter().map(Vec::len).sum();
    assert!(n > 1000, "only {n} elements written after the restart");
    n
}

#[test]
fn adds_after_a_restart_are_kept() {
    let n = kept_after_a_restart("restart", |hll, t, i| {
        let e = item(&format!("r{t}"), i);
        hll.add(&e).ok().map(|_| vec![e])
    });
    println!("hll, kill -9 + restart under 4 writers: all {n} elements added after it are kept");
}

/// The same through `add_many` and buffer flushes (CAS writes of whole
/// segments). From the review of the segmented layout.
#[test]
fn flushes_after_a_restart_are_kept() {
    let n = kept_after_a_restart("rflush", |hll, t, round| {
        let batch: Vec<Vec<u8>> = (0..40).map(|i| item(&format!("w{t}r{round}"), i)).collect();
        let ok = if round % 2 == 0 {
            hll.add_many(&batch).is_ok()
        } else {
            let mut b = hll.buffer();
            for e in &batch {
                b.add(e);
            }
            b.flush().is_ok()
        };
        ok.then_some(batch)
    });
    println!(
        "hll, kill -9 + restart under 4 flushing threads: all {n} elements flushed after it are kept"
    );
}

/// On a pool, a sketch's 16 segments live on one server (so `count` is one
/// round trip to one server, and a TTL's touches stay there): a TTL sketch
/// keeps working while another server of the pool is paused (SIGSTOP).
#[test]
fn a_sketch_lives_on_one_server_of_a_pool() {
    let pool = mcds_testkit::ServerPool::start(3, ServerOptions::default());
    let probe = MemcachedStore::connect(&pool.servers_arg()).unwrap();
    let mut homes = std::collections::BTreeSet::new();
    for n in 0..30 {
        let hll = HyperLogLog::new(
            Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap()) as Arc<dyn Store>,
            &format!("placed{n}"),
        )
        .unwrap();
        let servers: std::collections::BTreeSet<usize> =
            hll.keys().iter().map(|k| probe.server_for(k)).collect();
        assert_eq!(servers.len(), 1, "placed{n}: segments on {servers:?}");
        homes.extend(servers);
    }
    assert_eq!(homes.len(), 3, "30 sketches spread over the pool");
    // A TTL sketch on server 0 while server 1 is paused.
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(500))
            .connect(pool.addrs())
            .unwrap(),
    );
    let name = (0..)
        .map(|n| format!("home0-{n}"))
        .find(|name| {
            let hll = HyperLogLog::new(Arc::clone(&store), name).unwrap();
            probe.server_for(&hll.keys()[0]) == 0
        })
        .unwrap();
    let hll = HyperLogLog::new(Arc::clone(&store), &name)
        .unwrap()
        .with_ttl(Ttl::secs(60));
    let mut model = Registers::new();
    // A pool's client reads every server's pool record once before it
    // works (see mcds_memcached::pool): one op while all are up.
    hll.registers().unwrap();
    pool.servers[1].pause();
    let started = Instant::now();
    for i in 0..50 {
        let e = item("p", i);
        assert_eq!(hll.add(&e).unwrap(), model.insert(&e));
    }
    assert!(hll.add_many(&[b"q".to_vec()]).unwrap());
    model.insert(b"q");
    let took = started.elapsed();
    pool.servers[1].resume();
    assert_eq!(hll.registers().unwrap(), model);
    println!(
        "hll on a pool of 3: 30 sketches, each on one server (all 3 used); 51 adds with a TTL while another server was paused took {took:?}"
    );
}
