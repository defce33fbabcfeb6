//! The conformance suite against the text-protocol store (mcds-text) over a pool of three memcached servers, routed by the client.
mcds_testkit::conformance_suite!(mcds_testkit::conformance::Env::text_pool3);
