//! mcds reads memcached's meta replies without an allocation per reply:
//! the reply line is parsed in place (in the reader's buffer, or in a
//! buffer the connection keeps), and a `VA` reply's data block is kept
//! inline up to 16 bytes (a counter's digits); only a longer block gets a
//! heap allocation, one, at its size. Counted here with a
//! counting global allocator, in a test binary of its own (the count is of
//! this process's allocations, so this file holds one test: no other test
//! thread allocates while it counts).

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// The system allocator, counting (`stats_alloc`: safe code here, the
/// workspace forbids `unsafe`).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn replies_are_read_without_an_allocation_each() {
    // What `incr_many` and a pipeline read: counters' `VA` replies, and
    // the `HD`/`NS`/`EX`/`NF`/`EN` replies of writes, each with its opaque
    // and some with a CAS id, then `MN`.
    let mut stream = String::new();
    let (mut values, mut long) = (0, 0);
    for i in 0..1000 {
        stream += &match i % 6 {
            0 => {
                values += 1;
                format!(
                    "VA {} O{i}\r\n{}\r\n",
                    (i * 7919).to_string().len(),
                    i * 7919
                )
            }
            // A value longer than a counter's digits: on the heap.
            1 => {
                values += 1;
                long += 1;
                let value = format!("{:0>40}", i);
                format!("VA {} O{i}\r\n{value}\r\n", value.len())
            }
            2 => format!("HD c{} O{i}\r\n", 1_000_000 + i),
            3 => format!("NS O{i}\r\n"),
            4 => format!("EX c0 O{i}\r\n"),
            _ => format!("NF O{i}\r\nEN O{i}\r\n"),
        };
    }
    stream += "MN\r\n";
    let lines = stream.matches('\n').count() - values;

    // The connection's line buffer, as `Conn::open` makes it; a warm-up
    // reply first (the buffer could grow on its first long line).
    let mut line = Vec::with_capacity(128);
    let _ = mcds_fuzz::read_valid_replies(b"HD c1 O1\r\n", &mut line);

    let region = Region::new(GLOBAL);
    let (replies, with_value) = mcds_fuzz::read_valid_replies(stream.as_bytes(), &mut line);
    let change = region.change();
    // A growth is an allocation too.
    let allocations = change.allocations + change.reallocations;

    assert_eq!((replies, with_value), (lines, values));
    // One allocation per data block longer than 16 bytes (allocated once
    // at its size: the block is all in the reader's buffer), none for
    // anything else: no line, flag, opaque, error or short value allocates.
    assert_eq!(
        allocations, long,
        "{allocations} allocations for {replies} replies, {values} of them with a value, {long} of those over 16 bytes"
    );
    println!(
        "{replies} replies ({values} with a value, {long} over 16 bytes): {allocations} allocations"
    );
}
