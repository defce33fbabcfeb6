//! [`MemcachedStore`] and its [`Store`] impl: which protocol each op takes,
//! one function per protocol variant.
//!
//! | variant | function | round trips |
//! |---|---|---|
//! | one command, one reply (all but the two below) | [`Session::execute`] | 1 |
//! | `append`/`prepend`, a probe after `NS` | [`concat`](MemcachedStore::concat) | 1, 2 on `NS` |
//! | `append_or_add` (append, then add) | [`append_then_add`](MemcachedStore::append_then_add) | 2 on first touch, then 1 |
//!
//! `append_or_add` does not use `ms MA N` (create on a miss, 1.6.20+):
//! a meta write memcached cannot allocate deletes the item it would have
//! changed (see [`codec`](crate::codec)), so appends are text commands,
//! which have no create-on-miss.
//!
//! [`Store::pipeline`] is in [`pipeline`](crate::pipeline); an append-like
//! op that answered `NS` there is finished here
//! ([`finish_not_stored`](MemcachedStore::finish_not_stored)).

use std::time::Duration;

use mcds_core::{BoxFuture, Error, Io, Key, Op, Reply, Result, Store, Ttl, backend, block_on};
use mcds_net::fallback::{self, NotStored, Start, Steps};
use mcds_net::incarnation::Version;
use mcds_net::route::Router;
use mcds_net::transport::Endpoint;
use std::sync::Arc;

use crate::codec;
use crate::config::{Builder, Config};
use crate::pool::PoolSpec;
use crate::server::Server;
use crate::session::Session;

/// A [`Store`] on real memcached: one server or a pool. See the
/// [crate docs](crate) for the protocol paths, routing, timeouts and errors.
///
/// The store is `Send + Sync` and meant to be shared (`Arc`) by all threads
/// of a process; it keeps a small pool of connections per server.
///
/// ```
/// use mcds_core::{Key, Store, Stored, Ttl};
/// use mcds_memcached::MemcachedStore;
/// # let pool = mcds_testserver::ServerPool::start(3, Default::default());
/// # let servers = pool.servers_arg();
///
/// // servers is "127.0.0.1:<port>,127.0.0.1:<port>,127.0.0.1:<port>"
/// let store = MemcachedStore::connect(&servers)?;
/// let owner = Key::new("job:42:owner")?;
/// assert!(store.add(&owner, b"worker-1", Ttl::secs(30))?.is_stored());
/// assert_eq!(store.add(&owner, b"worker-2", Ttl::secs(30))?, Stored::NotStored);
/// let keys: Vec<Key> = (0..10).map(|i| Key::new(format!("k{i}"))).collect::<Result<_, _>>()?;
/// assert!(store.get_multi(&keys)?.iter().all(Option::is_none)); // one round trip per server
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub struct MemcachedStore {
    pub(crate) servers: Vec<Arc<Server>>,
    pub(crate) ids: Vec<String>,
    /// Where keys go ([`Distribution`](crate::Distribution)), computed
    /// once.
    router: Router,
    pub(crate) config: Config,
}

impl std::fmt::Debug for MemcachedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemcachedStore")
            .field("servers", &self.ids)
            .field("config", &self.config)
            .finish()
    }
}

/// One server's answer to `stats` ([`MemcachedStore::stats`]): each
/// statistic's name and value, as the server sent them and in its order.
pub type Stats = Vec<(String, String)>;

