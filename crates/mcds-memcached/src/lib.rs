//! # mcds-memcached
//!
//! The real-memcached backend of **mcds**: a [`Store`] over one memcached
//! server or a pool, speaking the meta protocol (mcds's own encoder, reply
//! parser and framing), with text-protocol commands for the conditional
//! writes (see below), over TCP, TLS
//! ([`Builder::tls`]), or a unix socket (`unix:/path`), with memcached's
//! ASCII authentication when asked ([`Builder::credentials`]); see
//! [`mcds_net::transport`], shared with `mcds-text`.
//!
//! * **One round trip per op** where the server allows: `incr_or_init` is
//!   `ma <k> N<ttl> J<initial> D<delta>`, `add` returns its CAS (a text
//!   `add` and an `mg <k> v c` in one write), `delete_cas` is
//!   `md <k> C<cas>`, `touch` is `mg <k> T<ttl>`.
//! * **A write that fails changes nothing.** `add`, `replace`, `cas`,
//!   `append` and `prepend` are text commands, because memcached's meta
//!   `ms` unlinks the existing item when it cannot allocate the new one
//!   (memory full under `-M`, a value over `-I`): a failed lock `add` would
//!   delete the holder's lock. Each is followed in the same write by a
//!   tagged `mg`, which brings the CAS id and keeps replies in step (the
//!   codec's module docs have the details).
//! * **Capabilities by version.** Each new connection asks the server's
//!   version once (`version`) and the best path is used:
//!
//!   | op | memcached ≥ 1.6.20 | 1.6.13 – 1.6.19 (Debian 12: 1.6.18) | older |
//!   |---|---|---|---|
//!   | `append_or_add` | append, then add on a miss (2 on first touch, then 1): `ms … MA N` would do it in 1, but a meta write that fails deletes the item | same | same |
//!   | `delete_cas` | `md <k> C<cas>`: 1 | `md <k> C<cas>`: 1 | `cas <k> 0 -1 0 <cas>` (a CAS write of an item that is already expired; a text command, as a meta `ms` refused for memory would delete the item whatever its CAS): 1 |
//!   | `incr_or_init` | `ma … N J D`: 1 | 1 | 1 |
//!
//!   "Older" means 1.6.0 to 1.6.12. Servers before 1.6 have no meta
//!   protocol and are refused when connecting ([`Error::Io`] naming the
//!   version): sending them meta commands would make a value's bytes be read
//!   as a command.
//!
//! * **CAS ids belong to one server incarnation.** memcached restarts its
//!   CAS ids at 1, so an id read before a restart could match another item
//!   after it (a lock released by an old id would delete the next holder's
//!   lock). Each connection reads a random marker kept on the server
//!   ([`INCARNATION_KEY`]) in the same round trip as its `version`
//!   handshake, and every CAS id crosses the API masked with it: an id from
//!   an earlier incarnation matches nothing there, so `cas`, `delete_cas`
//!   and `update` answer EXISTS/NOT_FOUND and touch nothing. No op pays a
//!   round trip for this; the first connection after a restart or flush
//!   pays one to create the marker. A flushed or evicted marker is simply
//!   created again: ids read before then stop matching (a spurious
//!   mismatch, never a false match).
//! * **Servers without CAS** (`-C`, every id 0) are detected by the same
//!   handshake: `cas` and `delete_cas` there are [`Error::Unsupported`]
//!   before anything is sent, and [`Store::supports_cas`] says `false`, so a
//!   lock is never granted on them.
//! * **TTLs are absolute times on the server's clock.** memcached computes
//!   a relative TTL's expiry from a seconds counter that a paused server
//!   (SIGSTOP, a frozen VM) does not advance until after it has applied the
//!   writes queued during the pause: those would expire at once. The
//!   handshake also reads the server's clock (`stats`, in the same round
//!   trip), and every TTL is sent as that reading plus the seconds since
//!   plus the TTL, which memcached measures against its start time. Client
//!   and server clocks need not agree. An item then lives between TTL − 1
//!   and TTL + 1 seconds (see `ServerClock` in `incarnation.rs` for the
//!   bounds).
//! * **A pool** places keys by rendezvous hashing over XXH3-64 ([`route`](route())):
//!   stable across processes, languages and compiler versions. A dead server
//!   gives errors for its own keys; its keys never move to another server
//!   (a lock must not silently change servers). A `get_multi` that spans a
//!   dead server fails as a whole (its result has no per-key errors).
//! * **Sharing a pool with PHP or Python applications**: choose
//!   [`Distribution::Ketama`] ([`Builder::distribution`]) and keys are placed
//!   by libmemcached's MD5 ketama ([`ketama`](ketama())), as php-memcached
//!   places them with `Memcached::OPT_LIBKETAMA_COMPATIBLE` set to `true` and
//!   pylibmc with `behaviors={"ketama_weighted": True}` (pylibmc's
//!   `{"ketama": True}` alone is libmemcached's other, non-MD5 continuum,
//!   and places keys elsewhere). List the servers as those clients do: the
//!   same host names (`localhost` is not `127.0.0.1` to ketama) in the same
//!   order. Then a key written by either is read here, and the other way
//!   round. Dead servers are handled as above (libmemcached's default: no
//!   automatic ejection). Rendezvous stays the default; every process using
//!   a pool must place keys the same way.
//!
//!   ```no_run
//!   use mcds_memcached::{Distribution, MemcachedStore};
//!
//!   // PHP: $m->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true);
//!   //      $m->addServer('10.0.0.1', 11211); $m->addServer('10.0.0.2', 11211);
//!   let store = MemcachedStore::builder()
//!       .distribution(Distribution::Ketama)
//!       .connect(["10.0.0.1:11211", "10.0.0.2:11211"])?;
//!   # Ok::<(), mcds_core::Error>(())
//!   ```
//! * **Shared connections, automatic pipelining.** A store opens at most
//!   [`Builder::connections_per_server`] connections to each server
//!   (default 4, two of which carry the batches once callers queue),
//!   whatever the number of threads and tasks using it. A
//!   caller that finds its connection idle writes its request and reads the
//!   reply itself: one `write` and one `read`, no thread hop, no liveness
//!   probe (a connection idle for more than 200 µs gets one non-blocking
//!   peek first, so a request is not written into a connection a restarted
//!   server closed). Requests that arrive while a write is in flight queue
//!   and go out together in the next write; each reply is routed back by
//!   order and checked against the opaque its command carried (`O<n>`), and
//!   a pipeline's share keeps its order, its per-op errors and its `MN`
//!   terminator. [`MemcachedStore::connection_stats`] shows the
//!   connections and how full the writes are.
//! * **Async.** [`Store::execute_async`] and [`Store::pipeline_async`] (and
//!   every structure's `_async` methods built on them, see
//!   [`mcds_core::Access`]) never block the calling thread. With the
//!   `tokio` feature, a call made inside a tokio runtime that finds its
//!   connection idle writes and reads it on the runtime itself (the socket
//!   registered with the runtime's reactor: one `write`, one `read`, no
//!   other thread), and the callers that arrive meanwhile go out together
//!   in the next write, driven by a task on the runtime; the runtime needs
//!   its I/O and time drivers (`#[tokio::main]` and `Runtime::new` have
//!   them; [`Builder::drive_on_runtime`] turns this off). Otherwise (other
//!   executors, TLS connections, the feature off) the request is queued on
//!   a shared connection, the connection's helper thread writes and reads
//!   it, and the caller's waker is woken with the reply: any executor
//!   works, and no runtime is needed by this crate. The blocking methods
//!   are the same code run under [`mcds_core::block_on`].
//! * **Timeouts** (connect and exchange) default to 1 second. A request that
//!   was sent but got no reply is [`Error::Ambiguous`]; one that failed
//!   before it was sent is [`Error::Io`]/[`Error::Timeout`] and safe to
//!   retry.
//! * **Backoff.** After a failed dial a server is marked down for a jittered,
//!   doubling interval (50 ms up to 1 s by default), during which its ops fail
//!   at once with [`Error::ServerDown`] instead of redialing in a busy loop.
//! * **Limits checked before sending.** Values whose item would exceed the
//!   item size limit (1 MiB by default; set it to the server's `-I`) are
//!   [`Error::ValueTooLarge`] before a byte is sent. (memcached itself,
//!   refusing an oversized `set`, also deletes the key's old value.)
//!
//! ```
//! use mcds_core::{Key, Store, Ttl};
//! use mcds_memcached::MemcachedStore;
//! # let server = mcds_testserver::MemcachedServer::start_default();
//! # let addr = server.addr();
//!
//! // addr is "127.0.0.1:<port>" of a running memcached
//! let store = MemcachedStore::connect(&addr)?;
//! let k = Key::new("visits")?;
//! assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 1);
//! assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 2);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Inside
//!
//! One op reads in one direction: [`MemcachedStore`] (`store.rs`, one
//! function per protocol variant) picks the server (a
//! [`mcds_net::Router`] for the [`Distribution`]), checks
//! out a session (`session.rs`: exchanges and what a failure means) on one
//! of the server's shared connections (`mux.rs`: lanes, the automatic
//! pipelining of concurrent callers; `server.rs`: its lanes, and its
//! health and incarnation through [`mcds_net::Health`] and
//! [`mcds_net::Learned`];
//! `conn.rs`: one connection, its handshake and the reply framing, over a
//! [`mcds_net::transport::Stream`]), and the session encodes
//! the op and decodes its reply with the codec (`codec.rs`, a leaf over the
//! plain data of [`mcds_net::incarnation`]). `pipeline.rs` batches ops over the same
//! pieces; `config.rs` holds the [`Builder`].
//!
//! [`Store`]: mcds_core::Store
//! [`Store::supports_cas`]: mcds_core::Store::supports_cas
//! [`Store::execute_async`]: mcds_core::Store::execute_async
//! [`Store::pipeline_async`]: mcds_core::Store::pipeline_async
//! [`Error::Ambiguous`]: mcds_core::Error::Ambiguous
//! [`Error::Io`]: mcds_core::Error::Io
//! [`Error::ServerDown`]: mcds_core::Error::ServerDown
//! [`Error::Timeout`]: mcds_core::Error::Timeout
//! [`Error::Unsupported`]: mcds_core::Error::Unsupported
//! [`Error::ValueTooLarge`]: mcds_core::Error::ValueTooLarge

mod codec;
mod config;
mod conn;
mod mux;
mod pipeline;
pub mod pool;
mod reply;
pub mod retention;
mod server;
mod session;
mod store;

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;

#[cfg(test)]
mod reply_readers;

pub use config::Builder;
pub use mcds_net::{
    Continuum, Credentials, Distribution, INCARNATION_KEY, TlsOptions, Version, ketama, route,
};
pub use pool::POOL_KEY;
pub use store::{ConnectionStats, MemcachedStore, Stats};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
