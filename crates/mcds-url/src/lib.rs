//! # mcds-url
//!
//! One string that says which mcds store to use and how: [`StoreUrl`]
//! parses and checks it, [`open_url`] opens it as a [`Scope`] every
//! structure can be made from. The C ABI (`mcds_store_new_url`), the Python
//! and PHP bindings and the `mcds` command line (`MCDS_SERVERS`) all read
//! it through this crate.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::sync::Arc;
#[cfg(feature = "memcached")]
use std::time::Duration;

use mcds_core::{Error, Eviction, MemoryStore, Result, Scope, Store};
#[cfg(feature = "memcached")]
use mcds_memcached::{Credentials, Distribution, MemcachedStore, TlsOptions};

#[cfg_attr(not(feature = "memcached"), path = "no_network.rs")]
mod network;
use network::Network;

/// One string that says which store to use and how: the store URL, read by
/// Rust ([`open_url`]), C (`mcds_store_new_url`), Python, PHP and the CLI
/// (`--servers` or `MCDS_SERVERS`).
///
/// ```text
/// memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:
/// 10.0.0.1:11211,10.0.0.2:11211          (no scheme: memcached, defaults)
/// memcached+tls://cache.internal:11211?ca_file=/etc/memcached/ca.pem
/// memcached://10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211?quorum  (locks over a majority)
/// memcached://app:s3cret@10.0.0.1:11211  (ASCII auth, memcached -Y)
/// unix:/run/memcached/memcached.sock     (a unix socket, memcached -s)
/// memory://?memory_limit=64m&evict=false (the embedded store)
/// text://10.0.0.1:11211?proxy            (the text protocol, here through twemproxy)
/// ```
///
/// `memcached://` speaks memcached's meta protocol (memcached 1.6 and
/// later). `text://` speaks the classic text protocol (`mcds-text`): to
/// memcached directly (CAS ids stay restart-safe), or with `proxy` to a
/// proxy such as twemproxy, where restarts of the servers behind it cannot
/// be seen, so everything that needs CAS (locks, set compaction, sketch
/// writes) is refused with `Unsupported`.
///
/// | option | stores | meaning (default) |
/// |---|---|---|
/// | `proxy` | text | the servers are one proxy (twemproxy): no CAS, see above |
/// | `quorum` | memcached | the 3 to 15 servers are independent members of a quorum, not a pool: a lock lives on every one and is held by whoever takes a majority, so it outlives any minority's loss (see `mcds_lock`'s "Quorum" section); only locks run on it, every other structure is refused with `Unsupported` |
/// | `ketama` | memcached, text | place keys as libmemcached's ketama does (php-memcached with `OPT_LIBKETAMA_COMPATIBLE`, pylibmc with `ketama_weighted`), to share a pool's keys with those apps; same as `distribution=ketama` |
/// | `distribution=rendezvous\|ketama` | memcached, text | key placement across the servers (`rendezvous`) |
/// | `timeout_ms=N` | memcached, text | both timeouts below at once |
/// | `connect_timeout_ms=N` | memcached, text | dialing a server, 1 to 3 600 000 ms (1000) |
/// | `io_timeout_ms=N` | memcached, text | one request and its reply, 1 to 3 600 000 ms (1000) |
/// | `item_size_limit=N` | both | the largest item, as memcached's `-I`: bytes, or with `k`/`m` (1m) |
/// | `memory_limit=N` | memory | the embedded store's budget: bytes, or with `k`/`m`/`g` (64m) |
/// | `evict=true\|false` | memory | evict the least recently used items when full, or refuse writes as `memcached -M` (true) |
/// | `prefix=P` | both | every structure's keys start with `P` (none) |
/// | `tls` | memcached, text | TLS to every server (memcached `-Z`); the same as the schemes `memcached+tls://` (or `memcacheds://`) and `text+tls://` |
/// | `ca_file=PATH` | memcached, text (TLS) | trust the CA certificates in this PEM file (the system's trust store) |
/// | `client_cert=PATH`, `client_key=PATH` | memcached, text (TLS) | present this client certificate and key, PEM (none); give both |
/// | `server_name=NAME` | memcached, text (TLS) | the name the servers' certificates must carry (each server's host) |
/// | `tls_insecure` | memcached, text (TLS) | accept any certificate: encrypted, not authenticated; prints a warning each time a store is opened (off) |
///
/// **Servers** are `host:port` (IPv6 as `[::1]:11211`) or `unix:/path` for
/// memcached's unix socket (`-s`); `unix:/path` alone is a whole URL. TLS
/// servers must be `host:port`.
///
/// **Credentials** for memcached's ASCII auth (`-Y`): `user:password@`
/// before the servers, percent-encoded (a `@` in the password is `%40`),
/// used for every server; without them, the environment's
/// `MCDS_USERNAME` and `MCDS_PASSWORD` if set. They are never repeated in a
/// message, nor shown by `Debug`.
///
/// Values may be percent-encoded (`prefix=app%2F` is `app/`). An unknown
/// option, an option of the other store, a repeated one, or a value out of
/// range is [`Error::InvalidArgument`] naming it.
///
/// A `StoreUrl` is what a store URL says, parsed and checked, before anything connects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreUrl {
    /// Which store, with its own options.
    pub kind: UrlKind,
    /// The key prefix of every structure made from the store (`""`: none).
    pub prefix: String,
}

