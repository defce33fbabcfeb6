//! The conformance suite against the memcached store.
mc_testkit::conformance_suite!(mc_testkit::conformance::Env::memcached);
