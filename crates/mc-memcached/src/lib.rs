//! # mc-memcached
//!
//! The real-memcached backend of **mcds**: a [`Store`] over one memcached
//! server or a pool, speaking the meta protocol through the `memcache`
//! crate's `memcache::exp` layer.
//!
//! * **One round trip per op** where the server allows: `incr_or_init` is
//!   `ma <k> N<ttl> J<initial> D<delta>`, `add` returns its CAS (`ms … ME c`),
//!   `delete_cas` is `md <k> C<cas>`, `touch` is `mg <k> T<ttl>`.
//! * **Capabilities by version.** Each new connection asks the server's
//!   version once (`version`) and the best path is used:
//!
//!   | op | memcached ≥ 1.6.20 | 1.6.13 – 1.6.19 (Debian 12: 1.6.18) | older |
//!   |---|---|---|---|
//!   | `append_or_add` | `ms <k> <n> MA N<ttl>`: 1 round trip | append, then add on a miss (2 on first touch, then 1) | same |
//!   | `delete_cas` | `md <k> C<cas>`: 1 | `md <k> C<cas>`: 1 | `ms <k> 0 C<cas> T-1` (a CAS write of an item that is already expired): 1 |
//!   | `incr_or_init` | `ma … N J D`: 1 | 1 | 1 |
//!
//!   "Older" means 1.6.0 to 1.6.12. Servers before 1.6 have no meta
//!   protocol and are refused when connecting ([`Error::Io`] naming the
//!   version): sending them meta commands would make a value's bytes be read
//!   as a command.
//!
//! * **CAS ids belong to one server incarnation.** memcached restarts its
//!   CAS ids at 1, so an id read before a restart could match another item
//!   after it (a lock released by an old id would delete the next holder's
//!   lock). Each connection reads a random marker kept on the server
//!   ([`INCARNATION_KEY`]) in the same round trip as its `version`
//!   handshake, and every CAS id crosses the API masked with it: an id from
//!   an earlier incarnation matches nothing there, so `cas`, `delete_cas`
//!   and `update` answer EXISTS/NOT_FOUND and touch nothing. No op pays a
//!   round trip for this; the first connection after a restart or flush
//!   pays one to create the marker. A flushed or evicted marker is simply
//!   created again: ids read before then stop matching (a spurious
//!   mismatch, never a false match).
//! * **Servers without CAS** (`-C`, every id 0) are detected by the same
//!   handshake: `cas` and `delete_cas` there are [`Error::Unsupported`]
//!   before anything is sent, and [`Store::supports_cas`] says `false`, so a
//!   lock is never granted on them.
//! * **TTLs are absolute times on the server's clock.** memcached computes
//!   a relative TTL's expiry from a seconds counter that a paused server
//!   (SIGSTOP, a frozen VM) does not advance until after it has applied the
//!   writes queued during the pause: those would expire at once. The
//!   handshake also reads the server's clock (`stats`, in the same round
//!   trip), and every TTL is sent as that reading plus the seconds since
//!   plus the TTL, which memcached measures against its start time. Client
//!   and server clocks need not agree. An item then lives between TTL − 1
//!   and TTL + 1 seconds (see `ServerClock` in the source for the bounds).
//! * **A pool** places keys by rendezvous hashing over XXH3-64 ([`route`]):
//!   stable across processes, languages and compiler versions. A dead server
//!   gives errors for its own keys; its keys never move to another server
//!   (a lock must not silently change servers). A `get_multi` that spans a
//!   dead server fails as a whole (its result has no per-key errors).
//! * **Timeouts** (connect and exchange) default to 1 second. A request that
//!   was sent but got no reply is [`Error::Ambiguous`]; one that failed
//!   before it was sent is [`Error::Io`]/[`Error::Timeout`] and safe to
//!   retry.
//! * **Backoff.** After a failed dial a server is marked down for a jittered,
//!   doubling interval (50 ms up to 1 s by default), during which its ops fail
//!   at once with [`Error::ServerDown`] instead of redialing in a busy loop.
//! * **Limits checked before sending.** Values whose item would exceed the
//!   item size limit (1 MiB by default; set it to the server's `-I`) are
//!   [`Error::ValueTooLarge`] before a byte is sent. (memcached itself,
//!   refusing an oversized `set`, also deletes the key's old value.)
//!
//! ```
//! use mc_core::{Key, Store, Ttl};
//! use mc_memcached::MemcachedStore;
//! # let server = mc_testkit::MemcachedServer::start_default();
//! # let addr = server.addr();
//!
//! // addr is "127.0.0.1:<port>" of a running memcached
//! let store = MemcachedStore::connect(&addr)?;
//! let k = Key::new("visits")?;
//! assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 1);
//! assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 2);
//! # Ok::<(), mc_core::Error>(())
//! ```

