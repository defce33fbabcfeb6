//! # mcds-testkit
//!
//! Test kit for **mcds**. Tests run against real memcached processes, never
//! a mock:
//!
//! * [`MemcachedServer`] starts the `memcached` binary from `PATH` on a free
//!   127.0.0.1 port with chosen flags (`-m`, `-M`, `-I`), and can SIGKILL,
//!   SIGSTOP/SIGCONT and restart it. It is killed when dropped. It lives in
//!   the crate `mcds-testserver` (re-exported here), which depends on no mcds
//!   crate, so that mcds-memcached's own tests can use it without a
//!   dependency loop.
//! * [`conformance`] is the backend conformance suite: the same cases run
//!   against the embedded store, one memcached and a 3-server pool
//!   ([`conformance_suite!`]).
//! * [`differential`] runs random op sequences on two stores and compares
//!   every result (used with proptest).
//! * [`seed`] gives every random test a printed seed that replays it
//!   (`PROPTEST_RNG_SEED`, `MCDS_TEST_SEED`).
//! * [`spawn_tied`] starts any helper process so that it dies with the test
//!   process, even when that is killed with SIGKILL.
//!
//! The fuzz harnesses are in the crate `mcds-fuzz`.

pub mod conformance;
pub mod differential;
pub mod seed;
pub use mcds_testserver::{
    MemcachedServer, NutcrackerServer, ServerOptions, ServerPool, process_alive, spawn_tied,
};

#[cfg(test)]
mod tests {
    /// mcds-testserver names the marker key itself (it sits below
    /// mcds-memcached); it must be the key mcds-memcached uses, or command logs
    /// would count the handshake's marker reads as test traffic.
    #[test]
    fn the_test_server_knows_the_marker_key() {
        assert_eq!(
            mcds_testserver::INCARNATION_KEY,
            mcds_memcached::INCARNATION_KEY
        );
    }
}
