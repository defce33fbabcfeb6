//! # mcds-testserver
//!
//! Real memcached processes for **mcds**'s tests, and nothing else: no
//! dependency on mcds's own crates, so every crate can dev-depend on it
//! without a dependency loop (mcds-memcached's own tests and doc examples
//! use it; mcds-testkit, mcds's unpublished test kit, which re-exports it, also
//! carries the conformance suite and depends on mcds-memcached).
//!
//! * [`MemcachedServer`] starts the `memcached` binary from `PATH` on a free
//!   127.0.0.1 port with chosen flags (`-m`, `-M`, `-I`), and can SIGKILL,
//!   SIGSTOP/SIGCONT and restart it. It is killed when dropped.
//!   It can also listen with TLS (certificates made for the test,
//!   [`TlsFiles`]) or on a unix socket ([`Listen`]), and require ASCII
//!   authentication ([`ServerOptions::auth`]).
//! * [`ServerPool`] starts several.
//! * [`NutcrackerServer`] starts twemproxy (`nutcracker`) in front of
//!   memcached servers of its own, for the text-protocol backend's tests
//!   behind a proxy.
//! * [`spawn_tied`] starts any helper process so that it dies with the test
//!   process, even when that is killed with SIGKILL.

mod memcached;
mod nutcracker;
mod options;
mod pool;
mod process;

pub use memcached::{MemcachedServer, TlsFiles};
pub use nutcracker::{NutcrackerProcess, NutcrackerServer};
pub use options::{INCARNATION_KEY, Listen, ServerOptions};
pub use pool::ServerPool;
pub use process::{process_alive, spawn_tied};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