mod conn;
mod pipeline;
mod route;

use std::net::ToSocketAddrs;
use std::time::Duration;

use mc_core::{Error, Key, Op, Reply, Result, Store, Ttl, check_item_size};
use memcache::exp::{MetaCommand, MetaCommandResult, MetaOp, ReturnCode};

use conn::{DEFAULT_TIMEOUT, Incarnation, Server, Session};
pub use conn::{INCARNATION_KEY, Version};
pub use route::route;

/// Settings of a [`MemcachedStore`], set through [`Builder`].
#[derive(Clone, Debug)]
pub(crate) struct Config {
    connect_timeout: Duration,
    io_timeout: Duration,
    item_size_limit: usize,
    max_idle: usize,
    down_backoff_base: Duration,
    down_backoff_max: Duration,
    /// Treat servers as no newer than this (tests of older servers' paths).
    version_cap: Option<Version>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connect_timeout: DEFAULT_TIMEOUT,
            io_timeout: DEFAULT_TIMEOUT,
            item_size_limit: mc_core::DEFAULT_ITEM_SIZE_LIMIT,
            max_idle: 8,
            down_backoff_base: Duration::from_millis(50),
            down_backoff_max: Duration::from_secs(1),
            version_cap: None,
        }
    }
}

/// Configures a [`MemcachedStore`] before connecting.
///
/// ```no_run
/// use std::time::Duration;
/// use mc_memcached::MemcachedStore;
///
/// let store = MemcachedStore::builder()
///     .io_timeout(Duration::from_millis(250))
///     .connect(["127.0.0.1:11211", "127.0.0.1:11212"])?;
/// # Ok::<(), mc_core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    config: Config,
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

    /// Idle connections kept per server (default 8).
    pub fn max_idle(mut self, n: usize) -> Builder {
        self.config.max_idle = n;
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
    /// use mc_memcached::{MemcachedStore, Version};
    ///
    /// // delete_cas as on 1.6.12 (a CAS write to an already expired item).
    /// let store = MemcachedStore::builder()
    ///     .version_cap(Version(1, 6, 12))
    ///     .connect(["127.0.0.1:11211"])?;
    /// # Ok::<(), mc_core::Error>(())
    /// ```
    pub fn version_cap(mut self, version: Version) -> Builder {
        self.config.version_cap = Some(version);
        self
    }

    /// Create the store for these servers (`host:port` each). Addresses are
    /// resolved now; connections are made on first use, so a server that is
    /// down shows up as an error on its keys, not here.
    pub fn connect<I, S>(self, servers: I) -> Result<MemcachedStore>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for s in servers {
            let addr = s.as_ref().trim().to_string();
            let resolved: Vec<_> = addr
                .to_socket_addrs()
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "cannot resolve memcached server {addr:?}: {e}; use host:port, e.g. 127.0.0.1:11211"
                    ))
                })?
                .collect();
            if resolved.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "memcached server {addr:?} resolved to no address"
                )));
            }
            list.push(Server::new(addr, resolved));
        }
        if list.is_empty() {
            return Err(Error::InvalidArgument(
                "no memcached servers given; pass at least one host:port".into(),
            ));
        }
        let ids: Vec<String> = list.iter().map(|s| s.addr.clone()).collect();
        Ok(MemcachedStore {
            seeds: ids.iter().map(|id| route::server_seed(id)).collect(),
            servers: list,
            ids,
            config: self.config,
        })
    }
}

