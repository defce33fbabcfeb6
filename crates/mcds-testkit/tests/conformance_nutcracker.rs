//! The conformance suite against the text-protocol store (mcds-text) behind twemproxy (nutcracker) in front of three memcached servers: the cases that need CAS ids are asserted Unsupported.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::nutcracker);
