//! The [`Store`] trait: memcached's operations, one object-safe interface for
//! every backend.

use crate::access::BoxFuture;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::item::{Item, Updated};
use crate::key::Key;
use crate::op::{Op, Reply};
use crate::retention::Retention;
use crate::ttl::Ttl;

/// The function [`Store::update`] calls: it receives the current value
/// (`None` if the key is missing) and returns the new value, or `None` to
/// leave the item unchanged.
pub type UpdateFn<'a> = dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>> + 'a;

/// A typed [`Store`] method per op of the op table (see
/// [`for_each_op!`](crate::for_each_op)): `execute` the op, read its reply.
macro_rules! store_methods {
    (
        ops { $(
            $(#[doc = $doc:literal])*
            $rw:ident $method:ident $variant:ident $shape:tt -> $ret:ty, $accessor:ident;
        )* }
        replies { $($replies:tt)* }
    ) => { $(
        store_method!($(#[doc = $doc])* $method $variant $shape -> $ret, $accessor);
    )* };
}

/// One method of [`store_methods!`]: a tuple op takes just its key.
macro_rules! store_method {
    ($(#[doc = $doc:literal])* $method:ident $variant:ident ($ty:ty) -> $ret:ty, $accessor:ident) => {
        $(#[doc = $doc])*
        #[allow(clippy::needless_lifetimes)]
        fn $method<'a>(&self, key: $ty) -> Result<$ret> {
            self.execute(&Op::$variant(key))?.$accessor()
        }
    };
    (
        $(#[doc = $doc:literal])* $method:ident $variant:ident
        { $( $(#[$fdoc:meta])* $field:ident : $fty:ty ),* $(,)? } -> $ret:ty, $accessor:ident
    ) => {
        $(#[doc = $doc])*
        #[allow(clippy::needless_lifetimes)]
        fn $method<'a>(&self, $($field: $fty),*) -> Result<$ret> {
            self.execute(&Op::$variant { $($field),* })?.$accessor()
        }
    };
}

/// A memcached-style key-value store: the embedded
/// [`MemoryStore`](crate::MemoryStore), real memcached (crate
/// `mcds-memcached`), or a wrapper such as [`CountingStore`](crate::CountingStore).
///
/// A backend implements one method, [`execute`](Store::execute): run one
/// [`Op`] and return its [`Reply`]. Everything else is provided on top of
/// it: the typed methods (`get`, `set`, `incr_or_init`, …, each a thin
/// wrapper that builds the op and reads the reply), [`update`](Store::update)
/// (a CAS loop), and [`pipeline`](Store::pipeline), which a backend
/// overrides to send a batch in one round trip. Wrappers and delegation
/// follow the one [`Op`] list.
///
/// **Adding an operation.** The ops are declared once, in the op table
/// (`for_each_op!` in `mcds-core/src/op.rs`): one entry there generates
/// the [`Op`] variant, its [`OpKind`](crate::OpKind), name and key, the
/// [`Reply`] accessor, the typed method here and its async twin on
/// [`Access`](crate::Access), and puts the op in the differential test and
/// the fuzz harnesses (they build every kind with [`Op::build`]). What is
/// left is per backend, so a new op touches these files:
///
/// 1. `mcds-core/src/op.rs`: the table entry (and a [`Reply`] kind if no
///    existing one fits);
/// 2. `mcds-core/src/memory.rs`: the embedded store's `execute`;
/// 3. `mcds-memcached/src/codec.rs`: its meta command, how its reply
///    decodes, and an example reply (the fuzz harness feeds it, and bytes
///    around it, to the decoder);
/// 4. `mcds-text/src/plan.rs`: its text command and how its reply decodes
///    (or why a proxy refuses it);
/// 5. a conformance case, which every backend runs, in its topic's file
///    of `mcds-testkit/src/conformance/`;
/// 6. the case's name in `conformance_suite!` (`conformance/mod.rs`).
///
/// Until the case is written, `pipeline_every_op` already sends the op in
/// a batch against each backend and the differential test compares it
/// with the embedded store on real memcached. Two recorded transcripts
/// of the meta fuzz harness's own tests (a real server's replies to one
/// op of each kind) are test data to record again.
///
/// Outcomes that are normal in memcached (a miss, "not stored", a CAS
/// conflict) are values; [`Error`] is for what the caller must handle. Every
/// structure in mcds is written once against `&dyn Store`.
///
/// Round trips are counted by [`traffic`](crate::traffic): a backend calls
/// [`traffic::record`](crate::traffic::record) once per network exchange.
///
/// ```
/// use mcds_core::{Key, MemoryStore, Store, Stored, Ttl};
///
/// let store = MemoryStore::new();
/// let k = Key::new("greeting")?;
/// assert!(store.add(&k, b"hello", Ttl::secs(60))?.is_stored());
/// assert_eq!(store.add(&k, b"again", Ttl::secs(60))?, Stored::NotStored);
/// assert_eq!(store.get(&k)?.unwrap().value, b"hello");
/// assert_eq!(store.incr_or_init(&Key::new("hits")?, 1, 1, Ttl::Never)?, 1);
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub trait Store: Send + Sync + std::fmt::Debug {
    /// A short name for messages ("memory", "memcached").
    fn backend_name(&self) -> &'static str;

    /// Run one operation. The reply is the [`Reply`] variant the op's
    /// documentation names.
    fn execute(&self, op: &Op<'_>) -> Result<Reply>;

    /// Run several operations with one round trip per server: one result
    /// per op, in order. The ops are applied one by one (not as a
    /// transaction); a failure fails only the ops it concerns.
    ///
    /// Ops on one key apply in their order. Ops on different keys may
    /// not: on memcached an `append`/`prepend` that found its key missing
    /// or its item full is finished after the batch (a probe tells which,
    /// and it is sent again if the key exists by then), so it can land
    /// after ops that followed it. A structure that needs one write to
    /// land before another sends them in two round trips.
    ///
    /// Default: each op through [`execute`](Store::execute), in order.
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        ops.iter().map(|op| self.execute(op)).collect()
    }

    /// [`execute`](Store::execute) without blocking the calling thread: the
    /// async API's way in (through [`Access`](crate::Access)).
    ///
    /// Default: `execute`, run when the future is first polled. That is
    /// right for a store whose ops never wait (the embedded store, wrappers
    /// of one); a store that does I/O (memcached) overrides it, so an async
    /// caller never blocks its executor's thread.
    fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
        Box::pin(async move { self.execute(op) })
    }

    /// [`pipeline`](Store::pipeline) without blocking the calling thread.
    /// Default: `pipeline`, run when first polled (see
    /// [`execute_async`](Store::execute_async)).
    fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
        Box::pin(async move { self.pipeline(ops) })
    }

    /// [`supports_cas`](Store::supports_cas) without blocking the calling
    /// thread (memcached may have to connect first). Default:
    /// `supports_cas`, run when first polled.
    fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move { self.supports_cas(key) })
    }

    /// Whether the server behind `key` has CAS ids, so that [`cas`](Store::cas),
    /// [`delete_cas`](Store::delete_cas) and [`update`](Store::update) can
    /// work. `false` for memcached started with `-C`, where every CAS id is
    /// 0: a structure that needs CAS (a lock) refuses to start anything
    /// there. Default `true`.
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        let _ = key;
        Ok(true)
    }

    /// Since when the server behind `key` has lost none of its items (no
    /// restart, flush or eviction): see [`Retention`]. A structure asks
    /// before it reads an absent item as "never written". Default
    /// [`Retention::Unknown`]: a store that cannot tell says so.
    fn retention(&self, key: &Key) -> Result<Retention> {
        let _ = key;
        Ok(Retention::Unknown(format!(
            "the {} store does not say whether it lost items",
            self.backend_name()
        )))
    }

    /// [`retention`](Store::retention) without blocking the calling thread
    /// (memcached asks the server). Default: `retention`, run when first
    /// polled.
    fn retention_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<Retention>> {
        Box::pin(async move { self.retention(key) })
    }

    /// Whether `a` and `b` live on the same server, so the commands of one
    /// pipelined batch on both are applied in order. Default `true` (one
    /// node); a pool answers by its routing.
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        let _ = (a, b);
        true
    }

    /// The independent servers of a quorum, when this store is one
    /// ([`QuorumStore`](crate::QuorumStore)): a lock made from it takes a
    /// majority of them, and every other operation is refused. Default
    /// `None`; a wrapper forwards its inner store's.
    fn quorum(&self) -> Option<&crate::QuorumStore> {
        None
    }

    /// The largest item (key + value + [`ITEM_OVERHEAD`](crate::backend::ITEM_OVERHEAD))
    /// the store accepts, so a structure can refuse an oversized value
    /// before it writes anything else. Default 1 MiB.
    fn item_size_limit(&self) -> usize {
        crate::DEFAULT_ITEM_SIZE_LIMIT
    }

    // The typed methods, one per op of the op table, each `execute` and
    // its reply's accessor: `get`, `set`, `add`, `replace`, `cas`,
    // `append`, `prepend`, `append_or_add`, `incr`, `decr`,
    // `incr_or_init`, `delete`, `delete_cas`, `touch`.
    crate::for_each_op!(store_methods);

    /// Read many items in one batch (one round trip per server). The result
    /// has one entry per key, in order; any failure fails the whole call.
    fn get_multi(&self, keys: &[Key]) -> Result<Vec<Option<Item>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
        self.pipeline(&ops)
            .into_iter()
            .map(|r| r.and_then(Reply::item))
            .collect()
    }

    /// Read-modify-write by CAS, retried with backoff when another writer
    /// wins, at most `max_attempts` times (then [`Error::Conflict`]).
    ///
    /// `f` receives the current value (`None` if missing) and returns the new
    /// value, or `None` to leave the item as it is. A missing key is created
    /// with `add`. Costs 2 round trips when there is no conflict.
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        crate::backend::update(self, key, ttl, max_attempts, f)
    }
}

