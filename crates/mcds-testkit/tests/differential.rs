//! Random op sequences give identical results on the embedded store and on
//! real memcached (a fresh key prefix per case, one server for the run).

use std::sync::atomic::{AtomicUsize, Ordering};

use mcds_core::MemoryStore;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use mcds_testkit::differential::{compare, op};
use proptest::test_runner::{TestCaseError, TestRunner};

#[test]
fn memory_store_agrees_with_memcached() {
    let server = MemcachedServer::start_default();
    let memcached = MemcachedStore::connect(&server.addr()).unwrap();
    let config = mcds_testkit::seed::proptest_config(file!(), 256);
    let cases = config.cases;
    let mut runner = TestRunner::new(config);
    let runs = AtomicUsize::new(0);
    let ops = AtomicUsize::new(0);
    let result = runner.run(&proptest::collection::vec(op(), 1..40), |sequence| {
        let run = runs.fetch_add(1, Ordering::Relaxed);
        let memory = MemoryStore::new();
        let n = compare(&memory, &memcached, &format!("diff{run}:"), &sequence)
            .map_err(TestCaseError::fail)?;
        ops.fetch_add(n, Ordering::Relaxed);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!(
        "differential: {cases} proptest cases passed ({} sequences run, {} ops compared)",
        runs.load(Ordering::Relaxed),
        ops.load(Ordering::Relaxed)
    );
}