/// The store a [`StoreUrl`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlKind {
    /// Real memcached servers (the `memcached` feature).
    #[cfg(feature = "memcached")]
    Memcached {
        /// `host:port` each, in the order given.
        servers: Vec<String>,
        /// Key placement.
        distribution: Distribution,
        /// Dialing timeout, if set.
        connect_timeout: Option<Duration>,
        /// Request timeout, if set.
        io_timeout: Option<Duration>,
        /// The servers' `-I`, if set.
        item_size_limit: Option<usize>,
        /// TLS, if set.
        tls: Option<TlsOptions>,
        /// ASCII auth, if set (in the URL or the environment).
        credentials: Option<Credentials>,
        /// The servers are independent members of a quorum (`quorum`):
        /// the store is a [`QuorumStore`](mcds_core::QuorumStore), for locks.
        quorum: bool,
    },
    /// Servers (or one proxy) speaking the classic text protocol (the
    /// `text` feature).
    #[cfg(feature = "text")]
    Text {
        /// `host:port` each, in the order given.
        servers: Vec<String>,
        /// The servers are a proxy (twemproxy): no CAS.
        proxy: bool,
        /// Key placement (a proxy places keys itself: one server is usual).
        distribution: Distribution,
        /// Dialing timeout, if set.
        connect_timeout: Option<Duration>,
        /// Request timeout, if set.
        io_timeout: Option<Duration>,
        /// The servers' `-I`, if set.
        item_size_limit: Option<usize>,
        /// TLS, if set.
        tls: Option<TlsOptions>,
        /// ASCII auth, if set (in the URL or the environment).
        credentials: Option<Credentials>,
    },
    /// The embedded in-process store.
    Memory {
        /// The budget in bytes, if set.
        memory_limit: Option<usize>,
        /// `false`: refuse writes when full (`memcached -M`).
        evict: bool,
        /// The largest item, if set.
        item_size_limit: Option<usize>,
    },
}

const ITEM_SIZE: (usize, usize) = (1024, 1 << 30);
const MEMORY: (usize, usize) = (1024, 1 << 40);

fn bad(message: String) -> Error {
    Error::InvalidArgument(message)
}

/// Split `user:password@` off the front of `url` (after its scheme), both
/// percent-decoded: everything up to the last `@` before the options (a
/// raw `@` in the password stays in it; one in an option value is not
/// taken for credentials). No message repeats any of it; the network
/// stores check them (`network.rs`).
type UserPassword = (String, String);

