//! The part of a store URL that only the network stores take: servers'
//! options (placement, timeouts, TLS, a proxy), credentials, and opening
//! a `memcached://` or `text://` store. Built with the `memcached` feature
//! (and `text` for `text://`); without it, `no_network.rs` refuses these
//! URLs instead.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Result, Scope};
use mcds_memcached::{Credentials, Distribution, MemcachedStore, TlsOptions};

use crate::{UrlKind, bad, boolean};

const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// A timeout in milliseconds, 1 ms to an hour.
fn millis(name: &str, value: &str) -> Result<Duration> {
    value
        .parse::<u64>()
        .ok()
        .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
        .map(Duration::from_millis)
        .ok_or_else(|| {
            bad(format!(
                "{name}={value}: must be 1 to {MAX_TIMEOUT_MS} milliseconds"
            ))
        })
}

/// The network options of one URL, as they are read.
pub(crate) struct Network {
    memory: bool,
    text: bool,
    /// TLS asked for, by the scheme or the `tls` option.
    tls: bool,
    distribution: Option<Distribution>,
    connect_timeout: Option<Duration>,
    io_timeout: Option<Duration>,
    /// `timeout_ms` was given, and `connect_timeout_ms` or `io_timeout_ms`
    /// (which may not be mixed with it).
    timeout_both: bool,
    timeout_one: bool,
    proxy: bool,
    tls_options: TlsOptions,
    /// The TLS options given, for the error when TLS is not on.
    tls_set: Vec<String>,
    client_cert: Option<String>,
    client_key: Option<String>,
    /// The servers are a quorum (`quorum`), not a pool.
    quorum: bool,
}

impl Network {
    /// For a URL of `memory://` (`memory`), `text://` (`text`) or
    /// `memcached://`, with TLS already asked for by its scheme (`tls`).
    pub(crate) fn new(memory: bool, text: bool, tls: bool) -> Result<Network> {
        #[cfg(not(feature = "text"))]
        if text {
            return Err(bad(
                "text:// needs the `text` feature of mcds (or mcds-url), which this build leaves out".into(),
            ));
        }
        Ok(Network {
            memory,
            text,
            tls,
            distribution: None,
            connect_timeout: None,
            io_timeout: None,
            timeout_both: false,
            timeout_one: false,
            proxy: false,
            tls_options: TlsOptions::new(),
            tls_set: Vec::new(),
            client_cert: None,
            client_key: None,
            quorum: false,
        })
    }

    /// Take the option `name` (one of [`crate::NETWORK_OPTIONS`]).
    pub(crate) fn take(&mut self, name: &str, value: Option<String>) -> Result<()> {
        let need = |v: &Option<String>| -> Result<String> {
            v.clone()
                .ok_or_else(|| bad(format!("store URL option {name} needs a value: {name}=...")))
        };
        if self.memory {
            return Err(bad(format!(
                "store URL option {name} is for memcached://, not memory://"
            )));
        }
        match name {
            "ketama" | "rendezvous" => {
                if !boolean(name, value.as_deref())? {
                    return Err(bad(format!(
                        "{name}=false: name the distribution you want instead"
                    )));
                }
                self.distribution = Some(if name == "ketama" {
                    Distribution::Ketama
                } else {
                    Distribution::Rendezvous
                });
            }
            "distribution" => {
                self.distribution = Some(match need(&value)?.as_str() {
                    "ketama" => Distribution::Ketama,
                    "rendezvous" => Distribution::Rendezvous,
                    v => {
                        return Err(bad(format!(
                            "distribution={v}: must be rendezvous or ketama"
                        )));
                    }
                });
            }
            "timeout_ms" => {
                let t = millis(name, &need(&value)?)?;
                self.connect_timeout = Some(t);
                self.io_timeout = Some(t);
                self.timeout_both = true;
            }
            "connect_timeout_ms" => {
                self.connect_timeout = Some(millis(name, &need(&value)?)?);
                self.timeout_one = true;
            }
            "io_timeout_ms" => {
                self.io_timeout = Some(millis(name, &need(&value)?)?);
                self.timeout_one = true;
            }
            "proxy" if !self.text => {
                return Err(bad(
                    "store URL option proxy is for text://: a proxy such as twemproxy speaks the text protocol (text://host:port?proxy)".into(),
                ));
            }
            "proxy" => self.proxy = boolean(name, value.as_deref())?,
            "quorum" if self.text => {
                return Err(bad(
                    "store URL option quorum is for memcached:// (the meta protocol): a quorum lock needs each server's CAS ids and restarts seen".into(),
                ));
            }
            "quorum" => self.quorum = boolean(name, value.as_deref())?,
            "tls" => self.tls |= boolean(name, value.as_deref())?,
            _ => {
                self.tls_set.push(name.to_string());
                let options = std::mem::take(&mut self.tls_options);
                self.tls_options = match name {
                    "ca_file" => options.ca_file(need(&value)?),
                    "server_name" => options.server_name(need(&value)?),
                    "client_cert" => {
                        self.client_cert = Some(need(&value)?);
                        options
                    }
                    "client_key" => {
                        self.client_key = Some(need(&value)?);
                        options
                    }
                    _ if boolean(name, value.as_deref())? => options.danger_accept_invalid_certs(),
                    _ => options,
                };
            }
        }
        Ok(())
    }

