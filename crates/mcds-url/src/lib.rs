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
use std::time::Duration;

use mcds_core::{Error, Eviction, MemoryStore, Result, Scope, Store};
use mcds_memcached::{Distribution, MemcachedStore};
use mcds_text::TextStore;

/// One string that says which store to use and how: the store URL, read by
/// Rust ([`open_url`]), C (`mcds_store_new_url`), Python, PHP and the CLI
/// (`--servers` or `MCDS_SERVERS`).
///
/// ```text
/// memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:
/// 10.0.0.1:11211,10.0.0.2:11211          (no scheme: memcached, defaults)
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
/// | `ketama` | memcached, text | place keys as libmemcached's ketama does (php-memcached with `OPT_LIBKETAMA_COMPATIBLE`, pylibmc with `ketama_weighted`), to share a pool's keys with those apps; same as `distribution=ketama` |
/// | `distribution=rendezvous\|ketama` | memcached, text | key placement across the servers (`rendezvous`) |
/// | `timeout_ms=N` | memcached, text | both timeouts below at once |
/// | `connect_timeout_ms=N` | memcached, text | dialing a server, 1 to 3 600 000 ms (1000) |
/// | `io_timeout_ms=N` | memcached, text | one request and its reply, 1 to 3 600 000 ms (1000) |
/// | `item_size_limit=N` | both | the largest item, as memcached's `-I`: bytes, or with `k`/`m` (1m) |
/// | `memory_limit=N` | memory | the embedded store's budget: bytes, or with `k`/`m`/`g` (64m) |
/// | `evict=true\|false` | memory | evict the least recently used items when full, or refuse writes as `memcached -M` (true) |
/// | `prefix=P` | both | every structure's keys start with `P` (none) |
///
/// Values may be percent-encoded (`prefix=app%2F` is `app/`). An unknown
/// option, an option of the other store, a repeated one, or a value out of
/// range is [`Error::InvalidArgument`] naming it. Schemes this build cannot
/// serve yet (`memcached+tls://`, `unix:`) and credentials in the URL are
/// [`Error::Unsupported`]; credentials are never repeated in a message.
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
    /// Real memcached servers.
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
    },
    /// Servers (or one proxy) speaking the classic text protocol.
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

const MAX_TIMEOUT_MS: u64 = 3_600_000;
const ITEM_SIZE: (usize, usize) = (1024, 1 << 30);
const MEMORY: (usize, usize) = (1024, 1 << 40);

fn bad(message: String) -> Error {
    Error::InvalidArgument(message)
}

/// What this version cannot serve: "`what` is not supported by the mcds
/// store URL backend — `hint`".
fn unsupported(what: &'static str, hint: &'static str) -> Error {
    Error::Unsupported {
        op: what,
        backend: "mcds store URL",
        hint,
    }
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

fn boolean(name: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("true" | "1" | "yes") => Ok(true),
        Some("false" | "0" | "no") => Ok(false),
        Some(v) => Err(bad(format!("{name}={v}: must be true or false"))),
    }
}