fn credentials(url: &str) -> Result<(Option<UserPassword>, String)> {
    let (scheme, start) = match url.find("://") {
        Some(i) => (&url[..i + 3], i + 3),
        None => ("", 0),
    };
    // The userinfo ends at the last '@' before the options: a raw '@' in
    // the password stays in it, and an '@' in an option value is not one.
    let end = url[start..].find('?').map_or(url.len(), |i| start + i);
    let Some(at) = url[start..end].rfind('@').map(|i| start + i) else {
        return Ok((None, url.to_string()));
    };
    let userinfo = &url[start..at];
    let rest = &url[at + 1..];
    let hidden = |what: &str| {
        bad(format!(
            "the credentials in the store URL (user:password@, not shown) {what}"
        ))
    };
    let (user, password) = userinfo
        .split_once(':')
        .ok_or_else(|| hidden("need both a user and a password: user:password@"))?;
    let decode_hidden = |raw: &str| {
        decode(raw, "credentials").map_err(|_| hidden("have a bad %XX escape or are not UTF-8"))
    };
    let user_password = (decode_hidden(user)?, decode_hidden(password)?);
    Ok((Some(user_password), format!("{scheme}{rest}")))
}

/// `%XX` decoded, as UTF-8.
fn decode(raw: &str, what: &str) -> Result<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad(format!("{what}: a '%' must start a %XX escape")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(format!("{what} is not UTF-8 once decoded")))
}

/// A size: digits, then optionally `k`, `m` or `g` (powers of 1024).
fn size(name: &str, value: &str, (low, high): (usize, usize)) -> Result<usize> {
    let (digits, unit) = match value.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => value.split_at(i),
        None => (value, ""),
    };
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => {
            return Err(bad(format!(
                "{name}={value}: a size is bytes, or a number with k, m or g"
            )));
        }
    };
    let n = digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|n| (low..=high).contains(n))
        .ok_or_else(|| bad(format!("{name}={value}: must be {low} to {high} bytes")))?;
    Ok(n)
}

fn boolean(name: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("true" | "1" | "yes") => Ok(true),
        Some("false" | "0" | "no") => Ok(false),
        Some(v) => Err(bad(format!("{name}={v}: must be true or false"))),
    }
}

/// The options only the network stores take (`network.rs` reads them).
const NETWORK_OPTIONS: &[&str] = &[
    "proxy",
    "quorum",
    "ketama",
    "rendezvous",
    "distribution",
    "timeout_ms",
    "connect_timeout_ms",
    "io_timeout_ms",
    "tls",
    "ca_file",
    "client_cert",
    "client_key",
    "server_name",
    "tls_insecure",
];