    /// The store: `servers` with the options taken, the URL's
    /// `item_size_limit`, and its `credentials` (user, password), else the
    /// environment's.
    pub(crate) fn kind(
        self,
        servers: Vec<String>,
        item_size_limit: Option<usize>,
        credentials: Option<(String, String)>,
    ) -> Result<UrlKind> {
        if self.timeout_both && self.timeout_one {
            return Err(bad(
                "give timeout_ms, or connect_timeout_ms and io_timeout_ms, not both".into(),
            ));
        }
        if !self.tls
            && let Some(name) = self.tls_set.first()
        {
            return Err(bad(format!(
                "store URL option {name} is for TLS: use memcached+tls:// (or text+tls://), or add tls"
            )));
        }
        let mut tls_options = self.tls_options;
        match (self.client_cert, self.client_key) {
            (Some(cert), Some(key)) => tls_options = tls_options.client_cert(cert, key),
            (None, None) => {}
            _ => {
                return Err(bad(
                    "give client_cert and client_key together (the certificate and its private key, PEM)".into(),
                ));
            }
        }
        let tls = self.tls.then_some(tls_options);
        let credentials = match credentials {
            Some((user, password)) => Some(Credentials::new(user, password).map_err(|_| {
                bad("the credentials in the store URL (user:password@, not shown) are not valid: the user must have no spaces, colons or line breaks, the password no spaces or line breaks".into())
            })?),
            None => Credentials::from_env()?,
        };
        if self.quorum {
            if self.distribution.is_some() {
                return Err(bad(
                    "a quorum places no keys (every lock lives on every server): leave out ketama and distribution".into(),
                ));
            }
            if !(mcds_core::MIN_QUORUM..=mcds_core::MAX_QUORUM).contains(&servers.len()) {
                return Err(bad(format!(
                    "a quorum has {} to {} servers (3 or 5 are usual), this URL lists {}",
                    mcds_core::MIN_QUORUM,
                    mcds_core::MAX_QUORUM,
                    servers.len()
                )));
            }
        }
        let distribution = self.distribution.unwrap_or_default();
        let (connect_timeout, io_timeout) = (self.connect_timeout, self.io_timeout);
        #[cfg(feature = "text")]
        if self.text {
            return Ok(UrlKind::Text {
                servers,
                proxy: self.proxy,
                distribution,
                connect_timeout,
                io_timeout,
                item_size_limit,
                tls,
                credentials,
            });
        }
        Ok(UrlKind::Memcached {
            servers,
            distribution,
            connect_timeout,
            io_timeout,
            item_size_limit,
            tls,
            credentials,
            quorum: self.quorum,
        })
    }
}