/// How a store uses its connections ([`MemcachedStore::connection_stats`]):
/// counts since the store was built, summed over its servers.
///
/// `requests / writes` is the mean number of callers' requests one `write`
/// carried: 1 with one caller at a time, more as concurrent callers are
/// pipelined together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Connections open now (at most
    /// [`connections_per_server`](crate::Builder::connections_per_server)
    /// per server).
    pub open: usize,
    /// Connections dialed so far (each a handshake round trip).
    pub dials: u64,
    /// Writes of requests to the servers.
    pub writes: u64,
    /// Requests written (a single op or one pipeline's share for a server).
    pub requests: u64,
    /// Times a caller whose reply had come handed its connection to the
    /// next waiting caller, which then wrote the requests queued meanwhile.
    pub handoffs: u64,
    /// Connections checked with a non-blocking peek before a write because
    /// they had sat idle (see the crate docs).
    pub idle_checks: u64,
    /// Connections whose helper thread has been started: the thread that
    /// drives a connection for async callers no runtime drives it for
    /// (other executors, TLS; see the crate docs).
    pub helper_threads: usize,
}

impl MemcachedStore {
    /// Connect to one server or a comma-separated list
    /// (`"127.0.0.1:11211,127.0.0.1:11212"`) with the default settings.
    pub fn connect(servers: &str) -> Result<MemcachedStore> {
        Builder::default().connect(servers.split(',').filter(|s| !s.trim().is_empty()))
    }

    /// Configure timeouts, limits and key placement before connecting.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The store over these servers (each its address as configured and
    /// what it resolved to), made by [`Builder::connect`].
    pub(crate) fn new(servers: Vec<(String, Endpoint)>, config: Config) -> Result<MemcachedStore> {
        let servers: Vec<Arc<Server>> = servers
            .into_iter()
            .map(|(addr, endpoint)| {
                Server::new(
                    addr,
                    endpoint,
                    config.net.connections_per_server,
                    cfg!(feature = "tokio") && config.on_runtime && config.net.tls.is_none(),
                )
            })
            .collect();
        let ids: Vec<String> = servers.iter().map(|s| s.addr.clone()).collect();
        let distribution = config.net.distribution.name();
        let mut config = config;
        config.pool = Arc::new(PoolSpec::new(&config.pool_name, distribution, &ids)?);
        Ok(MemcachedStore {
            router: Router::new(config.net.distribution, &ids),
            servers,
            ids,
            config,
        })
    }

    /// The servers, as configured.
    pub fn servers(&self) -> &[String] {
        &self.ids
    }

    /// The index of the server that owns `key`, as the store's
    /// [`Distribution`](crate::Distribution) places it.
    pub fn server_for(&self, key: &Key) -> usize {
        self.router.server_for(key.as_bytes())
    }

    /// The version the server at `index` reported on its latest connection,
    /// if one was made.
    pub fn server_version(&self, index: usize) -> Option<Version> {
        self.servers.get(index).and_then(|s| s.learned.version())
    }

    /// The value of `key` and how long it has left before it expires, as
    /// the server that owns it counts (`mg <key> v t`, one round trip):
    /// `None` on a miss; the time left is `None` for an item that never
    /// expires, and whole seconds otherwise (memcached keeps no finer
    /// time). What an operator asks of a lock item (`mcds lock status`);
    /// no structure depends on it, as none depends on when an item expires.
    ///
    /// ```no_run
    /// use mcds_core::Key;
    /// use mcds_memcached::MemcachedStore;
    ///
    /// let store = MemcachedStore::connect("127.0.0.1:11211")?;
    /// if let Some((value, left)) = store.get_with_ttl(&Key::new("lock:nightly:owner")?)? {
    ///     println!("held by {} for {left:?}", String::from_utf8_lossy(&value));
    /// }
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn get_with_ttl(&self, key: &Key) -> Result<Option<(Vec<u8>, Option<Duration>)>> {
        let mut s = self.session(key)?;
        let r = s.exchange(key, &codec::get_with_ttl(key))?;
        codec::value_and_ttl(&r, s.server_addr())
    }

