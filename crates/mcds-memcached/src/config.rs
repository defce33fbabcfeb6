//! Settings of a [`MemcachedStore`] ([`Config`]) and the [`Builder`] that
//! sets them and resolves the servers' addresses.

use std::time::Duration;

use mcds_core::Result;
use mcds_net::incarnation::Version;
use mcds_net::route::Distribution;
use mcds_net::transport::{Credentials, Security, TlsOptions};

use crate::store::MemcachedStore;

/// How long a dial may take by default, and each exchange.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// Connections per server unless [`Builder::connections_per_server`] says
/// otherwise.
pub(crate) const DEFAULT_CONNECTIONS: usize = 2;

/// Settings of a [`MemcachedStore`], set through [`Builder`].
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) connect_timeout: Duration,
    pub(crate) io_timeout: Duration,
    pub(crate) item_size_limit: usize,
    pub(crate) connections_per_server: usize,
    pub(crate) down_backoff_base: Duration,
    pub(crate) down_backoff_max: Duration,
    /// Treat servers as no newer than this (tests of older servers' paths).
    pub(crate) version_cap: Option<Version>,
    /// How keys are placed on the servers.
    pub(crate) distribution: Distribution,
    /// TLS and credentials, as built from `tls` and `credentials` when the
    /// store is created.
    pub(crate) security: Security,
    /// The pool's name ([`Builder::pool_name`]; empty: the default pool).
    pub(crate) pool_name: String,
    /// How often the pool record is read again ([`Builder::pool_recheck`]).
    pub(crate) pool_recheck: Duration,
    /// The pool record's key and this client's list (set when the store
    /// is made, from the servers and the name).
    pub(crate) pool: std::sync::Arc<crate::pool::PoolSpec>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connect_timeout: DEFAULT_TIMEOUT,
            io_timeout: DEFAULT_TIMEOUT,
            item_size_limit: mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
            connections_per_server: DEFAULT_CONNECTIONS,
            down_backoff_base: Duration::from_millis(50),
            down_backoff_max: Duration::from_secs(1),
            version_cap: None,
            distribution: Distribution::Rendezvous,
            security: Security::default(),
            pool_name: String::new(),
            pool_recheck: crate::pool::DEFAULT_RECHECK,
            pool: std::sync::Arc::new(
                crate::pool::PoolSpec::new("", "", &[]).expect("the default pool key is a key"),
            ),
        }
    }
}

/// Configures a [`MemcachedStore`] before connecting.
///
/// ```no_run
/// use std::time::Duration;
/// use mcds_memcached::MemcachedStore;
///
/// let store = MemcachedStore::builder()
///     .io_timeout(Duration::from_millis(250))
///     .connect(["127.0.0.1:11211", "127.0.0.1:11212"])?;
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    config: Config,
    tls: Option<TlsOptions>,
    credentials: Option<Credentials>,
}

