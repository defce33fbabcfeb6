//! Settings of a [`TextStore`] ([`Config`]), the [`Builder`] that sets them
//! and resolves the addresses.

use mcds_core::Result;
use mcds_net::NetOptions;

use crate::store::TextStore;

/// Connections kept per server unless
/// [`Builder::connections_per_server`] says otherwise.
const DEFAULT_CONNECTIONS: usize = 8;

/// Settings of a [`TextStore`], set through [`Builder`].
#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// What both backends have (timeouts, limits, connections, routing,
    /// TLS and credentials).
    pub(crate) net: NetOptions,
    /// The addresses are proxies ([`Builder::behind_proxy`]).
    pub(crate) behind_proxy: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            net: NetOptions::new(DEFAULT_CONNECTIONS),
            behind_proxy: false,
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
}

impl Builder {
    // connect_timeout, io_timeout, item_size_limit, connections_per_server,
    // down_backoff, distribution, tls and credentials: as mcds-memcached's.
    mcds_net::builder_options!(config.net);

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

    /// Create the store for these addresses: `host:port` each, or
    /// `unix:/path/to/socket`. Addresses are resolved and TLS files read
    /// now; connections are made on first use.
    pub fn connect<I, S>(mut self, servers: I) -> Result<TextStore>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list = self.config.net.resolve(servers)?;
        Ok(TextStore::new(list, self.config))
    }
}
