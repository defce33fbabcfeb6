//! A tour of the embedded store: memcached semantics in process, no server.
//!
//!     cargo run -p mcds-core --example embedded

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{CountingStore, Key, ManualClock, MemoryStore, Store, Stored, Ttl, Updated};

fn main() -> Result<(), mcds_core::Error> {
    let clock = ManualClock::starting_now();
    let store = Arc::new(CountingStore::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    ));

    // 1. A hit counter bumped by 8 threads: incr_or_init never loses one.
    let hits = Key::new("page:/index:hits")?;
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (store, hits) = (&store, &hits);
            s.spawn(move || {
                for _ in 0..10_000 {
                    store
                        .incr_or_init(hits, 1, 1, Ttl::secs(3600))
                        .expect("incr");
                }
            });
        }
    });
    let total = store.get(&hits)?.and_then(|i| i.counter()).unwrap_or(0);
    println!("1. 8 threads x 10000 increments -> counter = {total}");

    // 2. Claim a job exactly once: `add` stores only if the key is absent.
    let job = Key::new("job:42:owner")?;
    let winners: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|worker| {
                let (store, job) = (&store, &job);
                s.spawn(move || {
                    let claimed = store
                        .add(job, format!("worker-{worker}").as_bytes(), Ttl::secs(30))
                        .expect("add");
                    (claimed != Stored::NotStored).then_some(worker)
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .collect()
    });
    println!("2. 4 workers race for job 42 -> winners: {winners:?}");

    // 3. Read-modify-write by CAS: append a tag to a list without a lock.
    let tags = Key::new("post:7:tags")?;
    for tag in ["rust", "memcached", "cas"] {
        let mut add_tag = |cur: Option<&[u8]>| {
            let mut v = cur.unwrap_or_default().to_vec();
            if !v.is_empty() {
                v.push(b',');
            }
            v.extend_from_slice(tag.as_bytes());
            Some(v)
        };
        if let Updated::Stored { value, .. } = store.update(&tags, Ttl::Never, 10, &mut add_tag)? {
            println!("3. tags now {:?}", String::from_utf8_lossy(&value));
        }
    }

    // 4. Expiry follows the clock (a manual one here: no sleeping).
    let session = Key::new("session:abc")?;
    store.set(&session, b"user=ann", Ttl::secs(60))?;
    clock.advance(Duration::from_secs(59));
    println!(
        "4. after 59 s the session is {}",
        present(&*store, &session)?
    );
    clock.advance(Duration::from_secs(1));
    println!(
        "   after 60 s the session is {}",
        present(&*store, &session)?
    );

    // 5. Round trips, as memcached would see them.
    println!("5. operations and round trips:");
    for (op, s) in store.all() {
        println!(
            "   {op:<13} calls {:>6}  round trips {:>6}",
            s.calls, s.round_trips
        );
    }
    Ok(())
}

fn present(store: &dyn Store, key: &Key) -> Result<&'static str, mcds_core::Error> {
    Ok(if store.get(key)?.is_some() {
        "present"
    } else {
        "gone"
    })
}
