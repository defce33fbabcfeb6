//! Settings of a [`TextStore`] ([`Config`]), the [`Builder`] that sets them
//! and resolves the addresses.

use std::time::Duration;

use mcds_core::Result;
use mcds_net::Distribution;
use mcds_net::transport::{self, Credentials, Security, TlsOptions};

use crate::store::TextStore;

/// How long a dial may take by default, and each exchange.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// Settings of a [`TextStore`], set through [`Builder`].
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) connect_timeout: Duration,
    pub(crate) io_timeout: Duration,
    pub(crate) item_size_limit: usize,
    pub(crate) max_idle: usize,
    pub(crate) down_backoff_base: Duration,
    pub(crate) down_backoff_max: Duration,
    pub(crate) behind_proxy: bool,
    pub(crate) distribution: Distribution,
    /// TLS and credentials, built when the store is created.
    pub(crate) security: Security,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connect_timeout: DEFAULT_TIMEOUT,
            io_timeout: DEFAULT_TIMEOUT,
            item_size_limit: mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
            max_idle: 8,
            down_backoff_base: Duration::from_millis(50),
            down_backoff_max: Duration::from_secs(1),
            behind_proxy: false,
            distribution: Distribution::Rendezvous,
            security: Security::default(),
        }
    }
}

/// Configures a [`TextStore`] before connecting.
///
/// ```no_run
/// use std::time::Duration;
/// use mcds_text::TextStore;
///
/// // Direct connections to two memcached servers (any version).
/// let pool = TextStore::builder()
///     .io_timeout(Duration::from_millis(250))
///     .connect(["127.0.0.1:11211", "127.0.0.1:11212"])?;
///
/// // A twemproxy (nutcracker) in front of a pool: no CAS (see the crate docs).
/// let proxied = TextStore::builder().behind_proxy(true).connect(["127.0.0.1:22121"])?;
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
    /// together (default 1 s); a new direct connection's handshake gets as
    /// long again.
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

    /// Idle connections kept per address (default 8).
    pub fn max_idle(mut self, n: usize) -> Builder {
        self.config.max_idle = n;
        self
    }

    /// How long an address that refused a connection is left alone: the
    /// first wait, doubling up to the second (defaults 50 ms and 1 s).
    pub fn down_backoff(mut self, first: Duration, max: Duration) -> Builder {
        self.config.down_backoff_base = first;
        self.config.down_backoff_max = max.max(first);
        self
    }

    /// The addresses are proxies (twemproxy/nutcracker, mcrouter, …) in
    /// front of servers this client cannot see: no handshake, no CAS ids,
    /// and every operation that needs them is
    /// [`Error::Unsupported`](mcds_core::Error::Unsupported) (see the
    /// [crate docs](crate) for the list and the reasons). Default `false`:
    /// each address is one memcached server.
    ///
    /// A direct store that reaches twemproxy by mistake fails to connect,
    /// saying so (twemproxy refuses `stats`); a proxy that answers `stats`
    /// itself cannot be told from a server and must be configured here.
    pub fn behind_proxy(mut self, yes: bool) -> Builder {
        self.config.behind_proxy = yes;
        self
    }

    /// How keys are placed on the addresses: [`Distribution::Rendezvous`]
    /// by default (as `MemcachedStore` places them), or
    /// [`Distribution::Ketama`] to share a pool with libmemcached clients
    /// (php-memcached, pylibmc).
    pub fn distribution(mut self, distribution: Distribution) -> Builder {
        self.config.distribution = distribution;
        self
    }

    /// Connect with TLS (memcached started with `-Z`), as
    /// [`mcds_memcached::Builder::tls`] does. A proxy in front must then
    /// speak TLS itself (twemproxy does not).
    pub fn tls(mut self, tls: TlsOptions) -> Builder {
        self.tls = Some(tls);
        self
    }

    /// Authenticate every connection with memcached's ASCII auth (`-Y`), as
    /// [`mcds_memcached::Builder::credentials`] does.
    pub fn credentials(mut self, credentials: Credentials) -> Builder {
        self.credentials = Some(credentials);
        self
    }

    /// Create the store for these addresses: `host:port` each, or
    /// `unix:/path/to/socket`. Addresses are resolved and TLS files read
    /// now; connections are made on first use.
    pub fn connect<I, S>(mut self, servers: I) -> Result<TextStore>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list = transport::resolve_servers(servers, self.tls.is_some())?;
        self.config.security = Security::new(self.tls.as_ref(), self.credentials.take())?;
        Ok(TextStore::new(list, self.config))
    }
}
