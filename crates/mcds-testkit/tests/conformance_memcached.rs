//! The conformance suite against the memcached store.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::memcached);
