//! What mcds's two backends for memcached's protocols share, written once:
//! the meta-protocol store (`mcds-memcached`) and the text-protocol store
//! (`mcds-text`) differ in what they send and how they read replies, and
//! in nothing below that.
//!
//! * [`transport`]: how a connection reaches its server (TCP, TLS over
//!   TCP, a unix socket) and authenticates ([`Credentials`], [`TlsOptions`]).
//! * [`incarnation`]: what one life of a server is (its [`Version`], the
//!   mask its CAS ids cross the API with, its clock), read from the marker
//!   item [`INCARNATION_KEY`], so that both backends hand out the same CAS
//!   ids and exptimes.
//! * [`route`](mod@route): which server of a pool holds a key
//!   ([`Distribution`]: rendezvous hashing, or libmemcached's [`ketama`]).
//!
//! Users reach these types through the backends, which re-export the ones
//! that appear in their APIs; this crate is the backends' plumbing, public
//! so that both can depend on it.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod incarnation;
mod ketama;
pub mod route;
pub mod transport;

pub use incarnation::{INCARNATION_KEY, Version};
pub use ketama::{Continuum, ketama};
pub use route::{Distribution, Router, route};
pub use transport::{Credentials, TlsOptions};