impl StoreUrl {
    /// Parse and check `url` (see [`StoreUrl`] for the syntax and options). Nothing
    /// connects yet.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let url = url.trim();
        // Before anything is split or echoed: a password may hold any
        // character ('?', '&', ':'), so any '@' is taken as credentials and
        // nothing of the URL goes into the message.
        if url.contains('@') {
            return Err(unsupported(
                "credentials in a store URL (user:password@)",
                "memcached's ASCII auth (-Y) is not supported yet; remove user:password@ from the URL (a '@' inside an option value is written %40)",
            ));
        }
        let lower = url.to_ascii_lowercase();
        let (scheme, rest) = match url.split_once("://") {
            Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
            None if lower.starts_with("unix:") => ("unix".to_string(), url),
            None if lower.starts_with("memory:") => ("memory".to_string(), &url["memory:".len()..]),
            None => ("memcached".to_string(), url),
        };
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = authority.trim_end_matches('/');
        let (memory, text) = match scheme.as_str() {
            "memcached" => (false, false),
            "memory" => (true, false),
            "text" | "memcached+text" => (false, true),
            "memcached+tls" | "memcacheds" => {
                return Err(unsupported(
                    "memcached over TLS (memcached+tls://)",
                    "TLS (memcached -Z) is not supported yet; use memcached:// on a trusted network",
                ));
            }
            "unix" => {
                return Err(unsupported(
                    "memcached on a unix socket (unix:)",
                    "unix sockets are not supported yet; listen on 127.0.0.1 and use memcached://127.0.0.1:PORT",
                ));
            }
            other => {
                return Err(bad(format!(
                    "unknown store URL scheme {other:?}: use memcached://host:port[,host:port...] or memory://"
                )));
            }
        };
        let mut seen: Vec<String> = Vec::new();
        let mut prefix = String::new();
        let mut distribution = None;
        let (mut connect_timeout, mut io_timeout) = (None, None);
        let (mut item_size_limit, mut memory_limit, mut evict) = (None, None, None);
        let mut proxy = false;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = match pair.split_once('=') {
                Some((n, v)) => (n, Some(decode(v, n)?)),
                None => (pair, None),
            };
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
            let memcached_only = || -> Result<()> {
                if memory {
                    return Err(bad(format!(
                        "store URL option {name} is for memcached://, not memory://"
                    )));
                }
                Ok(())
            };
            match name {
                "ketama" | "rendezvous" => {
                    memcached_only()?;
                    if !boolean(name, value.as_deref())? {
                        return Err(bad(format!(
                            "{name}=false: name the distribution you want instead"
                        )));
                    }
                    distribution = Some(if name == "ketama" {
                        Distribution::Ketama
                    } else {
                        Distribution::Rendezvous
                    });
                }
                "distribution" => {
                    memcached_only()?;
                    distribution = Some(match need(&value)?.as_str() {
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
                    memcached_only()?;
                    let t = millis(name, &need(&value)?)?;
                    connect_timeout = Some(t);
                    io_timeout = Some(t);
                }
                "connect_timeout_ms" => {
                    memcached_only()?;
                    connect_timeout = Some(millis(name, &need(&value)?)?);
                }
                "io_timeout_ms" => {
                    memcached_only()?;
                    io_timeout = Some(millis(name, &need(&value)?)?);
                }
                "item_size_limit" => item_size_limit = Some(size(name, &need(&value)?, ITEM_SIZE)?),
                "memory_limit" | "evict" if !memory => {
                    return Err(bad(format!(
                        "store URL option {name} is for memory://, not memcached://"
                    )));
                }
                "memory_limit" => memory_limit = Some(size(name, &need(&value)?, MEMORY)?),
                "evict" => evict = Some(boolean(name, value.as_deref())?),
                "prefix" => prefix = need(&value)?,
                "proxy" if !text => {
                    return Err(bad(
                        "store URL option proxy is for text://: a proxy such as twemproxy speaks the text protocol (text://host:port?proxy)".into(),
                    ));
                }
                "proxy" => proxy = boolean(name, value.as_deref())?,
                other => {
                    return Err(bad(format!(
                        "unknown store URL option {other:?}: known are proxy, ketama, distribution, timeout_ms, connect_timeout_ms, io_timeout_ms, item_size_limit, memory_limit, evict, prefix"
                    )));
                }
            }
        }
        if seen.iter().any(|s| s == "timeout_ms")
            && seen
                .iter()
                .any(|s| s == "connect_timeout_ms" || s == "io_timeout_ms")
        {
            return Err(bad(
                "give timeout_ms, or connect_timeout_ms and io_timeout_ms, not both".into(),
            ));
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
            if text {
                UrlKind::Text {
                    servers,
                    proxy,
                    distribution: distribution.unwrap_or_default(),
                    connect_timeout,
                    io_timeout,
                    item_size_limit,
                }
            } else {
                UrlKind::Memcached {
                    servers,
                    distribution: distribution.unwrap_or_default(),
                    connect_timeout,
                    io_timeout,
                    item_size_limit,
                }
            }
        };
        Ok(StoreUrl { kind, prefix })
    }

    /// The store this URL names, with its prefix, as a [`Scope`] every
    /// structure can be made from. A memcached store connects on first
    /// use, as [`MemcachedStore::connect`] does.
    pub fn open(&self) -> Result<Scope> {
        let store: Arc<dyn Store> = match &self.kind {
            UrlKind::Memcached {
                servers,
                distribution,
                connect_timeout,
                io_timeout,
                item_size_limit,
            } => {
                let mut b = MemcachedStore::builder().distribution(*distribution);
                if let Some(t) = connect_timeout {
                    b = b.connect_timeout(*t);
                }
                if let Some(t) = io_timeout {
                    b = b.io_timeout(*t);
                }
                if let Some(n) = item_size_limit {
                    b = b.item_size_limit(*n);
                }
                Arc::new(b.connect(servers)?)
            }
            UrlKind::Text {
                servers,
                proxy,
                distribution,
                connect_timeout,
                io_timeout,
                item_size_limit,
            } => {
                let mut b = TextStore::builder().behind_proxy(*proxy);
                if *distribution == Distribution::Ketama {
                    b = b.router(mcds_text::Ketama::default());
                }
                if let Some(t) = connect_timeout {
                    b = b.connect_timeout(*t);
                }
                if let Some(t) = io_timeout {
                    b = b.io_timeout(*t);
                }
                if let Some(n) = item_size_limit {
                    b = b.item_size_limit(*n);
                }
                Arc::new(b.connect(servers)?)
            }
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
                Arc::new(b.build())
            }
        };
        Scope::new(store).with_prefix(&self.prefix)
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

#[cfg(test)]
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
                item_size_limit: Some(2 << 20)
            }
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
        ] {
            let e = StoreUrl::parse(url).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{url}: {e}");
            assert!(e.to_string().contains(says), "{url}: {e}");
        }
    }

    #[test]
    fn what_is_not_built_yet_is_unsupported_and_secrets_stay_out() {
        for url in [
            "memcached+tls://a:1",
            "unix:/run/memcached.sock",
            "memcached://user:hunter2@a:1",
            "memcached://admin:hunter?2@10.0.0.1:11211",
            "memcached://admin:hunter2?prefix=et@127.0.0.1:11211",
            "UNIX:/run/memcached.sock",
        ] {
            let e = StoreUrl::parse(url).unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{url}: {e}");
            assert!(!e.to_string().contains("hunter"), "{e}");
        }
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
