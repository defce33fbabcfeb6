//! The conformance suite against the pool3 store.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::pool3);
