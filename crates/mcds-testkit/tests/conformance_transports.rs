//! The conformance suite over every other way to reach memcached: TLS (with
//! a client certificate), a unix socket and ASCII authentication, each
//! through the meta-protocol store and through the text-protocol store.
//! Each module reports its own count (`conformance_counts`).

use mcds_testkit::conformance::{Env, Transport};

mod meta_tls {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Tls, false));
}

mod meta_unix {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Unix, false));
}

mod meta_auth {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Auth, false));
}

mod text_tls {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Tls, true));
}

mod text_unix {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Unix, true));
}

mod text_auth {
    mcds_testkit::conformance_suite!(|| super::Env::transport(super::Transport::Auth, true));
}
