//! The conformance suite against the memory store.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::memory);