/// A [`Store`] on real memcached: one server or a pool. See the
/// [crate docs](crate) for the protocol paths, routing, timeouts and errors.
///
/// The store is `Send + Sync` and meant to be shared (`Arc`) by all threads
/// of a process; it keeps a small pool of connections per server.
///
/// ```
/// use mc_core::{Key, Store, Stored, Ttl};
/// use mc_memcached::MemcachedStore;
/// # let pool = mc_testkit::ServerPool::start(3, Default::default());
/// # let servers = pool.servers_arg();
///
/// // servers is "127.0.0.1:<port>,127.0.0.1:<port>,127.0.0.1:<port>"
/// let store = MemcachedStore::connect(&servers)?;
/// let owner = Key::new("job:42:owner")?;
/// assert!(store.add(&owner, b"worker-1", Ttl::secs(30))?.is_stored());
/// assert_eq!(store.add(&owner, b"worker-2", Ttl::secs(30))?, Stored::NotStored);
/// let keys: Vec<Key> = (0..10).map(|i| Key::new(format!("k{i}"))).collect::<Result<_, _>>()?;
/// assert!(store.get_multi(&keys)?.iter().all(Option::is_none)); // one round trip per server
/// # Ok::<(), mc_core::Error>(())
/// ```
pub struct MemcachedStore {
    servers: Vec<Server>,
    ids: Vec<String>,
    /// Each server's routing seed (see [`route`]), computed once.
    seeds: Vec<u64>,
    config: Config,
}

impl std::fmt::Debug for MemcachedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemcachedStore")
            .field("servers", &self.ids)
            .field("config", &self.config)
            .finish()
    }
}

fn cmd(op: MetaOp, key: &Key) -> MetaCommand {
    MetaCommand::new(op, key.as_bytes())
}

impl MemcachedStore {
    /// Connect to one server or a comma-separated list
    /// (`"127.0.0.1:11211,127.0.0.1:11212"`) with the default settings.
    pub fn connect(servers: &str) -> Result<MemcachedStore> {
        Builder::default().connect(servers.split(',').filter(|s| !s.trim().is_empty()))
    }

    /// Configure timeouts and limits before connecting.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The servers, as configured.
    pub fn servers(&self) -> &[String] {
        &self.ids
    }

    /// The index of the server that owns `key`.
    pub fn server_for(&self, key: &Key) -> usize {
        route::route_seeded(key.as_bytes(), &self.seeds)
    }

    /// The version the server at `index` reported on its latest connection,
    /// if one was made.
    pub fn server_version(&self, index: usize) -> Option<Version> {
        self.servers.get(index).and_then(Server::version)
    }

    fn session(&self, key: &Key) -> Result<Session<'_>> {
        Session::open(&self.servers[self.server_for(key)], &self.config)
    }

    fn check_size(&self, key: &Key, value_len: usize) -> Result<()> {
        check_item_size(key, value_len, self.config.item_size_limit).map(drop)
    }

    fn unexpected(&self, key: &Key, op: &str, r: &MetaCommandResult) -> Error {
        Error::Protocol {
            server: self.ids[self.server_for(key)].clone(),
            message: format!("unexpected reply {:?} to {op}", r.rc),
        }
    }

    /// One op in one exchange, its reply mapped as a pipelined one would
    /// be: the single-op methods and [`Store::pipeline`] build and read
    /// their commands in one place ([`plan`](Self::plan),
    /// [`reply`](Self::reply)).
    fn one(&self, op: &Op<'_>) -> Result<Reply> {
        let mut s = self.session(op.key())?;
        let incarnation = s.incarnation()?;
        let (c, _) = self.plan(op, &incarnation)?;
        let r = s.exchange(op.key(), &c)?;
        drop(s);
        self.reply(op, Some(r), &incarnation)
    }

    /// `append`/`prepend` (`op`): NS is both "missing" and "the result would
    /// be too large", so it is followed by one probe.
    fn concat(&self, op: &Op<'_>, value_len: usize) -> Result<bool> {
        let key = op.key();
        let mut s = self.session(key)?;
        let (c, _) = self.plan(op, &s.incarnation()?)?;
        for _ in 0..4 {
            let r = s.exchange(key, &c)?;
            match r.rc {
                ReturnCode::Hd => return Ok(true),
                ReturnCode::Ns => match self.not_stored_reason(&mut s, key, value_len)? {
                    NotStored::Missing => return Ok(false),
                    NotStored::Exists => continue, // created meanwhile: again
                },
                _ => return Err(self.unexpected(key, op.name(), &r)),
            }
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: 4,
        })
    }

    /// After an append answered NS, one probe (`mg <key> s`): the key is
    /// missing, or it exists and the append would exceed the item limit
    /// ([`Error::ValueTooLarge`]), or it exists and fits (it was created
    /// between the two commands).
    fn not_stored_reason(&self, s: &mut Session<'_>, key: &Key, added: usize) -> Result<NotStored> {
        let r = s.exchange(key, &cmd(MetaOp::Get, key).flag("s"))?;
        if r.rc == ReturnCode::En {
            return Ok(NotStored::Missing);
        }
        let current = usize::try_from(r.size.unwrap_or(0)).unwrap_or(usize::MAX);
        self.check_size(key, current.saturating_add(added))?;
        Ok(NotStored::Exists)
    }
}

