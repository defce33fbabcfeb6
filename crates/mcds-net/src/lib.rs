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
//! * [`health`]: a server's down backoff between dials ([`Health`]), and
//!   [`learned`]: what its handshakes taught ([`Learned`]).
//! * [`fallback`]: the loops that finish an append that may be "too
//!   large", an append that creates its key, and an increment that does.
//! * [`errors`]: what memcached's `SERVER_ERROR` replies mean.
//! * [`batch`]: where a pipelined batch is cut so that ops on one key
//!   apply in order.
//! * [`options`]: the settings both backends have ([`NetOptions`]), and
//!   [`builder_options!`] that writes their builder methods.
//!
//! Users reach these types through the backends, which re-export the ones
//! that appear in their APIs; this crate is the backends' plumbing, public
//! so that both can depend on it.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod batch;
pub mod errors;
pub mod fallback;
pub mod health;
pub mod incarnation;
mod ketama;
pub mod learned;
pub mod options;
pub mod route;
pub mod transport;

/// How long a dial may take by default, and each exchange.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

pub use health::{DialTiming, Health};
pub use incarnation::{INCARNATION_KEY, Version};
pub use ketama::{Continuum, ketama};
pub use learned::Learned;
pub use options::NetOptions;
pub use route::{Distribution, Router, route};
pub use transport::{Credentials, TlsOptions};
