//! A splitter paused between its bucket's delete (step 5) and its `s`
//! record (step 6), on a server old enough to vouch that it lost nothing
//! (started 6 s before). Another writer finds the bucket gone, records the
//! split for it (`follow`), and goes on writing into the children and
//! splitting them until the directory item is full. The splitter's own
//! record is then refused (`ValueTooLarge`). It used to write its bucket
//! again and delete its children, though the directory routed to them: a
//! child the other writer never wrote to still had the splitter's CAS id,
//! and went, with 24 acknowledged members (`Lost` for good), and 17 more
//! went into the parent no one routes to (an adversarial review, 3 of 3
//! runs). It now reads the directory first, and a split recorded there
//! stands.
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcds_core::{Error, Op, Store};
use mcds_set::Set;
use mcds_testkit::HookStore;

fn store(addr: &str) -> Arc<dyn Store> {
    mcds_testkit::one_k_store(addr, Duration::from_secs(5))
}

fn is_split_token(v: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(v) else {
        return false;
    };
    s.starts_with('s') && s.ends_with(' ') && s.matches('.').count() == 3 && !s.contains('\n')
}

#[test]
fn a_split_a_writer_recorded_stands_when_its_splitter_finds_the_directory_full() {
    // Old enough to vouch that it lost nothing (2 s of clock skew).
    let age: u64 = 6;
    let server = mcds_testkit::one_k_items_server();
    let addr = server.addr();
    std::thread::sleep(Duration::from_secs(age));
    let hook = HookStore::new(store(&addr));
    let s_set = Set::new(hook.clone() as Arc<dyn Store>, "dir").unwrap();
    let w_acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let w_log: Arc<Mutex<Vec<String>>> = Arc::default();
    let fired = Arc::new(Mutex::new(false));
    {
        let (addr, w_acked, w_log, fired) =
            (addr.clone(), w_acked.clone(), w_log.clone(), fired.clone());
        hook.once_before(
            |ops: &[Op<'_>]| {
                ops.iter()
                    .any(|op| matches!(op, Op::Append { value, .. } if is_split_token(value)))
            },
            move || {
                *fired.lock().unwrap() = true;
                let h = std::thread::spawn(move || {
                    let w = Set::new(store(&addr), "dir").unwrap();
                    let mut streak = 0;
                    let mut errs = std::collections::BTreeMap::<String, usize>::new();
                    for i in 0..20000 {
                        let m = format!("w-member-{i:05}");
                        // Only members of child 0 (top hash bit 0).
                        if mcds_core::stable_hash(m.as_bytes()) >> 63 != 0 {
                            continue;
                        }
                        match w.add(&[&m]) {
                            Ok(()) => {
                                w_acked.lock().unwrap().push(m);
                                streak = 0;
                            }
                            Err(e) => {
                                let k = format!("{e}")
                                    .split(':')
                                    .next()
                                    .unwrap()
                                    .chars()
                                    .take(40)
                                    .collect::<String>();
                                *errs.entry(k).or_default() += 1;
                                streak += 1;
                                if streak > 300 {
                                    break;
                                }
                            }
                        }
                    }
                    w_log.lock().unwrap().push(format!("W errors {errs:?}"));
                    // Other followers recording the same root split (each
                    // follow() appends the s token): duplicates until the
                    // directory refuses one (a later token of a bucket is dirt).
                    let raw = store(&addr);
                    let dir = mcds_core::Key::new("set:dir:log").unwrap();
                    let v = raw.get(&dir).unwrap().unwrap().value;
                    let text = String::from_utf8_lossy(&v).to_string();
                    let tok = text
                        .split(' ')
                        .find(|t| t.starts_with('s') && t.split('.').nth(1) == Some("0"))
                        .map(|t| format!("{t} "));
                    let mut dups = 0;
                    if let Some(tok) = &tok {
                        while let Ok(true) = raw.append(&dir, tok.as_bytes()) {
                            dups += 1;
                            if dups > 100 {
                                break;
                            }
                        }
                    }
                    w_log.lock().unwrap().push(format!(
                        "dir len {} root s token {tok:?}, {dups} duplicates appended",
                        v.len()
                    ));
                });
                h.join().unwrap();
            },
        );
    }
    let mut s_acked = Vec::new();
    let mut s_errs = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..400 {
        let m = format!("s-member-{i:05}");
        match s_set.add(&[&m]) {
            Ok(()) => s_acked.push(m),
            Err(e) => {
                let k = format!("{e}").chars().take(60).collect::<String>();
                *s_errs.entry(k).or_default() += 1;
            }
        }
        if *fired.lock().unwrap() && i > 50 {
            break;
        }
    }
    let w_acked = w_acked.lock().unwrap().clone();
    println!(
        "fired {} S acked {} S errs {s_errs:?}; W acked {}; {:?}",
        *fired.lock().unwrap(),
        s_acked.len(),
        w_acked.len(),
        w_log.lock().unwrap()
    );
    let reader = Set::new(store(&addr), "dir").unwrap();
    let members = reader.members();
    let mut missing = Vec::new();
    let mut lost_contains = 0;
    match &members {
        Ok(ms) => {
            let ms: HashSet<Vec<u8>> = ms.iter().cloned().collect();
            for m in s_acked.iter().chain(&w_acked) {
                if !ms.contains(m.as_bytes()) {
                    missing.push(m.clone());
                }
            }
        }
        Err(e) => println!("members() error: {e}"),
    }
    for m in s_acked.iter().chain(&w_acked) {
        match reader.contains(m.as_bytes()) {
            Ok(true) => {}
            Ok(false) => missing.push(format!("contains-false {m}")),
            Err(Error::Lost { .. }) => lost_contains += 1,
            Err(e) => missing.push(format!("contains-err {m}: {e}")),
        }
    }
    println!(
        "RESULT members_ok {} missing {} lost_contains {} evictions {} missing_sample {:?}",
        members.is_ok(),
        missing.len(),
        lost_contains,
        server.stat("evictions"),
        &missing[..missing.len().min(5)]
    );
    assert!(members.is_ok() && missing.is_empty() && lost_contains == 0);
}
