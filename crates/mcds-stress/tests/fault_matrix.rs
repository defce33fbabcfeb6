//! The fault matrix (#37 item 6): every structure written from 3 OS
//! processes under each fault, every read checked against what the
//! writers were told, and RELIABILITY.md's matrix generated from the
//! declarations those runs check. See `mcds_stress::matrix`.
//!
//! The short form runs each fault once for 1.5 s. `MCDS_FAULT_MATRIX=long`
//! runs each 3 times for 8 s.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Key, Store};
use mcds_memcached::MemcachedStore;
use mcds_stress::matrix::{
    self, Fault, History, LOSS_DOC_HEADING, MARKERS, Structure, Tally, expected, workload::Handles,
};
use mcds_testkit::{MemcachedServer, ServerOptions};

const WORKER: &str = env!("CARGO_BIN_EXE_mcds-stress-worker");
const WRITERS: u64 = 3;

fn long() -> bool {
    std::env::var("MCDS_FAULT_MATRIX").is_ok_and(|v| v == "long")
}

/// Fill every slab class a structure's item may be in, so that the
/// server evicts the least recently used items of each.
fn evict(store: &dyn Store, round: u64) {
    for size in [16usize, 48, 100, 250, 600, 1_500, 4_000, 10_000, 30_000] {
        let count = (6 << 20) / size;
        let value = vec![b'e'; size];
        let keys: Vec<Key> = (0..count)
            .map(|i| Key::new(format!("evict:{round}:{size}:{i}")).expect("a valid key"))
            .collect();
        let _ = mcds_testkit::set_all(store, &keys, &value);
    }
}