    /// Every server's general-purpose statistics, as memcached's `stats`
    /// command lists them (`pid`, `uptime`, `version`, `curr_items`,
    /// `bytes`, `get_hits`, `evictions`, …): for each server, in
    /// configuration order, its address as configured and either its
    /// [`Stats`] or why it did not answer.
    ///
    /// Servers are asked one after the other, each on a pooled connection
    /// (or a new one, whose handshake comes first) within the I/O timeout;
    /// a server in its backoff window answers [`Error::ServerDown`] at once.
    /// One round trip per server. For operators and monitoring: no
    /// structure needs it.
    ///
    /// ```
    /// use mcds_memcached::MemcachedStore;
    /// # let server = mcds_testserver::MemcachedServer::start_default();
    /// # let addr = server.addr();
    ///
    /// let store = MemcachedStore::connect(&addr)?;
    /// for (server, stats) in store.stats() {
    ///     let stats = stats?;
    ///     let items = stats.iter().find(|(name, _)| name == "curr_items");
    ///     println!("{server}: {items:?}");
    /// }
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn stats(&self) -> Vec<(String, Result<Stats>)> {
        self.servers
            .iter()
            .map(|server| {
                let stats = Session::open_unchecked(server, &self.config).stats();
                (server.addr.clone(), stats)
            })
            .collect()
    }

    /// A session with the server that owns `key`.
    /// How the store has used its connections so far: how many are open
    /// and how many requests each write carried ([`ConnectionStats`]).
    ///
    /// ```
    /// use mcds_core::{Key, Store};
    /// use mcds_memcached::MemcachedStore;
    /// # let server = mcds_testserver::MemcachedServer::start_default();
    /// let store = MemcachedStore::builder()
    ///     .connections_per_server(2)
    ///     .connect([server.addr()])?;
    /// std::thread::scope(|s| {
    ///     for t in 0..16 {
    ///         let store = &store;
    ///         s.spawn(move || {
    ///             let key = Key::new(format!("k{t}")).unwrap();
    ///             for _ in 0..100 {
    ///                 store.set(&key, b"v", mcds_core::Ttl::Never).unwrap();
    ///             }
    ///         });
    ///     }
    /// });
    /// let stats = store.connection_stats();
    /// assert!(stats.open <= 2);
    /// assert_eq!(stats.requests, 1600);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn connection_stats(&self) -> ConnectionStats {
        let mut stats = ConnectionStats::default();
        for lane in self.servers.iter().flat_map(|s| &s.lanes) {
            let c = &lane.counters;
            let load =
                |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
            stats.open += usize::from(lane.is_open());
            stats.dials += load(&c.dials);
            stats.writes += load(&c.writes);
            stats.requests += load(&c.requests);
            stats.handoffs += load(&c.handoffs);
            stats.idle_checks += load(&c.idle_checks);
            stats.helper_threads += usize::from(lane.has_helper());
        }
        stats
    }

    fn session(&self, key: &Key) -> Result<Session<'_>> {
        Session::open(&self.servers[self.server_for(key)], &self.config)
    }

    fn check_size(&self, key: &Key, value_len: usize) -> Result<()> {
        backend::check_item_size(key, value_len, self.config.net.item_size_limit).map(drop)
    }

    /// `append`/`prepend` (`op`): NS is both "missing" and "the result
    /// would be too large", so each is followed by one probe
    /// ([`fallback::concat`]).
    async fn concat(&self, io: Io, op: &Op<'_>, start: Start) -> Result<bool> {
        let (Op::Append { key, value } | Op::Prepend { key, value }) = *op else {
            return Err(Error::Internal(format!("concat of a {} op", op.name())));
        };
        let prepend = matches!(op, Op::Prepend { .. });
        let mut s = self.session(key)?;
        let mut steps = MetaSteps { session: &mut s };
        let limit = self.config.net.item_size_limit;
        fallback::concat(&mut steps, io, key, value, prepend, start, limit).await
    }

    /// `append_or_add`: the append/add loop ([`fallback::append_or_add`]),
    /// from the append, or from the add when a pipelined append already
    /// answered NS.
    async fn append_or_add(
        &self,
        io: Io,
        key: &Key,
        value: &[u8],
        ttl: Ttl,
        start: Start,
    ) -> Result<()> {
        self.check_size(key, value.len())?;
        let mut s = self.session(key)?;
        let mut steps = MetaSteps { session: &mut s };
        let limit = self.config.net.item_size_limit;
        fallback::append_or_add(&mut steps, io, key, value, ttl, start, limit).await
    }

    /// One op in `io` mode: the blocking [`Store::execute`] and the async
    /// [`Store::execute_async`] are this one function.
    pub(crate) async fn execute_io(&self, io: Io, op: &Op<'_>) -> Result<Reply> {
        self.pool_gate(io).await?;
        match *op {
            // The two multi-step paths are boxed: their state would make
            // every op's future larger (1,128 bytes unboxed), past what the
            // allocator serves from its per-thread cache, and the async
            // API boxes each op's future (about 250 instructions more per
            // op, measured with callgrind at 64 tasks).
            Op::Append { .. } | Op::Prepend { .. } => Box::pin(self.concat(io, op, Start::Write))
                .await
                .map(Reply::Applied),
            Op::AppendOrAdd { key, value, ttl } => {
                Box::pin(self.append_or_add(io, key, value, ttl, Start::Write))
                    .await
                    .map(|()| Reply::Done)
            }
            _ => self.session(op.key())?.execute(io, op).await,
        }
    }

    /// Finish an op its pipeline could not: an append-like op that
    /// answered NS (missing, or too large). A probe tells which; a key
    /// that exists and has room (created, or shrunk by a compaction, since
    /// the batch reached it) is appended to again. The ops after it in its
    /// batch were applied before this: a structure that needs an append to
    /// land before its next write sends them in two round trips (see
    /// [`Store::pipeline`]).
    pub(crate) async fn finish_not_stored(&self, io: Io, op: &Op<'_>) -> Result<Reply> {
        match *op {
            Op::Append { key, value } | Op::Prepend { key, value } => {
                let reason = MetaSteps {
                    session: &mut self.session(key)?,
                }
                .probe(io, key, value.len())
                .await?;
                match reason {
                    NotStored::Missing => Ok(Reply::Applied(false)),
                    // The probe's connection is back in the pool first.
                    NotStored::Exists(_) => self.execute_io(io, op).await,
                }
            }
            Op::AppendOrAdd { key, value, ttl } => {
                self.append_or_add(io, key, value, ttl, Start::AfterNotStored)
                    .await?;
                Ok(Reply::Done)
            }
            _ => self.execute_io(io, op).await,
        }
    }
}

