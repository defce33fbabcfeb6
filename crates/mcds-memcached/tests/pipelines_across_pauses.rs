//! From an adversarial review: pipelines of text pairs (append, add, cas) from threads and
//! tokio tasks while the server is frozen and thawed (SIGSTOP/SIGCONT)
//! with a 100 ms I/O timeout. A failure that is not `Ambiguous` says the
//! write was not applied: it must not be there once the server runs
//! again; an acknowledged write must be there exactly once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcds_core::{Error, Key, Op, Reply, Result, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Applied,
    NotApplied,
    Maybe,
}

fn seen(r: &Result<Reply>) -> Seen {
    match r {
        Ok(Reply::Applied(true)) | Ok(Reply::Stored(Stored::Stored(_))) => Seen::Applied,
        Ok(Reply::Applied(false)) | Ok(Reply::Stored(Stored::NotStored)) => Seen::NotApplied,
        Err(Error::Ambiguous { .. }) => Seen::Maybe,
        Err(_) => Seen::NotApplied,
        Ok(other) => panic!("unexpected reply {other:?}"),
    }
}

#[test]
fn pipelined_pairs_across_pauses_report_what_was_applied() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(100))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
            .connections_per_server(2)
            .connect([server.addr()])
            .unwrap(),
    );
    let logs: Vec<Key> = (0..4).map(|i| k(&format!("rv4p:log:{i}"))).collect();
    for log in &logs {
        store.set(log, b"", Ttl::Never).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    // (log index, token, append outcome, add key, add outcome)
    type Record = (usize, String, Seen, Key, Seen);
    let mut handles: Vec<std::thread::JoinHandle<Vec<Record>>> = Vec::new();
    for t in 0..4 {
        let (store, logs, stop) = (Arc::clone(&store), logs.clone(), Arc::clone(&stop));
        handles.push(std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let mut out = Vec::new();
            let mut i = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let mut toks = Vec::new();
                let mut adds = Vec::new();
                for j in 0..3 {
                    toks.push(format!("<{t}.{i}.{j}>\r\nSTORED\r\n"));
                    adds.push(k(&format!("rv4p:add:{t}:{i}:{j}")));
                }
                let mut ops = Vec::new();
                for j in 0..3 {
                    ops.push(Op::Append {
                        key: &logs[(t + j + i) % 4],
                        value: toks[j].as_bytes(),
                    });
                    ops.push(Op::Add {
                        key: &adds[j],
                        value: toks[j].as_bytes(),
                        ttl: Ttl::secs(600),
                    });
                }
                let results = if i % 2 == 0 {
                    store.pipeline(&ops)
                } else {
                    rt.block_on(store.pipeline_async(&ops))
                };
                for j in 0..3 {
                    out.push((
                        (t + j + i) % 4,
                        toks[j].clone(),
                        seen(&results[2 * j]),
                        adds[j].clone(),
                        seen(&results[2 * j + 1]),
                    ));
                }
                i += 1;
            }
            out
        }));
    }
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(80));
        server.pause();
        std::thread::sleep(Duration::from_millis(250));
        server.resume();
    }
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    let records: Vec<Record> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let finals: Vec<String> = logs
        .iter()
        .map(|l| String::from_utf8(store.get(l).unwrap().unwrap().value).unwrap())
        .collect();
    let mut in_logs: Vec<std::collections::HashMap<String, usize>> = Vec::new();
    for text in &finals {
        let mut m = std::collections::HashMap::new();
        for piece in text.split('<').filter(|p| !p.is_empty()) {
            *m.entry(format!("<{piece}")).or_insert(0) += 1;
        }
        in_logs.push(m);
    }
    let add_keys: Vec<Key> = records.iter().map(|r| r.3.clone()).collect();
    let items: Vec<_> = add_keys
        .chunks(500)
        .flat_map(|c| store.get_multi(c).unwrap())
        .collect();
    let mut wrong = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for ((l, tok, append, add_key, add), there) in records.iter().zip(&items) {
        *counts.entry(format!("append {append:?}")).or_insert(0) += 1;
        *counts.entry(format!("add {add:?}")).or_insert(0) += 1;
        let n = in_logs[*l].get(tok.as_str()).copied().unwrap_or(0);
        let ok = match append {
            Seen::Applied => n == 1,
            Seen::NotApplied => n == 0,
            Seen::Maybe => n <= 1,
        };
        if !ok {
            wrong.push(format!(
                "append {tok:?} reported {append:?}, in the log {n} times"
            ));
        }
        let ok = match add {
            Seen::Applied => there.as_ref().is_some_and(|i| i.value == tok.as_bytes()),
            Seen::NotApplied => there.is_none(),
            Seen::Maybe => true,
        };
        if !ok {
            wrong.push(format!(
                "add {add_key:?} reported {add:?}, the item is {there:?}"
            ));
        }
    }
    let known: std::collections::HashSet<&str> = records.iter().map(|r| r.1.as_str()).collect();
    for (l, m) in in_logs.iter().enumerate() {
        for (piece, n) in m {
            if !known.contains(piece.as_str()) {
                wrong.push(format!(
                    "log {l}: a piece nobody appended: {piece:?} ({n} times)"
                ));
            }
        }
    }
    println!(
        "{} records: {counts:?}; {:?}",
        records.len(),
        store.connection_stats()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}
