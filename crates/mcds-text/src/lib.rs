//! # mcds-text
//!
//! The text-protocol backend of **mcds**: a [`Store`] over memcached's
//! classic text protocol (`get`/`gets`, `set`/`add`/`replace`/`cas`,
//! `append`/`prepend`, `incr`/`decr`, `delete`, `touch`), for what the
//! meta-protocol backend (`mcds-memcached`) cannot reach: **memcached
//! before 1.6**, and **proxies without the meta protocol**, such as
//! twemproxy (nutcracker).
//!
//! It has two paths, chosen by [`Builder::behind_proxy`]:
//!
//! | | direct (default) | behind a proxy |
//! |---|---|---|
//! | each address is | one memcached server (a pool is routed here by a [`Distribution`]: rendezvous hashing by default, or libmemcached's ketama) | a proxy that places keys itself |
//! | CAS ids | masked with the server's incarnation marker: restart-safe | none: every id is 0 |
//! | `cas`, `delete_cas`, `update` | yes | [`Error::Unsupported`] |
//! | [`Store::supports_cas`] | `true` (`false` on a `-C` server) | `false` |
//! | TTLs | absolute times on the server's own clock | relative; over 30 days absolute on this client's clock |
//! | [`Store::colocated`] | by routing | only a key with itself |
//!
//! ## The async API
//!
//! The text protocol has no opaque token to match a reply to its caller,
//! so a connection serves one caller at a time and its exchanges block.
//! The async API ([`Store::execute_async`](mcds_core::Store::execute_async) and the `_async` methods of
//! every structure) therefore runs each op on a worker thread of a shared
//! pool (the `blocking` crate's) and awaits it there: the caller's
//! executor thread never blocks on I/O. The op's round trips are counted
//! on the caller's thread ([`traffic`](mcds_core::traffic)).
//!
//! * **Cancelling.** A future dropped before a worker took its op cancels
//!   it: nothing is sent. Once the op started it runs to its end, as a
//!   request the meta store has written does: a caller that drops a write
//!   on its own timeout and retries it may apply it twice (a counter
//!   counts both), so retry only what may be repeated, or give the store
//!   an [`io_timeout`](Builder::io_timeout) instead, whose expiry is an
//!   error that says whether the write may have landed
//!   ([`Error::Ambiguous`](mcds_core::Error::Ambiguous)).
//! * **Sharing.** Every text store of a process shares the pool (up to 500
//!   threads): many async callers waiting on a stopped server hold threads
//!   that callers of healthy servers then queue for. For many concurrent
//!   async callers, the meta-protocol store (`mcds-memcached`), whose
//!   connections are shared and whose async path has no thread hop, is the
//!   better choice.
//!
//! ## Operations
//!
//! | op | commands (first exchange) | then |
//! |---|---|---|
//! | `get` | `gets <k>` (`get` behind a proxy); a batch's run of gets is one `gets k1 k2 …` | |
//! | `set`, `add`, `replace` | `set`/`add`/`replace <k> 0 <exp> <n>`, and directly `gets <k>` in the same payload (the CAS id) | |
//! | `cas` | `cas <k> 0 <exp> <n> <id>` + `gets <k>` | |
//! | `append`, `prepend` | `append`/`prepend <k> 0 0 <n>` | on `NOT_STORED` a probe (`get`): missing, or too large? |
//! | `append_or_add` | `append` | on a miss: `add`; if the add lost, `append` again (bounded; every piece lands once) |
//! | `incr`, `decr` | `incr`/`decr <k> <d>` | |
//! | `incr_or_init` | `incr <k> <d>` | on `NOT_FOUND`: `add <initial>`; on `NOT_STORED`: `incr` again (bounded; never a lost increment) |
//! | `delete` | `delete <k>` | |
//! | `delete_cas` | `cas <k> 0 -1 0 <id>` with an empty value | |
//! | `touch` | `touch <k> <exp>` (memcached 1.4.8 and later) | |
//!
//! * `noreply` is never sent: every outcome is read.
//! * **`delete_cas`** is a CAS write of an empty item that is already
//!   expired (exptime −1): memcached applies it only on a CAS match, in one
//!   atomic step, and the key then reads as missing (`add` works at once).
//!   `STORED`/`EXISTS`/`NOT_FOUND` are deleted/changed/missing. A test pins
//!   it against real memcached (`tests/direct.rs`).
//! * **The CAS id of a write.** The text protocol's storage replies carry
//!   no CAS id, so a direct write is followed, in the same payload, by a
//!   `gets` of its key. If the item read back is not what was written
//!   (another client wrote in between), the id answered is one that matches
//!   nothing: a later `cas`/`delete_cas` with it answers EXISTS and touches
//!   nothing, never another writer's item. The write costs no extra round
//!   trip, but the value travels back.
//! * **Pipelines** ([`Store::pipeline`]) write every server's share (in
//!   payloads that fit a socket's send buffer, 208 KiB on a default Linux:
//!   [`request_budget`](mcds_net::transport::request_budget)) before reading any reply; text replies come
//!   back in order. Ops that may need a second exchange (`append`, `prepend`,
//!   `append_or_add`, `incr_or_init`) cut the batch where the same key comes
//!   again, so one key's ops apply in order; the `add`s of the counters and
//!   logs a batch creates go in one more pipelined round.
//!
//! ## Restart safety on direct connections
//!
//! memcached numbers CAS ids from 1 again after a restart, so an id read
//! before a restart can match a *different* item after it: a lock released
//! by its old id would delete the next holder's lock, a set's compaction
//! would overwrite newer members. As in `mcds-memcached`, each new direct
//! connection's handshake (one round trip: `version`, `gets
//! __mcds_incarnation`, `stats`) reads a random marker kept on the server
//! ([`INCARNATION_KEY`](mcds_net::INCARNATION_KEY); the first
//! connection after a restart or flush creates it with `add` and reads it
//! back), and every CAS id crosses the API XOR-ed with a mask derived from
//! it. An id from an earlier incarnation unmasks to a random number and
//! matches nothing. The key and the mask are the ones `mcds-memcached`
//! uses, so both backends on one server hand out the same ids. A server
//! started with `-C` (every id 0) is seen by the same read: `cas` and
//! `delete_cas` there are [`Error::Unsupported`] and `supports_cas` is
//! `false`.
//!
//! The same handshake samples the server's clock (`stats` → `time`), and
//! every TTL is sent as an absolute time on that clock (the sample plus the
//! seconds since plus the TTL): a server paused and resumed does not expire
//! the writes queued during the pause at once, and TTLs over 30 days
//! (which memcached reads as absolute times) are right whatever this
//! client's clock says. An item lives between TTL − 1 and TTL + 1 seconds.
//!
//! ## Behind a proxy
//!
//! One proxy connection reaches many servers, and a marker key lands on one
//! of them only: a restart of any other server cannot be seen, so a CAS id
//! cannot be tied to an incarnation. Rather than a weaker path, everything
//! whose safety depends on CAS identity is refused, loudly, before anything
//! is sent:
//!
//! * [`Store::cas`] and [`Store::delete_cas`] (alone or in a pipeline) are
//!   [`Error::Unsupported`], and so is [`Store::update`], which is a CAS
//!   loop. Every CAS id handed out is 0 (as on a `-C` server), so no id can
//!   be mistaken for one; [`Store::supports_cas`] is `false`.
//! * `get`, `get_multi`, `set`, `add`, `replace`, `append`, `prepend`,
//!   `append_or_add`, `incr`, `decr`, `incr_or_init`, `delete`, `touch` and
//!   pipelines of them work: none depends on a CAS id, and each key lives
//!   on one server the proxy picks.
//!
//! What that means for the structures:
//!
//! | structure | behind a proxy | why |
//! |---|---|---|
//! | `mcds-lock` `Lock` | refused: `try_acquire` is [`Error::Unsupported`] | release and extend are CAS-guarded; it checks `supports_cas` first |
//! | `mcds-counter` (counters, windows, rate limiters, shadows, views) | works | `incr_or_init`, `incr`, `get`, `touch`, `delete` |
//! | `mcds-eventlog` | works | appends and counters |
//! | `mcds-set` `Set`, `ShardedSet`, `Table`, `IntArray` | work, without compaction | writes are appends; the best-effort compaction of a read (a CAS write) is skipped, so logs grow until the TTL or a `clear`; an explicit `compact()` is [`Error::Unsupported`] |
//! | `mcds-sketch` (Bloom filter, HyperLogLog, activity bitmap) | refused: writes are [`Error::Unsupported`] | every write is a CAS read-modify-write |
//! | `mcds-timeseries` | refused: records are [`Error::Unsupported`] | a bucket is written by CAS |
//!
//! Time series reads ask the store whether a server lost items since the
//! data was written ([`Store::retention`]); this store cannot say yet,
//! directly or behind a proxy (it answers [`Retention::Unknown`]), so a
//! series read through it is [`Error::Unsupported`] unless the series is
//! made `with_loss_check(false)`.
//!
//! TTLs behind a proxy are relative up to 30 days (memcached computes the
//! expiry on its own clock, which a paused server applies late); longer
//! TTLs are absolute Unix times on this client's clock, so a skew between
//! client and servers shifts them. A `SERVER_ERROR` the proxy answers to a
//! write (its own request to the server failed or timed out) is
//! [`Error::Ambiguous`]: the write may have been applied. A proxy may
//! forward two commands on one key over different server connections, so
//! a batch is cut wherever a key comes again.
//!
//! **Detection.** A direct store that reaches twemproxy fails to connect
//! with an error that says so: twemproxy forwards `version` and `gets` to a
//! server but closes the connection on `stats`. A proxy that answers
//! `stats` itself (mcrouter) cannot be told from a server: configure
//! [`Builder::behind_proxy`].
//!
//! ## Errors
//!
//! * A request that failed before it was fully sent is [`Error::Io`] or
//!   [`Error::Timeout`] (not applied, safe to retry); one sent but not
//!   answered is [`Error::Ambiguous`] if it changes anything.
//! * A reply that is not what the command expects is [`Error::Protocol`],
//!   and the connection is dropped; `SERVER_ERROR` is [`Error::Server`]
//!   (or [`Error::ValueTooLarge`], [`Error::OutOfMemory`]); `CLIENT_ERROR …
//!   non-numeric …` is [`Error::NonNumeric`]. Nothing panics on a reply.
//! * A server that refused a connection is left alone for a jittered,
//!   doubling interval ([`Error::ServerDown`]).
//! * Values whose item would exceed the item size limit are
//!   [`Error::ValueTooLarge`] before a byte is sent.
//!
//! ```
//! use mcds_core::{Key, Store, Ttl};
//! use mcds_text::TextStore;
//! # let server = mcds_testserver::MemcachedServer::start_default();
//! # let addr = server.addr();
//!
//! // addr is "127.0.0.1:<port>" of a running memcached
//! let store = TextStore::connect(&addr)?;
//! let k = Key::new("greeting")?;
//! let cas = store.set(&k, b"hello", Ttl::secs(60))?;
//! assert_eq!(store.get(&k)?.unwrap().cas, cas);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! [`Store`]: mcds_core::Store
//! [`Store::cas`]: mcds_core::Store::cas
//! [`Store::delete_cas`]: mcds_core::Store::delete_cas
//! [`Store::update`]: mcds_core::Store::update
//! [`Store::supports_cas`]: mcds_core::Store::supports_cas
//! [`Store::colocated`]: mcds_core::Store::colocated
//! [`Store::pipeline`]: mcds_core::Store::pipeline
//! [`Store::retention`]: mcds_core::Store::retention
//! [`Retention::Unknown`]: mcds_core::Retention::Unknown
//! [`Error::Unsupported`]: mcds_core::Error::Unsupported
//! [`Error::Ambiguous`]: mcds_core::Error::Ambiguous
//! [`Error::Io`]: mcds_core::Error::Io
//! [`Error::Timeout`]: mcds_core::Error::Timeout
//! [`Error::Protocol`]: mcds_core::Error::Protocol
//! [`Error::Server`]: mcds_core::Error::Server
//! [`Error::ServerDown`]: mcds_core::Error::ServerDown
//! [`Error::ValueTooLarge`]: mcds_core::Error::ValueTooLarge
//! [`Error::OutOfMemory`]: mcds_core::Error::OutOfMemory
//! [`Error::NonNumeric`]: mcds_core::Error::NonNumeric

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod config;
mod conn;
mod engine;
mod finish;
mod pipeline;
mod plan;
mod server;
mod store;
mod wire;

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;

pub use config::Builder;
pub use mcds_net::{Credentials, Distribution, TlsOptions, Version};
pub use store::TextStore;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
