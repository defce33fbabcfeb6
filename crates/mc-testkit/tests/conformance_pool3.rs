//! The conformance suite against the pool3 store.
mc_testkit::conformance_suite!(mc_testkit::conformance::Env::pool3);
