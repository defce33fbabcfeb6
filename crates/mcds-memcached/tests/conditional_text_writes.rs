//! add/replace/cas/append/prepend as text commands, each followed by a
//! tagged `mg`, against real memcached 1.6.18 (cases an adversarial review
//! found).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcds_core::{CasOutcome, Error, Key, Op, Reply, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions, ServerPool};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// Many threads run CAS-increment loops (get + cas) and unique-token appends
/// on a few shared keys through the shared, auto-pipelined connections.
/// Every Stored must be real (final counter == successes), every CAS id a
/// Stored reports must be distinct per key, and every append reported true
/// must be in the value exactly once (and no other token).
#[test]
fn many_threads_pairs_never_cross_replies() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(2)
            .connect([server.addr()])
            .unwrap(),
    );
    let counters: Vec<Key> = (0..3).map(|i| k(&format!("rv:ctr:{i}"))).collect();
    let logs: Vec<Key> = (0..3).map(|i| k(&format!("rv:log:{i}"))).collect();
    for c in &counters {
        store.set(c, b"0", Ttl::Never).unwrap();
    }
    for l in &logs {
        store.set(l, b"", Ttl::Never).unwrap();
    }
    let successes = Arc::new(AtomicU64::new(0));
    let threads = 8;
    let per = 250;
    let mut handles = Vec::new();
    for t in 0..threads {
        let store = Arc::clone(&store);
        let counters = counters.clone();
        let logs = logs.clone();
        let successes = Arc::clone(&successes);
        handles.push(std::thread::spawn(move || {
            let mut ids: Vec<(usize, u64, Vec<u8>)> = Vec::new();
            let mut appended: Vec<(usize, String, bool)> = Vec::new();
            let mut errors = 0;
            for i in 0..per {
                let c = (t + i) % counters.len();
                let item = store.get(&counters[c]).unwrap().unwrap();
                let n: u64 = std::str::from_utf8(&item.value).unwrap().parse().unwrap();
                let next = (n + 1).to_string().into_bytes();
                match store.cas(&counters[c], &next, Ttl::Never, item.cas) {
                    Ok(CasOutcome::Stored(id)) => {
                        successes.fetch_add(1, Ordering::SeqCst);
                        ids.push((c, id, next));
                    }
                    Ok(_) => {}
                    Err(e) => {
                        errors += 1;
                        eprintln!("cas error: {e}");
                    }
                }
                let l = (t * 7 + i) % logs.len();
                let token = format!("<{t}.{i}>");
                match store.append(&logs[l], token.as_bytes()) {
                    Ok(ok) => appended.push((l, token.clone(), ok)),
                    Err(e) => {
                        errors += 1;
                        eprintln!("append error: {e}");
                    }
                }
                // A pipeline with pairs and quiet ops on the same keys.
                let other = k(&format!("rv:p:{t}:{i}"));
                let ops = [
                    Op::Get(&counters[c]),
                    Op::Add {
                        key: &other,
                        value: token.as_bytes(),
                        ttl: Ttl::secs(60),
                    },
                    Op::Delete(&other),
                    Op::Add {
                        key: &other,
                        value: b"second",
                        ttl: Ttl::secs(60),
                    },
                    Op::Get(&other),
                ];
                let r = store.pipeline(&ops);
                let ok = matches!(&r[1], Ok(Reply::Stored(Stored::Stored(_))))
                    && matches!(&r[2], Ok(Reply::Applied(true)))
                    && matches!(&r[3], Ok(Reply::Stored(Stored::Stored(_))))
                    && matches!(&r[4], Ok(Reply::Item(Some(it))) if it.value == b"second");
                assert!(ok, "pipeline replies crossed: {r:?}");
            }
            (ids, appended, errors)
        }));
    }
    let mut ids_per_key: HashMap<usize, HashMap<u64, Vec<u8>>> = HashMap::new();
    let mut appended_all = Vec::new();
    let mut errors = 0;
    for h in handles {
        let (ids, appended, e) = h.join().unwrap();
        errors += e;
        for (c, id, v) in ids {
            let prev = ids_per_key.entry(c).or_default().insert(id, v.clone());
            assert!(
                prev.is_none(),
                "two Stored replies with the same CAS id {id} on key {c}: {prev:?} and {v:?}"
            );
        }
        appended_all.extend(appended);
    }
    let total: u64 = counters
        .iter()
        .map(|c| {
            std::str::from_utf8(&store.get(c).unwrap().unwrap().value)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    println!(
        "cas successes {} final sum {total}, appends {} , errors {errors}",
        successes.load(Ordering::SeqCst),
        appended_all.len()
    );
    assert_eq!(total, successes.load(Ordering::SeqCst));
    let finals: Vec<String> = logs
        .iter()
        .map(|l| String::from_utf8(store.get(l).unwrap().unwrap().value).unwrap())
        .collect();
    for (l, token, ok) in &appended_all {
        let n = finals[*l].matches(token.as_str()).count();
        assert_eq!(
            n,
            usize::from(*ok),
            "token {token} in log {l}: {n} times, append said {ok}"
        );
    }
    let tokens: usize = finals.iter().map(|f| f.matches('<').count()).sum();
    assert_eq!(tokens, appended_all.iter().filter(|a| a.2).count());
    assert_eq!(errors, 0);
}

/// The same from many tokio tasks (async callers never drive: the lanes'
/// helper threads do), add/replace/cas on shared keys with unique values:
/// the CAS id of a Stored add/replace/cas must be the id of the value this
/// caller wrote whenever the item still holds it.
#[test]
fn tokio_tasks_pairs_get_their_own_ids() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mismatches = Arc::new(AtomicU64::new(0));
    let checked = Arc::new(AtomicU64::new(0));
    rt.block_on(async {
        let mut tasks = Vec::new();
        for t in 0..64 {
            let store = Arc::clone(&store);
            let mismatches = Arc::clone(&mismatches);
            let checked = Arc::clone(&checked);
            tasks.push(tokio::spawn(async move {
                for i in 0..60 {
                    let key = k(&format!("rv:t:{}", (t + i) % 5));
                    let mine = format!("v{t}.{i}").into_bytes();
                    let op = match i % 3 {
                        0 => Op::Add {
                            key: &key,
                            value: &mine,
                            ttl: Ttl::secs(60),
                        },
                        1 => Op::Replace {
                            key: &key,
                            value: &mine,
                            ttl: Ttl::secs(60),
                        },
                        _ => {
                            let cur = store.execute_async(&Op::Get(&key)).await.unwrap();
                            let cas = match cur {
                                Reply::Item(Some(it)) => it.cas,
                                _ => 12345,
                            };
                            Op::Cas {
                                key: &key,
                                value: &mine,
                                ttl: Ttl::secs(60),
                                cas,
                            }
                        }
                    };
                    let r = store.execute_async(&op).await.unwrap();
                    let id = match r {
                        Reply::Stored(Stored::Stored(id)) => id,
                        Reply::CasOutcome(CasOutcome::Stored(id)) => id,
                        _ => continue,
                    };
                    // If the item still has our id, it must hold our value;
                    // if it holds our value with another id, someone wrote
                    // the same bytes (never here: values are unique).
                    if let Reply::Item(Some(it)) =
                        store.execute_async(&Op::Get(&key)).await.unwrap()
                    {
                        checked.fetch_add(1, Ordering::SeqCst);
                        if (it.cas == id) != (it.value == mine) {
                            mismatches.fetch_add(1, Ordering::SeqCst);
                            eprintln!(
                                "task {t}: Stored({id}) for {:?}, item now {:?} at {}",
                                String::from_utf8_lossy(&mine),
                                String::from_utf8_lossy(&it.value),
                                it.cas
                            );
                        }
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    println!(
        "checked {} Stored ids, {} mismatches",
        checked.load(Ordering::SeqCst),
        mismatches.load(Ordering::SeqCst)
    );
    assert_eq!(mismatches.load(Ordering::SeqCst), 0);
}

/// A pool whose servers have `-I 1k` while the client believes 1 MiB:
/// pipelines mixing pairs (too large and not), quiet gets/deletes and sets.
/// Each op must get its own result and the server state must agree.
#[test]
fn pipeline_pairs_with_oversized_values_on_a_pool() {
    let pool = ServerPool::start(
        2,
        ServerOptions {
            extra_args: vec!["-o".into(), "slab_chunk_max=512".into()],
            ..ServerOptions::default().item_size("1k")
        },
    );
    let store = MemcachedStore::connect(&pool.servers_arg()).unwrap();
    let big = vec![b'B'; 4000];
    let bad = b"x\r\nSTORED\r\nmn\r\nVA 2 O3\r\nhi\r\n".to_vec();
    let mut checked = 0;
    for round in 0..40 {
        let keys: Vec<Key> = (0..8).map(|i| k(&format!("rv:pool:{round}:{i}"))).collect();
        for key in &keys[..4] {
            store.set(key, b"orig", Ttl::Never).unwrap();
        }
        let cas0 = store.get(&keys[2]).unwrap().unwrap().cas;
        let ops = [
            Op::Add {
                key: &keys[0],
                value: &big,
                ttl: Ttl::Never,
            }, // too large
            Op::Get(&keys[5]), // quiet miss
            Op::Replace {
                key: &keys[1],
                value: &big,
                ttl: Ttl::Never,
            }, // too large
            Op::Delete(&keys[6]), // quiet? NF
            Op::Cas {
                key: &keys[2],
                value: &bad,
                ttl: Ttl::Never,
                cas: cas0,
            }, // ok
            Op::Append {
                key: &keys[3],
                value: &big,
            }, // too large
            Op::Add {
                key: &keys[4],
                value: &bad,
                ttl: Ttl::Never,
            }, // ok
            Op::Prepend {
                key: &keys[3],
                value: b"P",
            }, // ok
            Op::Get(&keys[4]),
            Op::Set {
                key: &keys[7],
                value: &big,
                ttl: Ttl::Never,
            }, // too large
            Op::Get(&keys[0]),
            Op::Append {
                key: &keys[5],
                value: b"z",
            }, // NS: missing
        ];
        let r = store.pipeline(&ops);
        let too_large = |x: &mcds_core::Result<Reply>| {
            matches!(
                x,
                Err(Error::ValueTooLarge { .. })
                    | Err(Error::Server { .. })
                    | Err(Error::OutOfMemory { .. })
            )
        };
        let expect = [
            too_large(&r[0]),
            matches!(r[1], Ok(Reply::Item(None))),
            too_large(&r[2]),
            matches!(r[3], Ok(Reply::Applied(false))),
            matches!(r[4], Ok(Reply::CasOutcome(CasOutcome::Stored(_)))),
            too_large(&r[5]),
            matches!(r[6], Ok(Reply::Stored(Stored::Stored(_)))),
            matches!(r[7], Ok(Reply::Applied(true))),
            matches!(&r[8], Ok(Reply::Item(Some(it))) if it.value == bad),
            too_large(&r[9]),
            matches!(&r[10], Ok(Reply::Item(Some(it))) if it.value == b"orig"),
            matches!(r[11], Ok(Reply::Applied(false))),
        ];
        for (i, ok) in expect.iter().enumerate() {
            assert!(
                ok,
                "round {round} op {i} {:?}: {:?}\nall: {r:?}",
                ops[i], r[i]
            );
        }
        // The ids the pairs reported are the items' own.
        if let Ok(Reply::CasOutcome(CasOutcome::Stored(id))) = r[4] {
            assert_eq!(store.get(&keys[2]).unwrap().unwrap().cas, id);
        }
        if let Ok(Reply::Stored(Stored::Stored(id))) = r[6] {
            assert_eq!(store.get(&keys[4]).unwrap().unwrap().cas, id);
        }
        assert_eq!(store.get(&keys[0]).unwrap().unwrap().value, b"orig");
        assert_eq!(store.get(&keys[1]).unwrap().unwrap().value, b"orig");
        assert_eq!(store.get(&keys[3]).unwrap().unwrap().value, b"Porig");
        assert_eq!(store.get(&keys[2]).unwrap().unwrap().value, bad);
        checked += 1;
    }
    println!("{checked} rounds of 12 ops, every op its own result");
}

/// SIGSTOP/SIGCONT while threads append unique tokens and add unique keys
/// with a short io timeout: a write reported applied must be there exactly
/// once; one reported failed but not Ambiguous must not be there at all.
#[test]
fn pauses_never_misreport_pairs() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .io_timeout(std::time::Duration::from_millis(150))
            .connect([server.addr()])
            .unwrap(),
    );
    let log = k("rv:pause:log");
    store.set(&log, b"", Ttl::Never).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut handles = Vec::new();
    for t in 0..4 {
        let store = Arc::clone(&store);
        let log = log.clone();
        let stop = Arc::clone(&stop);
        handles.push(std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let token = format!("<{t}.{i}>");
                let r = store.append(&log, token.as_bytes());
                let add_key = k(&format!("rv:pause:add:{t}:{i}"));
                let a = store.add(&add_key, token.as_bytes(), Ttl::secs(300));
                out.push((
                    token,
                    r.map_err(|e| matches!(e, Error::Ambiguous { .. })),
                    add_key,
                    a.map(|s| matches!(s, Stored::Stored(_)))
                        .map_err(|e| matches!(e, Error::Ambiguous { .. })),
                ));
                i += 1;
            }
            out
        }));
    }
    for _ in 0..6 {
        std::thread::sleep(std::time::Duration::from_millis(120));
        server.pause();
        std::thread::sleep(std::time::Duration::from_millis(400));
        server.resume();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    let all: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let value = String::from_utf8(store.get(&log).unwrap().unwrap().value).unwrap();
    // How many times each token is in the log, counted in one pass (a
    // search of the whole log per token took most of a minute in a debug
    // build), and every add's key read in one batch.
    let mut in_log: HashMap<&str, usize> = HashMap::new();
    for token in value.split_inclusive('>') {
        *in_log.entry(token).or_default() += 1;
    }
    let add_keys: Vec<Key> = all.iter().map(|(_, _, key, _)| key.clone()).collect();
    let added = store.get_multi(&add_keys).unwrap();
    let (mut ok, mut amb, mut failed, mut add_amb) = (0, 0, 0, 0);
    for ((token, r, add_key, a), present) in all.iter().zip(added) {
        let n = in_log.get(token.as_str()).copied().unwrap_or(0);
        match r {
            Ok(true) => {
                ok += 1;
                assert_eq!(n, 1, "append {token} reported applied, present {n} times");
            }
            Ok(false) => panic!("the log exists"),
            Err(true) => {
                amb += 1;
                assert!(n <= 1, "{token} present {n} times");
            }
            Err(false) => {
                failed += 1;
                assert_eq!(
                    n, 0,
                    "append {token} reported failed (not ambiguous) but present"
                );
            }
        }
        let present = present.map(|it| it.value);
        match a {
            Ok(true) => assert_eq!(present.as_deref(), Some(token.as_bytes())),
            Ok(false) => panic!("fresh key"),
            Err(true) => add_amb += 1,
            Err(false) => assert_eq!(present, None, "add {add_key:?} reported failed but present"),
        }
    }
    println!(
        "appends: {ok} applied, {amb} ambiguous, {failed} failed; adds ambiguous {add_amb}; total {}",
        all.len()
    );
}

/// A proxy to a real memcached that adds an unknown flag to the pair's
/// `mg` for keys starting `rv:inject` (so the real server answers the `mg`
/// with an error line after it STORED the text write), passing all else
/// through. memcached 1.6.18 itself answers an `mg` with an error line on
/// a refcount overflow (`SERVER_ERROR refcount overflow during fetch`);
/// this stands in for that.
fn injecting_proxy(upstream: String) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let mut server = std::net::TcpStream::connect(&upstream).unwrap();
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                loop {
                    let n = match s2.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if c2.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                loop {
                    let n = match client.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let text = buf[..n].to_vec();
                    let mut out = Vec::new();
                    let mut rest = &text[..];
                    let needle = b"\r\nmg rv:inject";
                    while let Some(p) = rest.windows(needle.len()).position(|w| w == needle) {
                        // Up to the end of that mg line, then the bad flag.
                        let start = p + 2;
                        let eol = start + rest[start..].iter().position(|&b| b == b'\r').unwrap();
                        out.extend_from_slice(&rest[..eol]);
                        out.extend_from_slice(b" !");
                        rest = &rest[eol..];
                    }
                    out.extend_from_slice(rest);
                    if server.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// A pair whose text write was STORED and whose `mg` got an error line:
/// the write was applied, so it must be reported applied or Ambiguous,
/// never as a plain (retryable, "not applied") error.
#[test]
fn an_error_line_to_the_mg_of_a_stored_pair_is_not_a_refusal() {
    let server = MemcachedServer::start(ServerOptions::default());
    let proxy = injecting_proxy(server.addr());
    let store = MemcachedStore::connect(&proxy).unwrap();
    // The same server by another address: a pool of its own.
    let direct = MemcachedStore::builder()
        .pool_name("direct")
        .connect([server.addr()])
        .unwrap();
    let key = k("rv:inject:lock");
    let added = store.add(&key, b"owner-token-1", Ttl::secs(60));
    let now = direct.get(&key).unwrap().map(|i| i.value);
    println!(
        "add through the proxy: {added:?}; the server holds {:?}",
        now.as_deref().map(String::from_utf8_lossy)
    );
    let log = k("rv:inject:log");
    direct.set(&log, b"", Ttl::Never).unwrap();
    let appended = store.append(&log, b"<event>");
    let value = direct.get(&log).unwrap().unwrap().value;
    println!(
        "append through the proxy: {appended:?}; the log holds {:?}",
        String::from_utf8_lossy(&value)
    );
    let misreported = |r: bool, applied: bool| applied && !r;
    let add_ok = matches!(added, Ok(Stored::Stored(_)) | Err(Error::Ambiguous { .. }));
    let append_ok = matches!(appended, Ok(true) | Err(Error::Ambiguous { .. }));
    assert!(
        !misreported(add_ok, now.is_some()) && !misreported(append_ok, value == b"<event>"),
        "an applied write was reported as a refusal: add {added:?} (item {now:?}), append {appended:?}"
    );
}
