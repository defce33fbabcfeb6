//! [`TextStore`]: its construction, its public methods and its [`Store`]
//! impl. An op is planned as text commands for one server (or proxy)
//! unit (`plan.rs`), sent by one engine for single ops and pipelines
//! alike (`engine.rs`, `pipeline.rs`), and its replies decoded
//! (`plan.rs`); the ops text lacks are finished by the shared loops of
//! single exchanges (`finish.rs`).

use std::sync::Arc;

use mcds_core::{
    BoxFuture, Key, Op, OwnedOp, Reply, Result, Store, Ttl, UpdateFn, Updated, backend, traffic,
};
use mcds_net::transport::Endpoint;
use mcds_net::{Router, Version};

use crate::config::{Builder, Config};
use crate::engine::Session;
use crate::plan::{Outcome, PROXY_HINT, unsupported};
use crate::server::Server;

/// A [`Store`] over memcached's classic text protocol: direct connections
/// to one server or a pool, or connections to a proxy. See the
/// [crate docs](crate) for what each path guarantees.
///
/// The store is `Send + Sync` and meant to be shared (`Arc`) by all threads
/// of a process; it keeps a small pool of connections per address.
///
/// ```
/// use mcds_core::{Key, Store, Ttl};
/// use mcds_text::TextStore;
/// # let server = mcds_testserver::MemcachedServer::start_default();
/// # let addr = server.addr();
///
/// // addr is "127.0.0.1:<port>" of a running memcached (any version)
/// let store = TextStore::connect(&addr)?;
/// let k = Key::new("visits")?;
/// assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 1);
/// assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 2);
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone)]
pub struct TextStore {
    // Each part shared (the store is a handful of `Arc`s, cloned cheaply):
    // the async API runs an op on a worker thread with a clone.
    pub(crate) servers: Arc<[Server]>,
    pub(crate) ids: Arc<[String]>,
    /// Where each key lives, computed once from `config.net.distribution`.
    pub(crate) router: Arc<Router>,
    pub(crate) config: Arc<Config>,
}

impl std::fmt::Debug for TextStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextStore")
            .field("servers", &self.ids)
            .field("behind_proxy", &self.config.behind_proxy)
            .field("distribution", &self.config.net.distribution)
            .field("config", &self.config)
            .finish()
    }
}

impl TextStore {
    /// Connect directly to one server or a comma-separated list
    /// (`"127.0.0.1:11211,127.0.0.1:11212"`) with the default settings.
    pub fn connect(servers: &str) -> Result<TextStore> {
        Builder::default().connect(servers.split(',').filter(|s| !s.trim().is_empty()))
    }

    /// Configure timeouts, limits, routing and proxy mode before
    /// connecting.
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub(crate) fn new(servers: Vec<(String, Endpoint)>, config: Config) -> TextStore {
        let servers: Vec<Server> = servers
            .into_iter()
            .map(|(addr, endpoint)| Server::new(addr, endpoint))
            .collect();
        let ids: Vec<String> = servers.iter().map(|s| s.addr.clone()).collect();
        let router = Router::new(config.net.distribution, &ids);
        TextStore {
            servers: servers.into(),
            ids: ids.into(),
            router: Arc::new(router),
            config: Arc::new(config),
        }
    }

    /// The addresses, as configured.
    pub fn servers(&self) -> &[String] {
        &self.ids
    }

    /// Whether the addresses are proxies ([`Builder::behind_proxy`]).
    pub fn is_behind_proxy(&self) -> bool {
        self.config.behind_proxy
    }

    /// The index of the address that owns `key` (by the configured
    /// [`Distribution`](crate::Distribution)).
    pub fn server_for(&self, key: &Key) -> usize {
        if self.servers.len() == 1 {
            return 0;
        }
        self.router.server_for(key.as_bytes()) % self.servers.len()
    }

    /// The version the direct server at `index` reported on its latest
    /// connection, if one was made (`None` behind a proxy).
    pub fn server_version(&self, index: usize) -> Option<Version> {
        self.servers
            .get(index)
            .and_then(Server::incarnation)
            .map(|i| i.version)
    }