/// `Store` for smart pointers and references to a store, so `&S`,
/// `Box<dyn Store>` and `Arc<dyn Store>` can be used (and wrapped, e.g. in a
/// [`CountingStore`](crate::CountingStore)) wherever a store is expected.
/// Only the methods a backend may override are forwarded (`update`
/// among them: a backend may refuse it outright, and `incr_or_init`: the
/// embedded store answers it without an `Op`); the other typed ones reach
/// the inner store through `execute`.
macro_rules! delegate_store {
    ($($ptr:ty),*) => {$(
        impl<S: Store + ?Sized> Store for $ptr {
            fn backend_name(&self) -> &'static str {
                (**self).backend_name()
            }
            fn execute(&self, op: &Op<'_>) -> Result<Reply> {
                (**self).execute(op)
            }
            fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
                (**self).pipeline(ops)
            }
            fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
                (**self).execute_async(op)
            }
            fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
                (**self).pipeline_async(ops)
            }
            fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
                (**self).supports_cas_async(key)
            }
            fn supports_cas(&self, key: &Key) -> Result<bool> {
                (**self).supports_cas(key)
            }
            fn colocated(&self, a: &Key, b: &Key) -> bool {
                (**self).colocated(a, b)
            }
            fn retention(&self, key: &Key) -> Result<Retention> {
                (**self).retention(key)
            }
            fn retention_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<Retention>> {
                (**self).retention_async(key)
            }
            fn item_size_limit(&self) -> usize {
                (**self).item_size_limit()
            }
            fn quorum(&self) -> Option<&crate::QuorumStore> {
                (**self).quorum()
            }
            fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
                (**self).incr_or_init(key, delta, initial, ttl)
            }
            fn update(
                &self,
                key: &Key,
                ttl: Ttl,
                max_attempts: u32,
                f: &mut UpdateFn<'_>,
            ) -> Result<Updated> {
                (**self).update(key, ttl, max_attempts, f)
            }
        }
    )*};
}

delegate_store!(&S, Box<S>, std::sync::Arc<S>);