/// Apply the options both network stores take (each `Option` the URL set)
/// to a `mcds_memcached::Builder` or a `mcds_text::Builder`: the two
/// builders have the same methods but no common trait.
macro_rules! with_network_options {
    ($b:expr, $connect_timeout:expr, $io_timeout:expr, $item_size_limit:expr, $tls:expr, $credentials:expr) => {{
        let mut b = $b;
        if let Some(t) = $connect_timeout {
            b = b.connect_timeout(*t);
        }
        if let Some(t) = $io_timeout {
            b = b.io_timeout(*t);
        }
        if let Some(n) = $item_size_limit {
            b = b.item_size_limit(*n);
        }
        if let Some(tls) = $tls {
            b = b.tls(tls.clone());
        }
        if let Some(c) = $credentials {
            b = b.credentials(c.clone());
        }
        b
    }};
}

/// A [`UrlKind::Memcached`]'s servers, whether they are a quorum, and
/// how to open a store on some of them with the URL's options; `None` for
/// the other kinds.
#[allow(clippy::type_complexity)]
fn memcached_kind(
    kind: &UrlKind,
) -> Option<(
    &[String],
    bool,
    impl Fn(&[String]) -> Result<MemcachedStore> + '_,
)> {
    let UrlKind::Memcached {
        servers,
        distribution,
        connect_timeout,
        io_timeout,
        item_size_limit,
        tls,
        credentials,
        quorum,
    } = kind
    else {
        return None;
    };
    let open = move |on: &[String]| {
        let b = MemcachedStore::builder().distribution(*distribution);
        let b = with_network_options!(
            b,
            connect_timeout,
            io_timeout,
            item_size_limit,
            tls,
            credentials
        );
        b.connect(on)
    };
    Some((servers.as_slice(), *quorum, open))
}

/// The meta-protocol store of a [`UrlKind::Memcached`] over all its
/// servers (as a pool, even for a quorum: `mcds stats` asks each server);
/// `None` for the other kinds.
pub(crate) fn memcached_store(kind: &UrlKind) -> Option<Result<MemcachedStore>> {
    let (servers, _, open) = memcached_kind(kind)?;
    Some(open(servers))
}

/// The quorum of a [`UrlKind::Memcached`] with `quorum`: one store per
/// server, each with the URL's options; `None` for any other kind.
fn quorum_store(kind: &UrlKind) -> Option<Result<mcds_core::QuorumStore>> {
    let (servers, true, open) = memcached_kind(kind)? else {
        return None;
    };
    let members = servers.iter().map(|server| {
        let store = open(std::slice::from_ref(server))?;
        Ok((server.clone(), Arc::new(store) as Arc<dyn mcds_core::Store>))
    });
    Some(
        members
            .collect::<Result<Vec<_>>>()
            .and_then(mcds_core::QuorumStore::new),
    )
}

/// The store of a network [`UrlKind`], unprefixed; `None` for the embedded
/// store.
pub(crate) fn open(kind: &UrlKind) -> Option<Result<Scope>> {
    if let Some(quorum) = quorum_store(kind) {
        return Some(quorum.map(|q| Scope::from(Arc::new(q) as Arc<dyn mcds_core::Store>)));
    }
    if let Some(store) = memcached_store(kind) {
        return Some(store.map(|s| Scope::from(Arc::new(s))));
    }
    #[cfg(feature = "text")]
    if let UrlKind::Text {
        servers,
        proxy,
        distribution,
        connect_timeout,
        io_timeout,
        item_size_limit,
        tls,
        credentials,
    } = kind
    {
        let b = mcds_text::TextStore::builder()
            .behind_proxy(*proxy)
            .distribution(*distribution);
        let b = with_network_options!(
            b,
            connect_timeout,
            io_timeout,
            item_size_limit,
            tls,
            credentials
        );
        return Some(b.connect(servers).map(|s| Scope::from(Arc::new(s))));
    }
    None
}