impl MemcachedStore {
    /// `append_or_add`; with `missed`, a first append already answered NS
    /// (in a pipeline), so start from the probe (1.6.20+) or the add.
    pub(crate) fn append_or_add_from(
        &self,
        key: &Key,
        value: &[u8],
        ttl: Ttl,
        missed: bool,
    ) -> Result<()> {
        self.check_size(key, value.len())?;
        let mut s = self.session(key)?;
        let incarnation = s.incarnation()?;
        if incarnation.version.has_append_vivify() {
            let (c, _) = self.plan(&Op::AppendOrAdd { key, value, ttl }, &incarnation)?;
            if missed {
                self.not_stored_reason(&mut s, key, value.len())?;
            }
            for _ in 0..4 {
                let r = s.exchange(key, &c)?;
                match r.rc {
                    ReturnCode::Hd => return Ok(()),
                    // With N, NS means "too large" (an error here), or a
                    // delete between the two commands: then try again.
                    ReturnCode::Ns => {
                        self.not_stored_reason(&mut s, key, value.len())?;
                    }
                    _ => return Err(self.unexpected(key, "ms MA N", &r)),
                }
            }
            return Err(Error::Conflict {
                key: key.display(),
                attempts: 4,
            });
        }
        // 1.6.18 and older: append; on a miss add; if add lost, append again.
        let (append, _) = self.plan(&Op::Append { key, value }, &incarnation)?;
        let add = cmd(MetaOp::Set, key)
            .value(value)
            .flag("ME")
            .flag(format!("T{}", incarnation.exptime(ttl)));
        for round in 0..16 {
            let r = if missed && round == 0 {
                None
            } else {
                Some(s.exchange(key, &append)?)
            };
            match r.map(|r| (r.rc, r)) {
                None => {}
                Some((rc, r)) => match rc {
                    ReturnCode::Hd => return Ok(()),
                    // After add said the key exists, NS may mean "too large".
                    ReturnCode::Ns if round > 0 => {
                        if self.not_stored_reason(&mut s, key, value.len())? == NotStored::Exists {
                            continue;
                        }
                    }
                    ReturnCode::Ns => {}
                    _ => return Err(self.unexpected(key, "ms MA", &r)),
                },
            }
            let r = s.exchange(key, &add)?;
            match r.rc {
                ReturnCode::Hd => return Ok(()),
                ReturnCode::Ns => continue,
                _ => return Err(self.unexpected(key, "ms ME", &r)),
            }
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: 16,
        })
    }
}

/// Why an append answered NS.
#[derive(Debug, PartialEq, Eq)]
enum NotStored {
    Missing,
    Exists,
}

fn counter_value(store: &MemcachedStore, key: &Key, r: &MetaCommandResult) -> Result<u64> {
    r.value
        .as_deref()
        .and_then(mc_core::parse_counter)
        .ok_or_else(|| store.unexpected(key, "ma (value is not a number)", r))
}

fn cas_of(r: &MetaCommandResult, incarnation: &Incarnation) -> u64 {
    incarnation.cas_out(r.cas.unwrap_or(0))
}

impl Store for MemcachedStore {
    fn backend_name(&self) -> &'static str {
        "memcached"
    }

    /// One command and one round trip, except: `append`/`prepend` add a
    /// probe after `NS` (missing, or too large?), and `append_or_add` on
    /// servers before 1.6.20 is the append/add loop. `delete_cas` is
    /// `md <key> C<cas>`, or before 1.6.13 (whose `md` ignores `C`) a CAS
    /// write of an item that is already expired (`ms <key> 0 C<cas> T-1`):
    /// one atomic command either way.
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        match *op {
            Op::Append { value, .. } | Op::Prepend { value, .. } => {
                self.concat(op, value.len()).map(Reply::Applied)
            }
            Op::AppendOrAdd { key, value, ttl } => self
                .append_or_add_from(key, value, ttl, false)
                .map(|()| Reply::Done),
            _ => self.one(op),
        }
    }

    /// Each server's share in one payload, all servers written before any
    /// reply is read: one round trip of latency for the batch.
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        self.run_pipeline(ops)
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
        self.config.item_size_limit
    }
}