impl Builder {
    /// How long dialing a server may take (default 1 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Builder {
        self.config.connect_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long one request/response exchange may take, sending and reply
    /// together (default 1 s). An operation that has to dial first may also
    /// spend up to the connect timeout (and `io_timeout` for the version
    /// handshake) on the dial; a read retried on a fresh connection after a
    /// restart gets a second exchange.
    pub fn io_timeout(mut self, timeout: Duration) -> Builder {
        self.config.io_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The servers' item size limit, as with memcached's `-I` (default
    /// 1 MiB). Items over it are refused before they are sent.
    pub fn item_size_limit(mut self, bytes: usize) -> Builder {
        self.config.item_size_limit = bytes;
        self
    }

    /// How many connections each server gets (default 2, at least 1).
    ///
    /// Every thread and task using the store shares them: a caller's
    /// request goes out on one of them, together with the requests of the
    /// callers that arrived while the previous write was in flight (one
    /// `write` for all, each reply routed back to its caller), so a store
    /// never opens more than this many connections per server, whatever
    /// the number of callers. More connections let more round trips be in
    /// flight at once; fewer make larger batches. Two keep both cores of a
    /// small machine busy; [`MemcachedStore::connection_stats`] shows how
    /// full the writes are.
    ///
    /// [`MemcachedStore::connection_stats`]: crate::MemcachedStore::connection_stats
    pub fn connections_per_server(mut self, n: usize) -> Builder {
        self.config.connections_per_server = n.max(1);
        self
    }

    /// How long a server that refused a connection is left alone: the first
    /// wait, doubling up to the second (defaults 50 ms and 1 s).
    pub fn down_backoff(mut self, first: Duration, max: Duration) -> Builder {
        self.config.down_backoff_base = first;
        self.config.down_backoff_max = max.max(first);
        self
    }

    /// Use only what memcached `version` has, even where a server is newer:
    /// the protocol paths of older servers, run against a current one. For
    /// tests; servers older than 1.6.0 are still refused.
    ///
    /// ```no_run
    /// use mcds_memcached::{MemcachedStore, Version};
    ///
    /// // delete_cas as on 1.6.12 (a CAS write to an already expired item).
    /// let store = MemcachedStore::builder()
    ///     .version_cap(Version(1, 6, 12))
    ///     .connect(["127.0.0.1:11211"])?;
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn version_cap(mut self, version: Version) -> Builder {
        self.config.version_cap = Some(version);
        self
    }

    /// How keys are placed on the servers of a pool (default
    /// [`Distribution::Rendezvous`]). [`Distribution::Ketama`] places them
    /// as php-memcached does with `Memcached::OPT_LIBKETAMA_COMPATIBLE` and
    /// pylibmc with `behaviors={"ketama_weighted": True}`, so that PHP or
    /// Python applications and this store find each key on the same server;
    /// list the servers as they do (same host names, same order).
    ///
    /// Every process that uses a pool must place keys the same way: a store
    /// with another distribution looks for most keys on the wrong server.
    ///
    /// ```no_run
    /// use mcds_memcached::{Distribution, MemcachedStore};
    ///
    /// let store = MemcachedStore::builder()
    ///     .distribution(Distribution::Ketama)
    ///     .connect(["10.0.0.1:11211", "10.0.0.2:11211"])?;
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn distribution(mut self, distribution: Distribution) -> Builder {
        self.config.distribution = distribution;
        self
    }

    /// The name of the pool these servers form for this client (default:
    /// none, the one pool). Every server records the server list of its
    /// pool's clients (see [`pool`](crate::pool)), and a client whose list
    /// differs refuses to work; applications that share servers but no
    /// keys (each with a key prefix of its own) and use different lists
    /// give their pools different names. Letters, digits and `-_.` only.
    pub fn pool_name(mut self, name: &str) -> Builder {
        self.config.pool_name = name.to_string();
        self
    }

    /// How often the pool record of every server is read again (default
    /// 30 s, at least 10 ms): each connection is replaced by a new one at
    /// that age, and its handshake reads the record. A client
    /// whose list stopped being the pool's (another client ran
    /// [`adopt_pool`](MemcachedStore::adopt_pool)) refuses operations
    /// from its next reading on, so this bounds how long a change of the
    /// list must wait (its grace).
    pub fn pool_recheck(mut self, interval: Duration) -> Builder {
        self.config.pool_recheck = interval.max(Duration::from_millis(10));
        self
    }

    /// Connect with TLS (memcached started with `-Z`): the server's
    /// certificate is verified as [`TlsOptions`] says. TLS servers must be
    /// `host:port` (a unix socket is local already).
    ///
    /// ```no_run
    /// use mcds_memcached::{MemcachedStore, TlsOptions};
    ///
    /// let store = MemcachedStore::builder()
    ///     .tls(TlsOptions::new().ca_file("/etc/memcached/ca.pem"))
    ///     .connect(["cache.internal:11211"])?;
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn tls(mut self, tls: TlsOptions) -> Builder {
        self.tls = Some(tls);
        self
    }

    /// Authenticate every connection with memcached's ASCII auth (a server
    /// started with `-Y <authfile>`). [`Credentials::from_env`] reads them
    /// from `MCDS_USERNAME` and `MCDS_PASSWORD`.
    ///
    /// ```no_run
    /// use mcds_memcached::{Credentials, MemcachedStore};
    ///
    /// let store = MemcachedStore::builder()
    ///     .credentials(Credentials::new("app", "s3cret")?)
    ///     .connect(["127.0.0.1:11211"])?;
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn credentials(mut self, credentials: Credentials) -> Builder {
        self.credentials = Some(credentials);
        self
    }

    /// Create the store for these servers: `host:port` each, or
    /// `unix:/path/to/socket` (memcached's `-s`). Addresses are resolved and
    /// TLS files read now; connections are made on first use, so a server
    /// that is down shows up as an error on its keys, not here.
    pub fn connect<I, S>(mut self, servers: I) -> Result<MemcachedStore>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let name = &self.config.pool_name;
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            || name.len() > 64
        {
            return Err(mcds_core::Error::InvalidArgument(format!(
                "a pool name is up to 64 letters, digits, '-', '_' or '.'; got {name:?}"
            )));
        }
        let list = mcds_net::transport::resolve_servers(servers, self.tls.is_some())?;
        self.config.security = Security::new(self.tls.as_ref(), self.credentials.take())?;
        MemcachedStore::new(list, self.config)
    }
}
