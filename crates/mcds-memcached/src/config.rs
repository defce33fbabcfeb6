//! Settings of a [`MemcachedStore`] ([`Config`]) and the [`Builder`] that
//! sets them and resolves the servers' addresses.

use std::time::Duration;

use mcds_core::Result;
use mcds_net::NetOptions;
use mcds_net::incarnation::Version;

use crate::store::MemcachedStore;

/// Connections per server unless [`Builder::connections_per_server`] says
/// otherwise.
pub(crate) const DEFAULT_CONNECTIONS: usize = 4;

/// Settings of a [`MemcachedStore`], set through [`Builder`].
#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// What both backends have (timeouts, limits, connections, routing,
    /// TLS and credentials).
    pub(crate) net: NetOptions,
    /// Treat servers as no newer than this (tests of older servers' paths).
    pub(crate) version_cap: Option<Version>,
    /// The pool's name ([`Builder::pool_name`]; empty: the default pool).
    pub(crate) pool_name: String,
    /// How often the pool record is read again ([`Builder::pool_recheck`]).
    pub(crate) pool_recheck: Duration,
    /// The pool record's key and this client's list (set when the store
    /// is made, from the servers and the name).
    pub(crate) pool: std::sync::Arc<crate::pool::PoolSpec>,
    /// Async callers inside a tokio runtime drive the connections on it
    /// ([`Builder::drive_on_runtime`]).
    pub(crate) on_runtime: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            net: NetOptions::new(DEFAULT_CONNECTIONS),
            version_cap: None,
            pool_name: String::new(),
            pool_recheck: crate::pool::DEFAULT_RECHECK,
            on_runtime: true,
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
}

impl Builder {
    // connect_timeout, io_timeout, item_size_limit, connections_per_server,
    // down_backoff, distribution, tls and credentials: as mcds-text's.
    mcds_net::builder_options!(config.net);

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

    /// Whether async calls made inside a tokio runtime write and read the
    /// shared connections on that runtime's own threads (default `true`;
    /// with the crate's `tokio` feature only, otherwise ignored). `false`:
    /// every async call goes through each connection's helper thread, as
    /// without the feature and on other executors: two thread wake-ups
    /// per call, but no use of the runtime's I/O and time drivers (a
    /// runtime built without them makes the default path panic, as tokio's
    /// own sockets do).
    pub fn drive_on_runtime(mut self, on: bool) -> Builder {
        self.config.on_runtime = on;
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
        let list = self.config.net.resolve(servers)?;
        MemcachedStore::new(list, self.config)
    }
}