    pub(crate) fn check_size(&self, key: &Key, value_len: usize) -> Result<()> {
        backend::check_item_size(key, value_len, self.config.net.item_size_limit).map(drop)
    }

    pub(crate) fn open(&self, server: usize) -> Result<Session<'_>> {
        let (conn, pooled) = self.servers[server].checkout(&self.config)?;
        Ok(Session {
            server: &self.servers[server],
            config: &self.config,
            conn: Some(conn),
            pooled,
        })
    }
}

/// Run `work` on the `blocking` crate's thread pool, and count its round
/// trips on the awaiting thread.
async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (out, traffic) = blocking::unblock(move || traffic::measure(work)).await;
    traffic::add(traffic);
    out
}

impl Store for TextStore {
    fn backend_name(&self) -> &'static str {
        if self.config.behind_proxy {
            "memcached-text-proxy"
        } else {
            "memcached-text"
        }
    }

    /// One exchange, except the ops that text lacks: `append`/`prepend`
    /// add a probe after NOT_STORED (missing, or too large?),
    /// `incr_or_init` and `append_or_add` run their loops after a miss.
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        match self.first_exchange(op)? {
            Outcome::Done(r) => r,
            Outcome::Again => self.finish(op),
        }
    }

    /// [`execute`](Store::execute) on a worker thread of a shared pool
    /// (the `blocking` crate's), so the caller's executor thread never
    /// blocks: the op is copied (an [`OwnedOp`]) and the store cloned (a
    /// few `Arc`s). Its round trips are counted on the caller's thread.
    /// Dropping the future does not stop the op: it runs to its end.
    fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
        let store = self.clone();
        let op = OwnedOp::from(op);
        Box::pin(off_thread(move || store.execute(&op.op())))
    }

    /// [`pipeline`](Store::pipeline) on a worker thread, as
    /// [`execute_async`](Store::execute_async).
    fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
        let store = self.clone();
        let ops: Vec<OwnedOp> = ops.iter().map(OwnedOp::from).collect();
        Box::pin(off_thread(move || {
            let ops: Vec<Op<'_>> = ops.iter().map(OwnedOp::op).collect();
            store.pipeline(&ops)
        }))
    }

    /// [`supports_cas`](Store::supports_cas) on a worker thread (it may
    /// dial), as [`execute_async`](Store::execute_async).
    fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
        let store = self.clone();
        let key = key.clone();
        Box::pin(off_thread(move || store.supports_cas(&key)))
    }

    /// Each server's share in payloads of pipelined commands, every server
    /// written before any reply is read: one round trip of latency for the
    /// batch (plus one for the `add`s of counters and logs it creates).
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        self.run_pipeline(ops)
    }

    /// Behind a proxy: `false`, always (CAS ids cannot be tied to a
    /// server incarnation there). Direct: whether the server has CAS ids
    /// (not `-C`), as the handshake of a live connection found it.
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        if self.config.behind_proxy {
            return Ok(false);
        }
        let server = self.server_for(key);
        let session = self.open(server)?;
        Ok(session
            .conn
            .as_ref()
            .and_then(|c| c.incarnation)
            .is_some_and(|i| i.cas))
    }

    /// Direct: by routing. Behind a proxy only a key with itself: the proxy
    /// places keys, and may apply commands to different servers in any
    /// order.
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        if self.config.behind_proxy {
            return a == b;
        }
        self.server_for(a) == self.server_for(b)
    }

    fn item_size_limit(&self) -> usize {
        self.config.net.item_size_limit
    }

    /// The CAS loop of [`Store::update`]; behind a proxy
    /// [`Error::Unsupported`](mcds_core::Error::Unsupported) before anything is read, whether or not the
    /// key exists: a read-modify-write that worked only while the key is
    /// missing (its first write is an `add`) would fail later instead of
    /// now.
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        if self.config.behind_proxy {
            return Err(unsupported("update", PROXY_HINT));
        }
        mcds_core::backend::update(self, key, ttl, max_attempts, f)
    }
}
