//! Random tests that can be replayed: every one prints the seed it ran with.
//!
//! A random test that fails once and cannot be replayed is a flaky test. So
//! every random test in the workspace takes its randomness from here:
//!
//! * [`proptest_config`] for proptest. The seed comes from
//!   `PROPTEST_RNG_SEED` (proptest's own variable) or is drawn at random, and
//!   is printed before the first case; `cargo test` shows a failing test's
//!   output, so the seed is beside every failure. Failures are also saved to
//!   `<test file>.proptest-regressions` beside the test source, and replayed
//!   first on every later run.
//! * [`rng`] for plain tests that draw random bytes. The seed comes from
//!   `MCDS_TEST_SEED` or is drawn at random, and is printed likewise.
//!
//! ```text
//! PROPTEST_RNG_SEED=1234 cargo test -p mcds-sketch --test sketches   # replays a proptest run
//! MCDS_TEST_SEED=1234 cargo test -p mcds-stress --test bad_input garbage
//! ```

use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// The variable that replays a plain random test (see [`rng`]).
pub const SEED_VAR: &str = "MCDS_TEST_SEED";

/// proptest's variable for its RNG seed.
pub const PROPTEST_SEED_VAR: &str = "PROPTEST_RNG_SEED";

fn seed_from(var: &str) -> u64 {
    match std::env::var(var) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={text:?} is not a u64 seed")),
        Err(_) => rand::random(),
    }
}

/// A proptest configuration with a printed, replayable seed.
///
/// `source_file` is the test's `file!()`: failures are saved beside it with
/// the extension `proptest-regressions`. `cases` is the default number of
/// cases; `PROPTEST_CASES` overrides it.
///
/// In a `proptest!` block, put
/// `#![proptest_config(mcds_testkit::seed::proptest_config(file!(), 256))]`
/// first. With a runner:
///
/// ```
/// use proptest::prelude::*;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::new(mcds_testkit::seed::proptest_config(file!(), 64));
/// runner
///     .run(&proptest::collection::vec(any::<u8>(), 0..10), |v| {
///         let twice: Vec<u8> = v.iter().rev().rev().copied().collect();
///         prop_assert_eq!(twice, v);
///         Ok(())
///     })
///     .unwrap();
/// ```
pub fn proptest_config(source_file: &'static str, cases: u32) -> Config {
    let seed = seed_from(PROPTEST_SEED_VAR);
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    println!(
        "proptest seed {seed} ({cases} cases): replay with {PROPTEST_SEED_VAR}={seed} PROPTEST_CASES={cases}"
    );
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        source_file: Some(source_file),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}

/// A seeded random generator for a plain test, its seed printed (replay it
/// with `MCDS_TEST_SEED`). `what` names the test in the printed line.
pub fn rng(what: &str) -> StdRng {
    let seed = seed_from(SEED_VAR);
    println!("{what}: random seed {seed}: replay with {SEED_VAR}={seed}");
    StdRng::seed_from_u64(seed)
}
