//! `CounterMap`'s field registry (a growing `Set`) when memcached evicts
//! its directory alone, under memory pressure: no field counts unlisted.

use std::sync::Arc;

use mcds_core::{Key, Op, Store};
use mcds_counter::CounterMap;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// C1: a long-lived handle keeps touching new fields (each first touch
/// reads the registry's life item and appends to a registry bucket), so
/// memory pressure evicts the registry's directory alone. The fields
/// whose first touch came after that are registered into the dead life:
/// they count, and no handle lists them, ever — not even after another
/// handle's first touch starts a new registry. Docs: "A field whose
/// counter exists is listed ... never counting unlisted"; for a lost
/// registry directory "the next first touch of a field starts a new
/// registry".
#[test]
fn a_registry_directory_evicted_alone_leaves_no_field_counting_unlisted() {
    let server = MemcachedServer::start(mcds_testkit::ServerOptions {
        memory_mb: 8,
        ..Default::default()
    });
    let addr = server.addr();
    let name = format!("c1{}", std::process::id() % 10000);
    let old = CounterMap::new(
        Arc::new(MemcachedStore::connect(&addr).unwrap()) as Arc<dyn Store>,
        &name,
    )
    .unwrap();
    old.incr("f-start", 1).unwrap();
    let dir = String::from_utf8(old.registry_key().as_bytes().to_vec()).unwrap();
    let store = MemcachedStore::connect(&addr).unwrap();
    let val = vec![b'v'; 12];
    let keys: Vec<Key> = (0..400_000u32)
        .map(|i| Key::new(format!("junk{i:0width$}", width = dir.len() - 4).as_str()).unwrap())
        .collect();
    let mut touched = Vec::new();
    for (n, chunk) in keys.chunks(200).enumerate() {
        let ops: Vec<Op<'_>> = chunk
            .iter()
            .map(|k| Op::Set {
                key: k,
                value: &val,
                ttl: mcds_core::Ttl::Never,
            })
            .collect();
        let _ = store.pipeline(&ops);
        if n % 3 == 0 {
            let f = format!("f{n:05}");
            old.incr(&f, 1).unwrap();
            touched.push(f);
        }
    }
    let dir_there = server
        .raw(format!("get {dir}\r\n").as_bytes(), |l| l == "END")
        .iter()
        .any(|l| l.starts_with("VALUE"));
    println!(
        "evictions {}; registry directory still there: {dir_there}",
        server.stat("evictions")
    );
    // After the fill: a brand-new field, first touched by the old handle.
    let v = old.incr("late-field", 5);
    let fresh = CounterMap::new(
        Arc::new(MemcachedStore::connect(&addr).unwrap()) as Arc<dyn Store>,
        &name,
    )
    .unwrap();
    println!(
        "old.incr(late-field, 5) = {v:?}; fresh.get(late-field) = {:?}",
        fresh.get("late-field")
    );
    println!(
        "fresh.fields() = {:?}; old.fields() = {:?}",
        fresh.fields().map(|f| f.len()),
        old.fields().map(|f| f.len())
    );
    // Another client's first touch starts a new registry.
    fresh.incr("other", 1).unwrap();
    let listed = fresh.fields().unwrap();
    println!(
        "after fresh.incr(other): fields = {listed:?}; late-field counts {:?}",
        fresh.get("late-field")
    );
    let late_count = fresh.get("late-field").unwrap();
    assert!(
        late_count != 5 || listed.iter().any(|f| f == "late-field"),
        "late-field counts {late_count} but is listed by no handle, and its next increments are no first touch"
    );
}
