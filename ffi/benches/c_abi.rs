//! The C ABI's overhead: `mcds_counter_incr` (panic boundary, NULL checks,
//! last-error bookkeeping, output write) against Rust's `Counter::incr`,
//! both on the embedded store, in the same run.

use std::ffi::CString;
use std::hint::black_box;
use std::ptr;
use std::sync::Arc;

use ::mcds_counter::Counter;
use mcds_benches::{Comparison, Goal, criterion, print_table};
use mcds_core::MemoryStore;
use mcds_ffi::{MCDS_OK, mcds_counter, mcds_counter_free, mcds_counter_incr, mcds_counter_new};
use mcds_ffi::{mcds_store, mcds_store_free, mcds_store_new_memory};

fn main() {
    let mut c = criterion();
    let rust = Counter::new(Arc::new(MemoryStore::new()), "bench").unwrap();

    let mut store: *mut mcds_store = ptr::null_mut();
    let mut counter: *mut mcds_counter = ptr::null_mut();
    let name = CString::new("bench").unwrap();
    // SAFETY: valid out-pointers and a NUL-terminated name.
    unsafe {
        assert_eq!(mcds_store_new_memory(&mut store), MCDS_OK);
        assert_eq!(
            mcds_counter_new(store, name.as_ptr(), &mut counter),
            MCDS_OK
        );
    }

    let mut g = c.benchmark_group("incr_c_abi");
    g.bench_function("rust_counter_incr", |b| {
        b.iter(|| black_box(rust.incr(black_box(1)).unwrap()))
    });
    g.bench_function("mcds_counter_incr", |b| {
        let mut value = 0u64;
        b.iter(|| {
            // SAFETY: a live counter and a writable output.
            let r = unsafe { mcds_counter_incr(counter, black_box(1), &mut value) };
            black_box((r, value))
        })
    });
    g.finish();

    // SAFETY: live handles, not used afterwards.
    unsafe {
        mcds_counter_free(counter);
        mcds_store_free(store);
    }
    c.final_summary();
    print_table(
        "C ABI",
        &[Comparison {
            name: "mcds_counter_incr vs Counter::incr (MemoryStore)",
            ours: ("incr_c_abi", "mcds_counter_incr"),
            baseline: ("incr_c_abi", "rust_counter_incr"),
            goal: Goal::OverheadNs(50.0),
        }],
    );
}