/// One run of `fault`, writers writing for `millis`: each structure's tally.
fn run(fault: Fault, millis: u64) -> BTreeMap<Structure, Tally> {
    let options = match fault {
        Fault::Eviction => ServerOptions::default().memory_mb(8),
        Fault::NoEvictFull => ServerOptions::default().memory_mb(8).no_evict(),
        Fault::ItemLimit => {
            // memcached refuses an -I below its slab chunk maximum.
            let mut options = ServerOptions::default().item_size("1k");
            options
                .extra_args
                .extend(["-o".into(), "slab_chunk_max=1024".into()]);
            options
        }
        _ => ServerOptions::default(),
    };
    let pooled = matches!(fault, Fault::PoolMemberRestart | Fault::PoolViewsDiffer);
    let mut servers: Vec<MemcachedServer> = (0..if pooled { 3 } else { 1 })
        .map(|_| MemcachedServer::start(options.clone()))
        .collect();
    let addrs: Vec<String> = servers.iter().map(MemcachedServer::addr).collect();
    let all = addrs.join(",");
    let first_two = addrs[..addrs.len().min(2)].join(",");
    // Writers 0 and 1 (and the reader) see [A, B], writer 2 [A, B, C].
    let list = |writer: u64| {
        if fault == Fault::PoolViewsDiffer && writer + 1 < WRITERS {
            first_two.clone()
        } else {
            all.clone()
        }
    };
    let reader_list = if fault == Fault::PoolViewsDiffer {
        first_two.clone()
    } else {
        all.clone()
    };
    // Below the server's 1 KiB, so the client refuses before memcached
    // would (a `set` memcached refuses as too large deletes the old value).
    let item_limit = if fault == Fault::ItemLimit { 900 } else { 0 };
    let mut builder = MemcachedStore::builder();
    if item_limit > 0 {
        builder = builder.item_size_limit(item_limit);
    }
    let reader: Arc<dyn Store> =
        Arc::new(builder.connect(reader_list.split(',')).expect("connect"));
    // The reader's first op records the pool [A, B] before any writer.
    reader
        .get(&Key::new("mx:hello").unwrap())
        .expect("first op");
    let t_ms = mcds_testkit::a_second_after_now();
    let dir = std::env::temp_dir().join(format!(
        "mcds-fault-matrix-{}-{}-{t_ms}",
        std::process::id(),
        fault.name()
    ));
    std::fs::create_dir_all(&dir).expect("log dir");
    let mut writers: Vec<_> = (0..WRITERS)
        .map(|id| {
            let log = dir.join(format!("writer{id}.log"));
            mcds_testkit::spawn_tied(WORKER, |c| {
                c.arg(list(id))
                    .args([
                        "matrix",
                        &id.to_string(),
                        &t_ms.to_string(),
                        &millis.to_string(),
                    ])
                    .arg(&log)
                    .arg(item_limit.to_string())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
            })
            .expect("spawn a writer")
        })
        .collect();
    std::thread::sleep(Duration::from_millis(millis / 2));
    match fault {
        Fault::Restart => servers[0].restart(),
        Fault::Eviction => evict(&*reader, 0),
        Fault::NoEvictFull => drop(mcds_testkit::fill_until_out_of_memory(&*reader)),
        Fault::Pause => {
            servers[0].pause();
            std::thread::sleep(Duration::from_millis(800));
            servers[0].resume();
        }
        Fault::ClientKilled => writers[2].kill().expect("kill a writer"),
        Fault::PoolMemberRestart => servers[1].restart(),
        Fault::None | Fault::PoolViewsDiffer | Fault::ItemLimit => {}
    }
    for (id, writer) in writers.drain(..).enumerate() {
        let out = writer.wait_with_output().expect("wait for a writer");
        let killed = fault == Fault::ClientKilled && id == 2;
        assert!(
            out.status.success() || killed,
            "writer {id} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if fault == Fault::Eviction {
        evict(&*reader, 1);
    }
    let mut history = History::new();
    for id in 0..WRITERS {
        let log = std::fs::read_to_string(dir.join(format!("writer{id}.log"))).unwrap_or_default();
        matrix::parse_log(id, &log, &mut history);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let handles = Handles::open(Arc::clone(&reader), t_ms).expect("open the reader's handles");
    Structure::ALL
        .into_iter()
        .map(|structure| {
            let mut tally = Tally::default();
            let calls = history.remove(&structure).unwrap_or_default();
            handles.check(structure, &calls, &mut tally);
            (structure, tally)
        })
        .collect()
}

/// Run `fault` (3 times for 8 s in the long form, once for 1.5 s in the
/// short), print every structure's line, and fail where a structure did
/// worse than the matrix declares.
fn check(fault: Fault) {
    let (rounds, millis) = if long() { (3, 8_000) } else { (1, 1_500) };
    let mut worse = Vec::new();
    for round in 0..rounds {
        for (structure, tally) in run(fault, millis) {
            let line = matrix::line(fault, structure, &tally);
            println!("{line}");
            // Every structure must have been exercised.
            assert!(
                tally.acked + tally.failed + tally.maybe > 0,
                "round {round}: no call to {} was logged",
                structure.name()
            );
            if !tally.within(expected(structure, fault)) {
                worse.push(line);
            }
        }
    }
    assert!(
        worse.is_empty(),
        "worse than RELIABILITY.md's matrix declares:\n{}",
        worse.join("\n")
    );
}

#[test]
fn no_fault_every_read_is_exact() {
    check(Fault::None);
}

#[test]
fn restart_of_the_server() {
    check(Fault::Restart);
}

#[test]
fn eviction() {
    check(Fault::Eviction);
}

#[test]
fn no_evict_server_full() {
    check(Fault::NoEvictFull);
}

#[test]
fn pause_past_the_timeout() {
    check(Fault::Pause);
}

#[test]
fn a_writer_killed_mid_call() {
    check(Fault::ClientKilled);
}

#[test]
fn one_pool_member_restarted() {
    check(Fault::PoolMemberRestart);
}

#[test]
fn pool_views_differ() {
    check(Fault::PoolViewsDiffer);
}

#[test]
fn item_limit() {
    check(Fault::ItemLimit);
}

fn workspace_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// RELIABILITY.md's matrix is [`matrix::markdown`]; `MCDS_BLESS=1`
/// rewrites it.
#[test]
fn reliability_md_prints_the_declared_matrix() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("RELIABILITY.md");
    let text = workspace_file("RELIABILITY.md");
    let (begin, end) = MARKERS;
    let start = text
        .find(begin)
        .expect("RELIABILITY.md has the matrix's begin marker")
        + begin.len();
    let stop = text[start..].find(end).expect("and its end marker") + start;
    let fresh = format!("\n{}", matrix::markdown());
    if std::env::var("MCDS_BLESS").is_ok_and(|v| v == "1") {
        let mut updated = text.clone();
        updated.replace_range(start..stop, &fresh);
        std::fs::write(&path, updated).expect("write RELIABILITY.md");
    } else {
        assert_eq!(
            text[start..stop],
            fresh,
            "RELIABILITY.md's fault matrix is stale: run MCDS_BLESS=1 cargo test -p mcds-stress --test fault_matrix"
        );
    }
}

/// A cell that allows silently wrong reads needs the structure's docs to
/// say why the loss cannot be seen.
#[test]
fn undetected_losses_are_explained_in_the_structures_docs() {
    for structure in Structure::ALL {
        let undetected = Fault::ALL
            .into_iter()
            .any(|f| expected(structure, f) == matrix::Expect::Undetected);
        if undetected {
            let source = workspace_file(structure.source());
            assert!(
                source.contains(&format!("/// {LOSS_DOC_HEADING}")),
                "{}'s docs ({}) have no `{LOSS_DOC_HEADING}` section",
                structure.name(),
                structure.source()
            );
        }
    }
}