/// The single exchanges of the fallback loops ([`fallback`]), all on one
/// session (one server incarnation).
struct MetaSteps<'s, 'a> {
    session: &'s mut Session<'a>,
}

impl MetaSteps<'_, '_> {
    /// `op` in one exchange: whether it stored (`HD`, not `NS`).
    async fn stored(&mut self, io: Io, op: &Op<'_>) -> Result<bool> {
        let (r, _) = self.session.exchange_op(io, op).await?;
        codec::stored(&r, op.name(), self.session.server_addr())
    }
}

impl fallback::Steps for MetaSteps<'_, '_> {
    async fn concat(&mut self, io: Io, key: &Key, value: &[u8], prepend: bool) -> Result<bool> {
        let op = if prepend {
            Op::Prepend { key, value }
        } else {
            Op::Append { key, value }
        };
        self.stored(io, &op).await
    }

    async fn add(&mut self, io: Io, key: &Key, value: &[u8], ttl: Ttl) -> Result<bool> {
        self.stored(io, &Op::Add { key, value, ttl }).await
    }

    /// One probe (`mg <key> s c`): the key is missing, or it exists and
    /// the append would exceed the item limit ([`Error::ValueTooLarge`]),
    /// or it exists and fits (it was created between the two commands);
    /// its version is its raw CAS id (none without CAS ids, `-C`).
    async fn probe(&mut self, io: Io, key: &Key, added: usize) -> Result<NotStored> {
        let r = self
            .session
            .exchange_io(io, key, &codec::probe(key))
            .await?;
        let Some(current) = codec::probed_size(&r) else {
            return Ok(NotStored::Missing);
        };
        let limit = self.session.item_size_limit();
        backend::check_item_size(key, current.saturating_add(added), limit)?;
        let cas = codec::probed_cas(&r);
        Ok(NotStored::Exists((cas != 0).then_some(cas)))
    }

