//! [`Client`]: the one handle a program needs, and [`connect`].

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Access, CasOutcome, Clock, DeleteOutcome, Io, Item, Key, MemoryStore, Result, Retention, Scope,
    Store, Stored, Ttl,
};

/// Open the store a URL names and return a [`Client`] on it.
///
/// The URL is the one C, Python, PHP and the `mcds` command line take:
///
/// | URL | store |
/// |---|---|
/// | `memory://` | the embedded store, in this process |
/// | `memcached://host:11211` | one memcached server |
/// | `memcached://a:11211,b:11211,c:11211` | a pool (rendezvous hashing; `?ketama` for libmemcached's ketama) |
/// | `memcached+tls://host:11212?ca=/path/ca.pem` | memcached's TLS (`-Z`) |
/// | `memcached+unix:///run/memcached.sock` | a unix socket |
/// | `text://host:22121` | the text protocol, for twemproxy |
///
/// Query options (`timeout_ms`, `connect_timeout_ms`, `prefix`, …) are
/// listed in [`mcds_url::StoreUrl`]. Options a URL cannot carry (a
/// custom trust store, a pool name) are on
/// [`MemcachedStore::builder`](crate::MemcachedStore::builder); wrap the
/// store it builds with [`Client::from_store`].
///
/// ```
/// let mc = mcds::connect("memory://?prefix=app/")?;
/// let hits = mcds::Counter::new(&mc, "hits")?;
/// assert_eq!(hits.incr(2)?, 2);
/// assert!(mcds::connect("memcached://h:1?colour=blue").is_err());
/// # Ok::<(), mcds::Error>(())
/// ```
pub fn connect(url: &str) -> Result<Client> {
    Ok(Client {
        scope: mcds_url::open_url(url)?,
    })
}

/// A store, a key prefix and a clock: what every structure is built from,
/// and raw key operations on the store.
///
/// Cheap to clone (the store is shared, not copied), and `Send + Sync`:
/// make one at startup and hand clones, or references, to every thread
/// and task. Every structure's constructor takes `&Client` (or `Client`),
/// through `impl Into<Scope>`.
///
/// The raw operations (`get`, `set`, `add`, `cas`, `incr`, …) use the
/// client's key prefix, and each has an `_async` twin that awaits the
/// network instead of blocking the thread, under any executor.
///
/// ```
/// use std::time::Duration;
///
/// let mc = mcds::Client::embedded();
/// let worker = mc.clone(); // the same store
/// worker.set("greeting", b"hello", Duration::from_secs(60))?;
/// assert_eq!(mc.get("greeting")?.map(|i| i.value), Some(b"hello".to_vec()));
///
/// let visits = mcds::Counter::new(&mc, "visits")?;
/// visits.incr(1)?;
/// # Ok::<(), mcds::Error>(())
/// ```
#[derive(Clone)]
pub struct Client {
    scope: Scope,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("backend", &self.scope.store().backend_name())
            .field("prefix", &self.scope.prefix())
            .finish()
    }
}

impl Client {
    /// A client on a new embedded store (memcached's semantics in this
    /// process, no server): `connect("memory://")`.
    pub fn embedded() -> Client {
        Client::from_store(Arc::new(MemoryStore::new()))
    }

    /// A client on a store built another way (for example
    /// [`MemcachedStore::builder`](crate::MemcachedStore::builder)), with
    /// no prefix and the system clock.
    pub fn from_store(store: Arc<dyn Store>) -> Client {
        Client {
            scope: Scope::new(store),
        }
    }

    /// This client with every key prefixed by `prefix` (for example
    /// `"billing/"`), so that applications sharing servers never meet.
    /// `InvalidKey` if the prefix has bytes a key cannot.
    pub fn with_prefix(self, prefix: &str) -> Result<Client> {
        Ok(Client {
            scope: self.scope.with_prefix(prefix)?,
        })
    }

    /// This client with another clock for the structures' time-based
    /// logic (a [`ManualClock`](crate::ManualClock) in tests).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Client {
        Client {
            scope: self.scope.with_clock(clock),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.scope.store()
    }

    /// The scope structures are built in: the store, prefix and clock.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Since when the server behind `key` has lost nothing (see
    /// [`Retention`]).
    pub fn retention(&self, key: &str) -> Result<Retention> {
        self.store().retention(&self.key(key)?)
    }

    /// `key` with this client's prefix: `InvalidKey` if the result is not
    /// a memcached key (empty, over 250 bytes, whitespace or control
    /// bytes).
    pub fn key(&self, key: &str) -> Result<Key> {
        Key::new(format!("{}{key}", self.scope.prefix()))
    }

    fn io(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }
}

/// Declares each raw operation once, as a blocking method and its
/// `_async` twin, both running the same [`Access`] method.
macro_rules! raw_ops {
    ($(
        $(#[$doc:meta])*
        fn $name:ident / $name_async:ident ( $($arg:ident : $ty:ty => $conv:expr),* ) -> $ret:ty;
    )*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub fn $name(&self, key: &str $(, $arg: $ty)*) -> Result<$ret> {
                    mcds_core::block_on(self.$name_async(key $(, $arg)*))
                }

                #[doc = concat!("[`", stringify!($name), "`](Client::", stringify!($name), ") without blocking the thread.")]
                pub async fn $name_async(&self, key: &str $(, $arg: $ty)*) -> Result<$ret> {
                    let key = self.key(key)?;
                    self.io(Io::Async).$name(&key $(, $conv)*).await
                }
            )*
        }
    };
}