impl StoreUrl {
    /// Parse and check `url` (see [`StoreUrl`] for the syntax and options). Nothing
    /// connects yet.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let url = url.trim();
        // Credentials come out first, before anything is split or echoed:
        // no message below may repeat them.
        let (credentials, url) = credentials(url)?;
        let lower = url.to_ascii_lowercase();
        let (scheme, rest) = match url.split_once("://") {
            Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
            None if lower.starts_with("unix:") => ("unix".to_string(), url.as_str()),
            None if lower.starts_with("memory:") => ("memory".to_string(), &url["memory:".len()..]),
            None => ("memcached".to_string(), url.as_str()),
        };
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = authority.trim_end_matches('/');
        let (memory, text, tls) = match scheme.as_str() {
            "memcached" | "unix" => (false, false, false),
            "memory" => (true, false, false),
            "text" | "memcached+text" => (false, true, false),
            "memcached+tls" | "memcacheds" => (false, false, true),
            "text+tls" => (false, true, true),
            other => {
                return Err(bad(format!(
                    "unknown store URL scheme {other:?}: use memcached://host:port[,host:port...], memcached+tls://, text://, text+tls://, unix:/path or memory://"
                )));
            }
        };
        if memory && credentials.is_some() {
            return Err(bad(
                "memory:// takes no credentials (user:password@ is for memcached's -Y)".into(),
            ));
        }
        let mut network = Network::new(memory, text, tls)?;
        let mut seen: Vec<String> = Vec::new();
        let mut prefix = String::new();
        let (mut item_size_limit, mut memory_limit, mut evict) = (None, None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, raw_value) = match pair.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (pair, None),
            };
            if name.contains('@') {
                // A password with a raw '?' splits the URL there: the
                // "option" holds part of it, so no message may echo it
                // (the value's decoding included).
                return Err(bad(
                    "an option of the store URL holds '@' (not shown): write a '?' in a password as %3F, and an '@' in an option value as %40".into(),
                ));
            }
            let value = raw_value.map(|v| decode(v, name)).transpose()?;
            let canonical = match name {
                "ketama" | "rendezvous" => "distribution",
                other => other,
            };
            if seen.iter().any(|s| s == canonical) {
                return Err(bad(format!("store URL option {canonical} is given twice")));
            }
            seen.push(canonical.to_string());
            let need = |v: &Option<String>| -> Result<String> {
                v.clone().ok_or_else(|| {
                    bad(format!("store URL option {name} needs a value: {name}=..."))
                })
            };
            match name {
                "item_size_limit" => item_size_limit = Some(size(name, &need(&value)?, ITEM_SIZE)?),
                "memory_limit" | "evict" if !memory => {
                    return Err(bad(format!(
                        "store URL option {name} is for memory://, not memcached://"
                    )));
                }
                "memory_limit" => memory_limit = Some(size(name, &need(&value)?, MEMORY)?),
                "evict" => evict = Some(boolean(name, value.as_deref())?),
                "prefix" => prefix = need(&value)?,
                other if NETWORK_OPTIONS.contains(&other) => network.take(other, value)?,
                other => {
                    return Err(bad(format!(
                        "unknown store URL option {other:?}: known are {}, item_size_limit, memory_limit, evict, prefix",
                        NETWORK_OPTIONS.join(", ")
                    )));
                }
            }
        }
        let kind = if memory {
            if !authority.is_empty() {
                return Err(bad(format!(
                    "memory:// takes no servers, got {authority:?}"
                )));
            }
            UrlKind::Memory {
                memory_limit,
                evict: evict.unwrap_or(true),
                item_size_limit,
            }
        } else {
            let servers: Vec<String> = authority
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if servers.is_empty() {
                return Err(bad(
                    "no memcached servers in the store URL: memcached://host:port[,host:port...]"
                        .into(),
                ));
            }
            network.kind(servers, item_size_limit, credentials)?
        };
        Ok(StoreUrl { kind, prefix })
    }

    /// The meta-protocol store of a `memcached://` (or `memcached+tls://`,
    /// `unix:`) URL, with every option it sets, for callers that need the
    /// concrete [`MemcachedStore`] (its `stats`, say); `None` for the other
    /// stores. It connects on first use, as [`MemcachedStore::connect`] does.
    #[cfg(feature = "memcached")]
    pub fn memcached_store(&self) -> Option<Result<MemcachedStore>> {
        network::memcached_store(&self.kind)
    }

    /// The store this URL names, with its prefix, as a [`Scope`] every
    /// structure can be made from. A memcached store connects on first
    /// use, as `MemcachedStore::connect` does.
    pub fn open(&self) -> Result<Scope> {
        let scope = match &self.kind {
            UrlKind::Memory {
                memory_limit,
                evict,
                item_size_limit,
            } => {
                let mut b = MemoryStore::builder().eviction(if *evict {
                    Eviction::Lru
                } else {
                    Eviction::Error
                });
                if let Some(n) = memory_limit {
                    b = b.memory_limit(*n);
                }
                if let Some(n) = item_size_limit {
                    b = b.item_size_limit(*n);
                }
                let store: Arc<dyn Store> = Arc::new(b.build());
                Scope::new(store)
            }
            #[allow(unreachable_patterns)]
            network_kind => network::open(network_kind)
                .ok_or_else(|| Error::Internal(format!("no store opens {network_kind:?}")))??,
        };
        scope.with_prefix(&self.prefix)
    }
}