    async fn incr(&mut self, io: Io, key: &Key, delta: u64) -> Result<Option<u64>> {
        let op = Op::Incr { key, delta };
        let (r, incarnation) = self.session.exchange_op(io, &op).await?;
        codec::decode(&op, Some(r), &incarnation, self.session.server_addr())?.counter()
    }
}

impl Store for MemcachedStore {
    fn backend_name(&self) -> &'static str {
        "memcached"
    }

    /// One command and one round trip, except: `append`/`prepend` add a
    /// probe after `NS` (missing, or too large?), and `append_or_add` is
    /// the append/add loop. `delete_cas` is
    /// `md <key> C<cas>`, or before 1.6.13 (whose `md` ignores `C`) a CAS
    /// write of an item that is already expired (`cas <key> 0 -1 0 <cas>`):
    /// one atomic command either way.
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        block_on(self.execute_io(Io::Blocking, op))
    }

    /// The op, queued on a shared connection; its reply comes through a
    /// waker, and no thread blocks (see the crate docs, "Async").
    fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
        Box::pin(self.execute_io(Io::Async, op))
    }

    fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
        Box::pin(self.run_pipeline(Io::Async, ops))
    }

    fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move { Ok(self.session(key)?.incarnation_io(Io::Async).await?.cas) })
    }

    /// Each server's share in one payload, all servers written before any
    /// reply is read: one round trip of latency for the batch.
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        block_on(self.run_pipeline(Io::Blocking, ops))
    }

    /// `false` on a server started with `-C`, whose CAS ids are all 0, as
    /// the handshake of a live connection found it: a pooled connection is
    /// checked first (one `recv` peek, no round trip), so a server that
    /// restarted with `-C` is seen on its new connection. Not a cached
    /// answer: that would grant a lock on such a server.
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        Ok(self.session(key)?.incarnation()?.cas)
    }

    fn colocated(&self, a: &Key, b: &Key) -> bool {
        self.server_for(a) == self.server_for(b)
    }

    fn item_size_limit(&self) -> usize {
        self.config.net.item_size_limit
    }

    /// From the `stats` of the server that owns `key` (1 round trip), and
    /// once it has lost anything, the record its clients share (1 more, 2
    /// when it must be written): see [`retention`](crate::retention).
    fn retention(&self, key: &Key) -> Result<mcds_core::Retention> {
        block_on(self.retention_io(Io::Blocking, key))
    }

    fn retention_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<mcds_core::Retention>> {
        Box::pin(self.retention_io(Io::Async, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The async API boxes each op's future; glibc serves blocks of up to
    /// 1,032 bytes from a per-thread cache, larger ones from its arenas at
    /// about ten times the instructions (callgrind, 64 tasks). Boxing the
    /// rare multi-step paths keeps an op's future under that.
    #[test]
    fn an_ops_future_fits_the_allocators_cache() {
        // (Never polled: no connection is made.)
        let store = MemcachedStore::builder().connect(["127.0.0.1:1"]).unwrap();
        let k = Key::new("k").unwrap();
        let op = Op::Incr { key: &k, delta: 1 };
        let future = store.execute_io(Io::Async, &op);
        let size = std::mem::size_of_val(&future);
        assert!(size <= 1_000, "an op's future is {size} bytes");
    }
}
