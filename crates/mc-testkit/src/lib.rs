//! # mc-testkit
//!
//! Test kit for **mcds**. Tests run against real memcached processes, never
//! a mock:
//!
//! * [`MemcachedServer`] starts the `memcached` binary from `PATH` on a free
//!   127.0.0.1 port with chosen flags (`-m`, `-M`, `-I`), and can SIGKILL,
//!   SIGSTOP/SIGCONT and restart it. It is killed when dropped.
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
//! The fuzz harnesses are in the crate `mc-fuzz`.

pub mod conformance;
pub mod differential;
pub mod seed;
mod server;

pub use server::{MemcachedServer, ServerOptions, ServerPool, process_alive, spawn_tied};