/// Parse `url` and open its store: [`StoreUrl::parse`], then
/// [`StoreUrl::open`].
///
/// ```
/// use mcds_url::open_url;
///
/// let scope = open_url("memory://?memory_limit=1m&prefix=app/")?;
/// let hits = mcds_core::Key::new("app/x")?;
/// scope.store().set(&hits, b"1", mcds_core::Ttl::Never)?;
/// assert!(open_url("memcached://10.0.0.1:11211?ketama&timeout_ms=500").is_ok());
/// assert!(open_url("memcached://h:1?colour=blue").is_err());
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub fn open_url(url: &str) -> Result<Scope> {
    StoreUrl::parse(url)?.open()
}

#[cfg(all(test, feature = "text"))]
mod tests {
    use super::*;

    fn memcached(
        url: &str,
    ) -> (
        Vec<String>,
        Distribution,
        Option<Duration>,
        Option<Duration>,
    ) {
        match StoreUrl::parse(url).unwrap().kind {
            UrlKind::Memcached {
                servers,
                distribution,
                connect_timeout,
                io_timeout,
                ..
            } => (servers, distribution, connect_timeout, io_timeout),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_forms_of_a_url() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(
            memcached("memcached://a:1,b:2?ketama&timeout_ms=500"),
            (
                vec!["a:1".into(), "b:2".into()],
                Distribution::Ketama,
                ms(500),
                ms(500)
            )
        );
        assert_eq!(
            memcached("a:1"),
            (vec!["a:1".into()], Distribution::Rendezvous, None, None)
        );
        assert_eq!(
            memcached("MEMCACHED://a:1/?distribution=rendezvous&io_timeout_ms=7").3,
            ms(7)
        );
        let url = StoreUrl::parse("memory://?memory_limit=2m&evict=false&prefix=app%2F").unwrap();
        assert_eq!(url.prefix, "app/");
        assert_eq!(
            url.kind,
            UrlKind::Memory {
                memory_limit: Some(2 << 20),
                evict: false,
                item_size_limit: None
            }
        );
        assert_eq!(
            StoreUrl::parse("memcached://a:1?item_size_limit=2m")
                .unwrap()
                .kind,
            UrlKind::Memcached {
                servers: vec!["a:1".into()],
                distribution: Distribution::Rendezvous,
                connect_timeout: None,
                io_timeout: None,
                item_size_limit: Some(2 << 20),
                tls: None,
                credentials: None,
                quorum: false,
            }
        );
    }

    #[test]
    fn a_quorum_url_opens_one_store_per_server() {
        let scope = open_url("memcached://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?quorum").unwrap();
        let quorum = scope.store().quorum().expect("a quorum");
        let names: Vec<&str> = quorum.members().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]);
        assert_eq!(quorum.majority(), 2);
        // Anything but a lock is refused, with what to do instead.
        let e = scope
            .store()
            .get(&mcds_core::Key::new("k").unwrap())
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("Lock"), "{e}");
        // Without `quorum` the same servers are one pool.
        assert!(
            open_url("memcached://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3")
                .unwrap()
                .store()
                .quorum()
                .is_none()
        );
    }

    #[test]
    fn mistakes_are_named() {
        for (url, says) in [
            ("memcached://a:1?colour=blue", "unknown store URL option"),
            ("memcached://a:1?timeout_ms=0", "timeout_ms=0"),
            ("memcached://a:1?timeout_ms=5&io_timeout_ms=5", "not both"),
            (
                "memcached://a:1?connect_timeout_ms=5&timeout_ms=5",
                "not both",
            ),
            ("memcached://a:1?ketama&ketama", "twice"),
            ("memcached://a:1?ketama&distribution=rendezvous", "twice"),
            ("memcached://a:1?memory_limit=1m", "for memory://"),
            ("memory://?ketama", "for memcached://"),
            ("memory://a:1", "takes no servers"),
            ("memcached://?ketama", "no memcached servers"),
            ("memcached://a:1?item_size_limit=12", "1024 to"),
            ("memcached://a:1?item_size_limit=1t", "k, m or g"),
            ("memcached://a:1?prefix=%zz", "%XX"),
            (
                "memcached://a:1?distribution=modulo",
                "rendezvous or ketama",
            ),
            ("redis://a:1", "unknown store URL scheme"),
            ("memcached://a:1?proxy", "for text://"),
            ("memcached://a:1,b:1?quorum", "3 to 15 servers"),
            ("memcached://a:1,b:1,c:1?quorum&ketama", "leave out ketama"),
            ("text://a:1,b:1,c:1?quorum", "for memcached://"),
            ("memory://?quorum", "for memcached://"),
        ] {
            let e = StoreUrl::parse(url).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{url}: {e}");
            assert!(e.to_string().contains(says), "{url}: {e}");
        }
    }

    fn tls_and_credentials(url: &str) -> (Vec<String>, Option<TlsOptions>, Option<Credentials>) {
        match StoreUrl::parse(url).unwrap().kind {
            UrlKind::Memcached {
                servers,
                tls,
                credentials,
                ..
            }
            | UrlKind::Text {
                servers,
                tls,
                credentials,
                ..
            } => (servers, tls, credentials),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tls_unix_and_credentials() {
        let (servers, tls, _) = tls_and_credentials(
            "memcached+tls://a:1?ca_file=/etc/ca.pem&server_name=cache.internal&client_cert=/c.pem&client_key=/k.pem",
        );
        assert_eq!(servers, ["a:1"]);
        assert_eq!(
            tls,
            Some(
                TlsOptions::new()
                    .ca_file("/etc/ca.pem")
                    .server_name("cache.internal")
                    .client_cert("/c.pem", "/k.pem")
            )
        );
        assert_eq!(
            tls_and_credentials("memcacheds://a:1").1,
            Some(TlsOptions::new())
        );
        assert_eq!(
            tls_and_credentials("memcached://a:1?tls").1,
            Some(TlsOptions::new())
        );
        assert_eq!(
            tls_and_credentials("text+tls://a:1").1,
            Some(TlsOptions::new())
        );
        assert!(
            tls_and_credentials("memcached+tls://a:1?tls_insecure")
                .1
                .unwrap()
                .accepts_invalid_certs()
        );
        assert_eq!(tls_and_credentials("memcached://a:1").1, None);
        // unix sockets, alone or in a list.
        assert_eq!(
            tls_and_credentials("unix:/run/m.sock").0,
            ["unix:/run/m.sock"]
        );
        assert_eq!(
            tls_and_credentials("UNIX:/run/m.sock?prefix=p").0,
            ["UNIX:/run/m.sock"]
        );
        assert_eq!(
            tls_and_credentials("memcached://unix:/a.sock,b:2").0,
            ["unix:/a.sock", "b:2"]
        );
        // Credentials: percent-decoded, never shown.
        let (servers, _, c) =
            tls_and_credentials("memcached://app:p%40ss%3Fw@10.0.0.1:11211?ketama");
        assert_eq!(servers, ["10.0.0.1:11211"]);
        assert_eq!(c, Some(Credentials::new("app", "p@ss?w").unwrap()));
        assert!(!format!("{c:?}").contains("p@ss"));
        let (_, _, c) = tls_and_credentials("text+tls://app:pw@a:1");
        assert_eq!(c.unwrap().user(), "app");
    }

    #[test]
    fn bad_tls_and_credentials_are_named_and_secrets_stay_out() {
        for (url, says) in [
            ("memcached://a:1?ca_file=/x", "for TLS"),
            ("text://a:1?tls_insecure", "for TLS"),
            ("memcached+tls://a:1?client_cert=/c.pem", "together"),
            ("memory://?tls", "for memcached://"),
            ("memory://u:hunter2@", "takes no credentials"),
            ("memcached://hunter2@a:1", "user:password@"),
            ("memcached://user:hun ter2@a:1", "not valid"),
            ("memcached://admin:hunter%zz2@a:1", "%XX"),
            ("memcached://admin:hunter?2@10.0.0.1:11211", "%3F"),
            // The part after a raw '?' in the password, with a bad escape
            // in an option value: the decoding's message names no option.
            ("memcached://u:SECRET?hunter@a:1?prefix=%zz", "%3F"),
        ] {
            let e = StoreUrl::parse(url).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{url}: {e}");
            assert!(e.to_string().contains(says), "{url}: {e}");
            assert!(!e.to_string().contains("hunter"), "{url}: {e}");
        }
        // A TLS unix socket is refused when the store is made.
        let e = open_url("memcached+tls://unix:/run/m.sock").unwrap_err();
        assert!(e.to_string().contains("unix socket"), "{e}");
    }

    #[test]
    fn both_timeouts_apart() {
        assert_eq!(
            memcached("memcached://a:1?connect_timeout_ms=200&io_timeout_ms=800").2,
            Some(Duration::from_millis(200))
        );
        assert!(matches!(
            StoreUrl::parse("memory:?memory_limit=1m").unwrap().kind,
            UrlKind::Memory { .. }
        ));
    }

    #[test]
    fn text_urls() {
        let url = StoreUrl::parse("text://a:1?proxy&timeout_ms=200&prefix=p/").unwrap();
        assert_eq!(url.prefix, "p/");
        assert_eq!(
            url.kind,
            UrlKind::Text {
                servers: vec!["a:1".into()],
                proxy: true,
                distribution: Distribution::Rendezvous,
                connect_timeout: Some(Duration::from_millis(200)),
                io_timeout: Some(Duration::from_millis(200)),
                item_size_limit: None,
                tls: None,
                credentials: None,
            }
        );
        assert!(matches!(
            StoreUrl::parse("memcached+text://a:1,b:2?ketama")
                .unwrap()
                .kind,
            UrlKind::Text {
                proxy: false,
                distribution: Distribution::Ketama,
                ..
            }
        ));
        assert!(StoreUrl::parse("text://a:1?memory_limit=1m").is_err());
    }

    #[test]
    fn a_bad_prefix_is_a_bad_key() {
        let e = open_url("memory://?prefix=has%20space").unwrap_err();
        assert!(matches!(e, Error::InvalidKey { .. }), "{e}");
    }
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// A build without the network stores: `memory://` opens, and a URL of a
/// network store is refused with the feature it needs.
#[cfg(all(test, not(feature = "memcached")))]
mod without_network {
    use super::*;

    #[test]
    fn only_memory_opens_and_network_urls_name_the_feature() {
        let scope = open_url("memory://?memory_limit=1m&prefix=app/").unwrap();
        assert_eq!(scope.prefix(), "app/");
        for url in [
            "memcached://127.0.0.1:11211",
            "127.0.0.1:11211",
            "text://127.0.0.1:11211?proxy",
            "unix:/run/memcached.sock",
            "memcached://app:s3cret@127.0.0.1:11211",
        ] {
            let e = StoreUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains("`memcached` feature"), "{url}: {e}");
            assert!(!e.contains("s3cret"), "{url}: {e}");
        }
        let e = StoreUrl::parse("memory://?timeout_ms=5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is for memcached://"), "{e}");
    }
}
