//! `mcds demo`: a tour of every structure on the embedded store.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcds_core::{Clock, CountingStore, ManualClock, MemoryStore, Scope, Store};
use mcds_counter::{Counter, CounterMap, RateLimiter, ShadowCounter, Window, WindowCounter};
use mcds_eventlog::EventLog;
use mcds_lock::Lock;
use mcds_set::{Set, Table};
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};
use mcds_timeseries::{Resolution, TimeSeries};

fn title(text: &str) {
    println!("\n== {text}");
}

/// Run the tour; it cannot fail on the embedded store, and reports (rather
/// than panics on) anything unexpected.
pub fn run() {
    if let Err(e) = tour() {
        eprintln!("mcds: demo failed: {e}");
    }
}

fn tour() -> mcds_core::Result<()> {
    // A manual clock, so the time-based parts run instantly.
    let clock = ManualClock::starting_now();
    let counting = Arc::new(CountingStore::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    ));
    let store: Arc<dyn Store> = counting.clone();
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    println!("mcds demo: every structure on the embedded store (no server), 4 threads each");

    title("Counter: 4 threads x 2500 increments");
    let hits = Counter::new(Arc::clone(&store), "page-hits")?;
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| (0..2500).try_for_each(|_| hits.incr(1).map(drop)));
        }
    });
    println!(
        "   page-hits = {} (one atomic incr_or_init each: nothing lost)",
        hits.get()?
    );

    title("Lock with fencing tokens: 4 workers take turns");
    let lock = Lock::new(&scope, "nightly-report", Duration::from_secs(30))?.with_fencing(true);
    let order = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for worker in 1..=4 {
            let (lock, order) = (&lock, &order);
            s.spawn(move || -> mcds_core::Result<()> {
                let guard = lock.acquire(Duration::from_secs(10))?;
                let token = guard.fencing_token().unwrap_or(0);
                if let Ok(mut order) = order.lock() {
                    order.push((worker, token));
                }
                guard.release().map(drop)
            });
        }
    });
    for (worker, token) in order.lock().map(|o| o.clone()).unwrap_or_default() {
        println!("   worker {worker} held the lock with fencing token {token}");
    }
    let slow = Lock::new(&scope, "lease", Duration::from_secs(5))?.with_fencing(true);
    let first = slow
        .try_acquire()?
        .ok_or_else(|| mcds_core::Error::InvalidArgument("lock busy".into()))?;
    clock.advance(Duration::from_secs(7));
    let second = slow.try_acquire()?;
    println!(
        "   a holder paused past its 5 s lease: the next one got the lock: {}; the late release reports {:?}",
        second.is_some(),
        first.release()?
    );
    if let Some(second) = second {
        println!(
            "   ...and the new holder's lock was untouched: its release reports {:?}",
            second.release()?
        );
    }

    title("Rate limiter: 5 requests per 10 s window");
    let limiter = RateLimiter::new(
        &scope,
        "api:user42",
        5,
        Duration::from_secs(10),
        Window::Fixed,
    )?;
    let mut line = String::from("  ");
    for _ in 0..7 {
        let d = limiter.check()?;
        line += &if d.allowed {
            format!(" allowed({} left)", d.remaining)
        } else {
            format!(" denied(retry in {} ms)", d.retry_after.as_millis())
        };
    }
    println!("{line}");

    title("Window counter: users online in the last 5 minutes (6 one-minute slots)");
    let online = WindowCounter::new(&scope, "online", Duration::from_secs(60), 6)?;
    for minute in 0..8 {
        let arrivals = [3, 5, 2, 8, 1, 4, 0, 6][minute];
        for _ in 0..arrivals {
            online.incr(1)?;
        }
        println!(
            "   minute {minute}: {arrivals} arrived, online (last 5 full minutes) = {}",
            online.value()?
        );
        clock.advance(Duration::from_secs(60));
    }
    let visitors = ShadowCounter::new(&scope, "visitors", Duration::from_secs(60))?;
    visitors.incr(17)?;
    clock.advance(Duration::from_secs(60));
    println!(
        "   shadow counter: 17 visitors counted last period, shown now: {}",
        visitors.value()?
    );

    title("Set: 3 threads add and remove tags");
    let tags = Set::new(Arc::clone(&store), "post:7:tags")?;
    std::thread::scope(|s| {
        for (t, batch) in [
            ["rust", "cache"],
            ["memcached", "cas"],
            ["lock-free", "cache"],
        ]
        .iter()
        .enumerate()
        {
            let tags = &tags;
            s.spawn(move || -> mcds_core::Result<()> {
                tags.add(batch)?;
                if t == 1 {
                    tags.remove(&["cas"])?;
                }
                Ok(())
            });
        }
    });
    println!("   members (insertion order): {:?}", tags.members_utf8()?);

    title("Event log: 3 threads write, one fetch reads them back in time order");
    let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
    let seq = AtomicU64::new(0);
    for round in 0..2 {
        std::thread::scope(|s| {
            for t in 0..3 {
                let (log, seq) = (&log, &seq);
                s.spawn(move || {
                    log.put(
                        format!("worker {t} event #{}", seq.fetch_add(1, Ordering::SeqCst))
                            .as_bytes(),
                    )
                });
            }
        });
        clock.advance(Duration::from_millis(1500 * (round + 1)));
    }
    let start = clock.now_ms().saturating_sub(60_000);
    for e in log.fetch(start, u64::MAX)? {
        println!(
            "   +{:>5} ms  {}",
            e.at_ms - start,
            String::from_utf8_lossy(&e.payload)
        );
    }

    title("Table: O(1) membership with values");
    let users = Table::new(Arc::clone(&store), "users")?;
    users.set("ann", b"admin")?;
    users.set("bob", b"reader")?;
    users.delete("bob")?;
    println!(
        "   has(ann) = {}, has(bob) = {}, entries = {:?}",
        users.has("ann")?,
        users.has("bob")?,
        users
            .entries()?
            .into_iter()
            .map(|(k, v)| format!(
                "{}={}",
                String::from_utf8_lossy(&k),
                String::from_utf8_lossy(&v)
            ))
            .collect::<Vec<_>>()
    );

    title("Sketches: HyperLogLog, Bloom filter, activity bitmap");
    let pages = HyperLogLog::new(Arc::clone(&store), "pages-seen")?;
    let mut buffer = pages.buffer();
    for i in 0..100_000u32 {
        buffer.add(format!("/page/{}", i % 25_000));
    }
    buffer.flush()?;
    println!(
        "   100000 views of 25000 pages: PFCOUNT ~ {} (12 KiB, one CAS to flush)",
        pages.count()?
    );
    let names = BloomFilter::new(Arc::clone(&store), "usernames", 10_000, 0.01)?;
    names.add_many(&["ann", "bob"])?;
    println!(
        "   bloom: ann taken {}, zoe taken {} (k = {}, no false negatives)",
        names.contains("ann")?,
        names.contains("zoe")?,
        names.shape().k
    );
    let day = Duration::from_secs(86_400);
    let logins = ActivityBitmap::new(Arc::clone(&store), "ann-logins", 0, day)?;
    for d in [0, 1, 4, 5, 6] {
        logins.set(d)?;
    }
    println!(
        "   ann active on {} of the first 7 days (SETBIT/BITCOUNT)",
        logins.count_bits(0, 6)?
    );

    title("Time series: 4 threads record 1000 latencies, kept per second and per minute");
    let minute = Duration::from_secs(60);
    let latency = TimeSeries::new(
        &scope,
        "latency-ms",
        &[
            Resolution::new(Duration::from_secs(1), Duration::from_secs(3600))?,
            Resolution::new(minute, Duration::from_secs(86_400))?,
        ],
    )?;
    let t0 = clock.now_ms();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let latency = &latency;
            s.spawn(move || (0..250).try_for_each(|i| latency.record(t0, (t * 250 + i) % 100 + 1)));
        }
    });
    if let Some(st) = latency.aggregate(t0, t0, minute)? {
        println!(
            "   this minute: count {}, sum {}, min {}, max {}, avg {:.1} (one batch per record)",
            st.count,
            st.sum,
            st.min,
            st.max,
            st.avg()
        );
    }

    title("Counter map: HINCRBY and HINCRBYFLOAT without float drift");
    let cart = CounterMap::new(&scope, "cart-42")?.with_scale(2)?;
    std::thread::scope(|s| {
        for _ in 0..4 {
            let cart = &cart;
            s.spawn(move || {
                (0..25).try_for_each(|_| {
                    cart.incr_decimal("total", "0.10")?;
                    cart.incr_decimal("items", "1").map(drop)
                })
            });
        }
    });
    let fields: Vec<String> = cart
        .get_all_decimal()?
        .into_iter()
        .map(|(field, value)| format!("{field}={value}"))
        .collect();
    println!("   4 threads x 25 x 0.10: {}", fields.join(", "));

    title("Leaderboard (ZINCRBY) and a scalable Bloom filter");
    let board = Leaderboard::new(&scope, "top-pages", 100)?;
    board.incr_many(&[("/home", 5), ("/docs", 3), ("/blog", 7), ("/home", 4)])?;
    let top: Vec<String> = board
        .top(3)?
        .into_iter()
        .map(|e| format!("{} {}", String::from_utf8_lossy(&e.member), e.count))
        .collect();
    println!("   top 3: {}", top.join(", "));
    let seen = ScalableBloomFilter::new(&scope, "seen-ids", 100, 0.01)?;
    for i in 0..1000 {
        seen.add(format!("id{i}"))?;
    }
    println!(
        "   1000 ids into a filter sized for 100: {} layers, id7 seen {}",
        seen.layers()?,
        seen.contains("id7")?
    );

    title("Round trips, as memcached would see them");
    for (op, s) in counting.all() {
        println!(
            "   {op:<13} calls {:>6}  round trips {:>6}",
            s.calls, s.round_trips
        );
    }
    println!("\nOn real memcached: mcds --servers 127.0.0.1:11211 counter incr hits");
    Ok(())
}
