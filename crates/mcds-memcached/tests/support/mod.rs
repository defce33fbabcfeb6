//! What this crate's tests share: keys, a two-thread tokio runtime, and
//! for the random tests a printed, replayable seed and a small generator
//! (this crate's tests do not depend on mcds-testkit, whose `seed::rng`
//! the other crates use).

#![allow(
    dead_code,
    reason = "each test binary uses its own part of this module"
)]

use mcds_core::Key;

/// A key from a string the test knows is valid.
pub fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// A tokio runtime with two worker threads, as many as the machines'
/// cores, for tests that mix async callers with blocking ones.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The seed of a random test: `MCDS_TEST_SEED` (the workspace's variable,
/// see `mcds_testkit::seed`), or the clock's nanoseconds; printed, so that
/// a failure can be replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("MCDS_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("seed: {seed} (MCDS_TEST_SEED={seed} replays it)");
    seed
}

/// xorshift64*, enough to pick keys and delays.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0 | 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}
