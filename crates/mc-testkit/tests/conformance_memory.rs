//! The conformance suite against the memory store.
mc_testkit::conformance_suite!(mc_testkit::conformance::Env::memory);
