//! A table whose member list is at its limit (`-I 1k`: the list's directory
//! is full and its buckets too): several clients set the same new member at
//! once. One's `add` stores the row and the list refuses the member, so it
//! takes the row back by CAS; another's `add` found the row, its `replace`
//! stored over it, and it returned `Ok`: the row stayed, unlisted, and a
//! later `set` (a `replace`, which listed nothing) kept it so (an
//! adversarial review: 122 of 300 rounds with 2 clients, 293 of 300 with
//! 4). A `replace` now lists the member too, and when the list refuses, it
//! reads whether the member is listed already, and takes its row back if
//! not. Every call is `Ok` only when the member is listed, and `has`
//! always agrees with `keys`.
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use mcds_core::{Error, Store};
use mcds_set::Table;

fn store(addr: &str) -> Arc<dyn Store> {
    mcds_testkit::one_k_store(addr, Duration::from_secs(5))
}

#[test]
fn sets_racing_at_the_lists_limit_never_leave_an_unlisted_row() {
    let threads: usize = std::env::var("MCDS_RACE_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let rounds: usize = std::env::var("MCDS_RACE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let server = mcds_testkit::one_k_items_server();
    let addr = server.addr();
    let t = Table::new(store(&addr), "tb").unwrap();
    let mut streak = 0;
    let mut filled = 0;
    for i in 0..20000 {
        match t.set(format!("fill-member-{i:06}"), b"v") {
            Ok(()) => {
                filled += 1;
                streak = 0
            }
            Err(Error::ValueTooLarge { .. }) => {
                streak += 1;
                if streak > 200 {
                    break;
                }
            }
            Err(e) => panic!("fill {i}: {e}"),
        }
    }
    println!("filled {filled} members, then {streak} refusals in a row");
    let tables: Vec<Table> = (0..threads)
        .map(|_| Table::new(store(&addr), "tb").unwrap())
        .collect();
    let mut outcomes: HashMap<String, usize> = HashMap::new();
    let mut findings = Vec::new();
    for r in 0..rounds {
        let member = format!("race-member-{r:05}");
        let barrier = Arc::new(Barrier::new(threads));
        let results: Vec<Result<(), String>> = std::thread::scope(|s| {
            let hs: Vec<_> = tables
                .iter()
                .enumerate()
                .map(|(i, tb)| {
                    let (barrier, member) = (barrier.clone(), member.clone());
                    s.spawn(move || {
                        barrier.wait();
                        tb.set(&member, format!("v{i}").as_bytes())
                            .map_err(|e| match e {
                                Error::ValueTooLarge { .. } => "VTL".to_string(),
                                Error::Ambiguous { .. } => format!("AMB {e}"),
                                e => format!("OTHER {e}"),
                            })
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let oks = results.iter().filter(|r| r.is_ok()).count();
        let key = format!(
            "{oks} ok / {:?}",
            results
                .iter()
                .filter_map(|r| r
                    .as_ref()
                    .err()
                    .map(|e| e.split(' ').next().unwrap().to_string()))
                .collect::<HashSet<_>>()
        );
        *outcomes.entry(key).or_insert(0) += 1;
        let has = t.has(&member).unwrap();
        let keys: HashSet<Vec<u8>> = t.keys().unwrap().into_iter().collect();
        let in_keys = keys.contains(member.as_bytes());
        let amb = results
            .iter()
            .any(|r| matches!(r, Err(e) if e.starts_with("AMB")));
        if !amb && (has != in_keys || (oks > 0 && !has) || (oks == 0 && has)) {
            let again = t.set(&member, b"again");
            let in_keys2 = t.keys().unwrap().iter().any(|k| k == member.as_bytes());
            let in_entries2 = t
                .entries()
                .unwrap()
                .iter()
                .any(|(k, _)| k == member.as_bytes());
            let get2 = t.get(&member).unwrap();
            findings.push(format!("round {r} {member}: results {results:?}, has {has}, keys {in_keys}; then a lone set: {again:?}, get {:?}, keys {in_keys2}, entries {in_entries2}", get2.map(|v| String::from_utf8(v).unwrap())));
        }
    }
    println!("outcomes {outcomes:?}");
    println!(
        "DONE {rounds} rounds x {threads} threads: {} findings",
        findings.len()
    );
    for f in &findings {
        println!("FINDING {f}");
    }
    assert!(findings.is_empty());
}
