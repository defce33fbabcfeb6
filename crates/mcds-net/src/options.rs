//! The settings both backends have, under the same names: [`NetOptions`],
//! and [`builder_options!`](crate::builder_options), which writes the
//! builder methods that set them into each backend's `Builder`.

#[cfg(doc)]
use mcds_core::Error;
use mcds_core::Result;

use crate::health::{DialTiming, Health};
use crate::route::Distribution;
use crate::transport::{self, Credentials, Endpoint, Security, Stream, TlsOptions};

/// The settings every memcached backend has (see the
/// [module docs](self)).
#[derive(Clone, Debug)]
pub struct NetOptions {
    /// Dial and exchange timeouts, and the down backoff.
    pub timing: DialTiming,
    /// The servers' item size limit (memcached's `-I`).
    pub item_size_limit: usize,
    /// How many connections a store keeps to each server.
    pub connections_per_server: usize,
    /// How keys are placed on the servers of a pool.
    pub distribution: Distribution,
    /// TLS and credentials, as [`NetOptions::resolve`] built them.
    pub security: Security,
    /// TLS, as given (read into `security` on connect).
    pub tls: Option<TlsOptions>,
    /// Credentials, as given (moved into `security` on connect).
    pub credentials: Option<Credentials>,
}

impl NetOptions {
    /// The defaults, with this many connections per server (the one
    /// default the backends do not share: see
    /// [`builder_options!`](crate::builder_options)).
    pub fn new(connections_per_server: usize) -> NetOptions {
        NetOptions {
            timing: DialTiming::default(),
            item_size_limit: mcds_core::DEFAULT_ITEM_SIZE_LIMIT,
            connections_per_server,
            distribution: Distribution::Rendezvous,
            security: Security::default(),
            tls: None,
            credentials: None,
        }
    }

    /// At connect: resolve the servers (`host:port` or `unix:/path`; TLS
    /// needs `host:port`) and read the TLS files into
    /// [`security`](NetOptions::security).
    pub fn resolve<I, S>(&mut self, servers: I) -> Result<Vec<(String, Endpoint)>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list = transport::resolve_servers(servers, self.tls.is_some())?;
        self.security = Security::new(self.tls.as_ref(), self.credentials.take())?;
        Ok(list)
    }

    /// A new connection to `addr` (resolved to `endpoint`), unless the
    /// server is in its down backoff ([`Error::ServerDown`]): connect with
    /// these options' TLS, credentials and timeouts, then run the backend's
    /// `handshake` on the stream. A failure of either starts or lengthens
    /// the backoff ([`Health::after_dial`]) and runs `failed` first.
    pub fn dial<C>(
        &self,
        health: &Health,
        addr: &str,
        endpoint: &Endpoint,
        handshake: impl FnOnce(Stream) -> std::io::Result<C>,
        failed: impl FnOnce(),
    ) -> Result<C> {
        if let Some(down) = health.down(addr) {
            return Err(down);
        }
        let dialed = Stream::connect(
            addr,
            endpoint,
            &self.security,
            self.timing.connect_timeout,
            self.timing.io_timeout,
        )
        .and_then(handshake);
        if dialed.is_err() {
            failed();
        }
        health.after_dial(addr, &self.timing, dialed)
    }
}

/// The builder methods of the settings in [`NetOptions`], for a backend's
/// `impl Builder`, given the path of its [`NetOptions`] field
/// (`builder_options!(config.net)`): the same names,
/// defaults and documentation on both backends.
#[macro_export]
macro_rules! builder_options {
    ($($field:ident).+) => {
        /// How long dialing a server may take (default 1 s, at least 1 ms).
        pub fn connect_timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.$($field).+.timing.connect_timeout =
                timeout.max(::std::time::Duration::from_millis(1));
            self
        }

        /// How long one request/response exchange may take, sending and
        /// reply together (default 1 s, at least 1 ms). An operation that
        /// has to dial first may also spend up to the connect timeout (and
        /// this one for the handshake) on the dial; a read retried on a
        /// fresh connection after a restart gets a second exchange.
        pub fn io_timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.$($field).+.timing.io_timeout = timeout.max(::std::time::Duration::from_millis(1));
            self
        }

        /// The servers' item size limit, as with memcached's `-I` (default
        /// 1 MiB). Items over it are refused before they are sent.
        pub fn item_size_limit(mut self, bytes: usize) -> Self {
            self.$($field).+.item_size_limit = bytes;
            self
        }

        /// How many connections the store keeps to each server (at least
        /// 1). On the meta-protocol store (default 4) they are shared: each
        /// caller's request goes out on one of them with the requests of
        /// the callers that arrived meanwhile, so the store never opens
        /// more, whatever the number of callers (with mcds-memcached's
        /// `tokio` feature, as many again, each driven by one async caller
        /// at a time on a tokio runtime). A connection is opened when
        /// callers overlap: one caller at a time uses one. Two of them
        /// carry the batches once callers queue; the others serve callers
        /// that find them idle while nobody queues (a few threads, each
        /// with a connection to itself), because past that point one write
        /// for many callers is cheaper than many writes. On the text-protocol store
        /// (default 8) a caller holds a connection for its exchange: this
        /// many are kept open for reuse, and a caller that finds none idle
        /// opens another.
        pub fn connections_per_server(mut self, n: usize) -> Self {
            self.$($field).+.connections_per_server = n.max(1);
            self
        }

        /// How long a server that refused a connection is left alone: the
        /// first wait, doubling up to the second (defaults 50 ms and 1 s).
        /// Callers get `Error::ServerDown` at once meanwhile.
        pub fn down_backoff(
            mut self,
            first: ::std::time::Duration,
            max: ::std::time::Duration,
        ) -> Self {
            self.$($field).+.timing.down_backoff_base = first;
            self.$($field).+.timing.down_backoff_max = max.max(first);
            self
        }

        /// How keys are placed on the servers of a pool (default
        /// [`Distribution::Rendezvous`]). [`Distribution::Ketama`] places
        /// them as php-memcached does with
        /// `Memcached::OPT_LIBKETAMA_COMPATIBLE` and pylibmc with
        /// `behaviors={"ketama_weighted": True}`, so that PHP or Python
        /// applications and this store find each key on the same server;
        /// list the servers as they do (same host names, same order).
        ///
        /// Every process that uses a pool must place keys the same way: a
        /// store with another distribution looks for most keys on the wrong
        /// server.
        ///
        /// [`Distribution::Rendezvous`]: $crate::Distribution::Rendezvous
        /// [`Distribution::Ketama`]: $crate::Distribution::Ketama
        pub fn distribution(mut self, distribution: $crate::Distribution) -> Self {
            self.$($field).+.distribution = distribution;
            self
        }

        /// Connect with TLS (memcached started with `-Z`): the server's
        /// certificate is verified as [`TlsOptions`]($crate::TlsOptions)
        /// says. TLS servers must be `host:port` (a unix socket is local
        /// already); a proxy in front must speak TLS itself (twemproxy
        /// does not).
        pub fn tls(mut self, tls: $crate::TlsOptions) -> Self {
            self.$($field).+.tls = Some(tls);
            self
        }

        /// Authenticate every connection with memcached's ASCII auth (a
        /// server started with `-Y <authfile>`).
        /// [`Credentials::from_env`]($crate::Credentials::from_env) reads
        /// them from `MCDS_USERNAME` and `MCDS_PASSWORD`.
        pub fn credentials(mut self, credentials: $crate::Credentials) -> Self {
            self.$($field).+.credentials = Some(credentials);
            self
        }
    };
}
