//! The conformance suite against the text-protocol store (mcds-text), direct to one memcached.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::text);
