//! Decoding 1 MiB values: the set's text codec and the event log's frames,
//! in MB/s. Each iteration decodes the whole value; the decoded result is
//! dropped outside the timed part (`BatchSize::PerIteration`).

use std::hint::black_box;

use criterion::{BatchSize, Throughput};
use mcds_benches::{Comparison, Goal, criterion, print_table};
use mcds_eventlog::fuzzing::frame;
use mcds_set::fuzzing::{Op, text};

const MIB: usize = 1 << 20;

/// A set log of about 1 MiB: adds of 12-byte members with a removal every
/// tenth token, and a few members that need escaping.
fn set_log() -> Vec<u8> {
    let mut out = Vec::with_capacity(MIB + 64);
    let mut i = 0u64;
    while out.len() < MIB {
        let member = if i % 97 == 0 {
            format!("user {i:07}%")
        } else {
            format!("user:{i:07}")
        };
        let op = if i % 10 == 9 { Op::Remove } else { Op::Add };
        text::encode_member(op, member.as_bytes(), &mut out);
        i += 1;
    }
    out
}

/// About 1 MiB of event frames with 100-byte payloads.
fn event_chunk() -> Vec<u8> {
    let mut out = Vec::with_capacity(MIB + 256);
    let payload = [b'e'; 100];
    let mut ts = 1_800_000_000_000u64;
    while out.len() < MIB {
        frame::encode(ts, &payload, &mut out);
        ts += 3;
    }
    out
}

fn main() {
    let mut c = criterion();
    let log = set_log();
    let chunk = event_chunk();
    let mut g = c.benchmark_group("decode_1mib");
    g.throughput(Throughput::Bytes(log.len() as u64));
    g.bench_function("set_text_codec", |b| {
        b.iter_batched(
            || (),
            |()| text::decode(black_box(&log)),
            BatchSize::PerIteration,
        )
    });
    g.throughput(Throughput::Bytes(chunk.len() as u64));
    g.bench_function("event_frames", |b| {
        b.iter_batched(
            || (),
            |()| frame::decode(black_box(&chunk)),
            BatchSize::PerIteration,
        )
    });
    g.finish();
    c.final_summary();
    print_table(
        "codecs",
        &[
            Comparison {
                name: "set text codec decode, 1 MiB",
                ours: ("decode_1mib", "set_text_codec"),
                baseline: ("", ""),
                goal: Goal::Throughput {
                    bytes: log.len() as u64,
                    mb_per_s: 200.0,
                },
            },
            Comparison {
                name: "event frame decode, 1 MiB",
                ours: ("decode_1mib", "event_frames"),
                baseline: ("", ""),
                goal: Goal::Throughput {
                    bytes: chunk.len() as u64,
                    mb_per_s: 1000.0,
                },
            },
        ],
    );
}
