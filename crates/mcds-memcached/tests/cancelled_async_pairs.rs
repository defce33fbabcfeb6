//! From an adversarial review: async text-pair writes (append, cas) and pipelines spanning a
//! pool of 3, cancelled at random points by tokio timeouts, with values
//! that look like protocol replies. Afterwards every reply must still be
//! its own caller's: logs hold each acknowledged token exactly once, no
//! token twice, no other task's bytes. Random: prints its seed
//! (`MCDS_TEST_SEED=<n>` replays it).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod support;

use support::{Rng, k, seed};

use mcds_core::{CasOutcome, Key, Op, Reply, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{ServerOptions, ServerPool};

const NOISE: &str = "\r\nSTORED\r\nmn\r\nVA 2 O3\r\nEN\r\nHD O1\r\nMN\r\n";

#[test]
fn cancelled_async_pairs_and_pipelines_never_cross_replies() {
    let seed = seed();
    let pool = ServerPool::start(3, ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .connect(pool.addrs())
            .unwrap(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let wrong = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..12)
            .map(|t| {
                let (store, wrong, cancelled, done) =
                    (store.clone(), wrong.clone(), cancelled.clone(), done.clone());
                tokio::spawn(async move {
                    let mut rng = Rng(seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let logs: Vec<Key> = (0..3).map(|i| k(&format!("rv4:log:{t}:{i}"))).collect();
                    let kv = k(&format!("rv4:kv:{t}"));
                    for log in &logs {
                        store.set(log, b"", Ttl::Never).unwrap();
                    }
                    store.set(&kv, b"init", Ttl::Never).unwrap();
                    // token -> acknowledged (true), or maybe applied (false)
                    let mut tokens: HashMap<String, bool> = HashMap::new();
                    let bad = |what: String| {
                        eprintln!("task {t}: {what}");
                        wrong.fetch_add(1, Ordering::Relaxed);
                    };
                    for round in 0..400u64 {
                        let budget = Duration::from_micros(rng.below(400));
                        let log = &logs[rng.below(3) as usize];
                        let token = format!("{t}.{round}");
                        let piece = format!("|{token}{NOISE}");
                        let value = format!("{t}:{round}{NOISE}");
                        let kind = rng.below(3);
                        let outcome = match kind {
                            0 => {
                                let op = Op::Append {
                                    key: log,
                                    value: piece.as_bytes(),
                                };
                                tokio::time::timeout(budget, store.execute_async(&op))
                                    .await
                                    .map(|r| vec![r])
                            }
                            1 => {
                                let ops = [
                                    Op::Append {
                                        key: log,
                                        value: piece.as_bytes(),
                                    },
                                    Op::Set {
                                        key: &kv,
                                        value: value.as_bytes(),
                                        ttl: Ttl::Never,
                                    },
                                    Op::Get(&kv),
                                    Op::Get(&logs[0]),
                                    Op::Get(&logs[1]),
                                    Op::Get(&logs[2]),
                                ];
                                tokio::time::timeout(budget, store.pipeline_async(&ops)).await
                            }
                            _ => {
                                let current = store.execute_async(&Op::Get(&kv)).await.unwrap();
                                let Reply::Item(Some(item)) = current else {
                                    bad(format!("kv missing: {current:?}"));
                                    continue;
                                };
                                let op = Op::Cas {
                                    key: &kv,
                                    value: value.as_bytes(),
                                    ttl: Ttl::Never,
                                    cas: item.cas,
                                };
                                tokio::time::timeout(budget, store.execute_async(&op))
                                    .await
                                    .map(|r| vec![r])
                            }
                        };
                        match outcome {
                            Err(_) => {
                                cancelled.fetch_add(1, Ordering::Relaxed);
                                if kind != 2 {
                                    tokens.insert(token.clone(), false);
                                }
                            }
                            Ok(results) => {
                                done.fetch_add(1, Ordering::Relaxed);
                                match kind {
                                    0 => match &results[0] {
                                        Ok(Reply::Applied(true)) => {
                                            tokens.insert(token.clone(), true);
                                        }
                                        other => bad(format!("append: {other:?}")),
                                    },
                                    1 => {
                                        let ok = matches!(results[0], Ok(Reply::Applied(true)))
                                            && matches!(results[1], Ok(Reply::Cas(_)))
                                            && matches!(&results[2], Ok(Reply::Item(Some(it))) if it.value == value.as_bytes())
                                            && results[3..].iter().all(|r| matches!(r, Ok(Reply::Item(Some(_)))));
                                        if ok {
                                            tokens.insert(token.clone(), true);
                                        } else {
                                            bad(format!("pipeline: {results:?}"));
                                        }
                                    }
                                    _ => match &results[0] {
                                        Ok(Reply::CasOutcome(CasOutcome::Stored(id))) => {
                                            // Nobody else writes kv: the id is the item's.
                                            match store.execute_async(&Op::Get(&kv)).await {
                                                Ok(Reply::Item(Some(it)))
                                                    if it.cas == *id && it.value == value.as_bytes() => {}
                                                other => bad(format!("cas Stored({id}), then {other:?}")),
                                            }
                                        }
                                        // A cancelled write before may have changed kv.
                                        Ok(Reply::CasOutcome(CasOutcome::Exists)) => {}
                                        other => bad(format!("cas: {other:?}")),
                                    },
                                }
                            }
                        }
                        // Check the logs (never cancelled).
                        let mut seen: HashMap<String, usize> = HashMap::new();
                        for log in &logs {
                            let Ok(Reply::Item(Some(item))) = store.execute_async(&Op::Get(log)).await else {
                                bad(format!("log {log:?} unreadable"));
                                continue;
                            };
                            let text = String::from_utf8(item.value).unwrap();
                            for part in text.split('|').filter(|p| !p.is_empty()) {
                                let Some(tok) = part.strip_suffix(NOISE) else {
                                    bad(format!("a torn piece {part:?}"));
                                    continue;
                                };
                                *seen.entry(tok.to_string()).or_default() += 1;
                            }
                        }
                        for (tok, n) in &seen {
                            match tokens.get(tok) {
                                None => bad(format!("token {tok} in a log, never appended by this task")),
                                Some(_) if *n > 1 => bad(format!("token {tok} {n} times")),
                                _ => {}
                            }
                        }
                        for (tok, acked) in &tokens {
                            if *acked && !seen.contains_key(tok) {
                                bad(format!("acknowledged token {tok} missing"));
                            }
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    println!(
        "{} ops finished, {} cancelled, {} wrong; {:?}",
        done.load(Ordering::Relaxed),
        cancelled.load(Ordering::Relaxed),
        wrong.load(Ordering::Relaxed),
        store.connection_stats()
    );
    assert_eq!(wrong.load(Ordering::Relaxed), 0, "seed {seed}");
}