raw_ops! {
    /// The item under `key`, or `None`. One round trip.
    fn get / get_async () -> Option<Item>;
    /// Store `value` under `key` for `ttl` (`Duration::ZERO`: no
    /// expiry); its new CAS id. One round trip.
    fn set / set_async (value: &[u8] => value, ttl: Duration => ttl_of(ttl)) -> u64;
    /// Store `value` only if `key` holds nothing. One round trip.
    fn add / add_async (value: &[u8] => value, ttl: Duration => ttl_of(ttl)) -> Stored;
    /// Store `value` only if `key` holds something. One round trip.
    fn replace / replace_async (value: &[u8] => value, ttl: Duration => ttl_of(ttl)) -> Stored;
    /// Store `value` only if `key`'s CAS id is still `cas` (from
    /// [`get`](Client::get)). One round trip.
    fn cas / cas_async (value: &[u8] => value, ttl: Duration => ttl_of(ttl), cas: u64 => cas) -> CasOutcome;
    /// Add `delta` to the decimal number under `key`; the new value, or
    /// `None` if `key` holds nothing. One round trip.
    fn incr / incr_async (delta: u64 => delta) -> Option<u64>;
    /// Subtract `delta` (stopping at 0); the new value, or `None`. One
    /// round trip.
    fn decr / decr_async (delta: u64 => delta) -> Option<u64>;
    /// Delete `key`; whether it held something. One round trip.
    fn delete / delete_async () -> bool;
    /// Delete `key` only if its CAS id is still `cas`. One round trip.
    fn delete_cas / delete_cas_async (cas: u64 => cas) -> DeleteOutcome;
    /// Give `key` a new `ttl`; whether it held something. One round trip.
    fn touch / touch_async (ttl: Duration => ttl_of(ttl)) -> bool;
    /// Append `value` to what `key` holds; `false` if it holds nothing.
    /// One round trip.
    fn append / append_async (value: &[u8] => value) -> bool;
    /// Prepend `value` to what `key` holds; `false` if it holds nothing.
    /// One round trip.
    fn prepend / prepend_async (value: &[u8] => value) -> bool;
}

/// The first value and the lifetime of a counter that
/// [`Client::incr_or_init`] creates: named, so that the delta and the
/// first value cannot be swapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Init {
    /// The counter's value when this call creates it (the delta is not
    /// added to it).
    pub value: u64,
    /// How long a created counter lives (`Duration::ZERO`: no expiry).
    pub ttl: Duration,
}

impl Client {
    /// Add `delta` to the counter under `key`, or create it at
    /// `init.value` if it does not exist; its new value. One round trip
    /// (two when it creates the counter).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcds::Init;
    ///
    /// let mc = mcds::Client::embedded();
    /// let init = Init { value: 1, ttl: Duration::from_secs(60) };
    /// assert_eq!(mc.incr_or_init("hits", 5, init)?, 1);
    /// assert_eq!(mc.incr_or_init("hits", 5, init)?, 6);
    /// # Ok::<(), mcds::Error>(())
    /// ```
    pub fn incr_or_init(&self, key: &str, delta: u64, init: Init) -> Result<u64> {
        mcds_core::block_on(self.incr_or_init_async(key, delta, init))
    }

    /// [`incr_or_init`](Client::incr_or_init) without blocking the thread.
    pub async fn incr_or_init_async(&self, key: &str, delta: u64, init: Init) -> Result<u64> {
        let key = self.key(key)?;
        self.io(Io::Async)
            .incr_or_init(&key, delta, init.value, ttl_of(init.ttl))
            .await
    }

    /// The items under `keys`, in order (`None` where a key holds
    /// nothing). One round trip per server.
    pub fn get_multi(&self, keys: &[&str]) -> Result<Vec<Option<Item>>> {
        mcds_core::block_on(self.get_multi_async(keys))
    }

    /// [`get_multi`](Client::get_multi) without blocking the thread.
    pub async fn get_multi_async(&self, keys: &[&str]) -> Result<Vec<Option<Item>>> {
        let keys: Vec<Key> = keys.iter().map(|k| self.key(k)).collect::<Result<_>>()?;
        self.io(Io::Async).get_multi(&keys).await
    }
}

/// A span as memcached's TTL: `Duration::ZERO` is "no expiry", anything
/// else whole seconds, rounded up.
fn ttl_of(span: Duration) -> Ttl {
    if span.is_zero() {
        Ttl::Never
    } else {
        Ttl::from(span)
    }
}

impl From<&Client> for Scope {
    fn from(client: &Client) -> Scope {
        client.scope.clone()
    }
}

impl From<Client> for Scope {
    fn from(client: Client) -> Scope {
        client.scope
    }
}
