//! For backend authors: the item size checks and counter parsing every
//! backend needs ([`check_item_size`], [`item_size`], [`parse_counter`]), and
//! the compound operations built from the basic ones,
//! for a backend whose server lacks the one-command form (the embedded store
//! and memcached have their own). Each is correct under concurrency: it
//! never loses a concurrent writer's update, and it gives up with
//! [`Error::Conflict`] after a bounded number of rounds.
//!
//! A backend calls them from its [`Store::execute`]:
//!
//! ```
//! use mcds_core::{Key, MemoryStore, Op, Reply, Result, Store, Ttl, backend};
//!
//! /// A backend whose server has no append-or-create or counter-or-create.
//! #[derive(Debug)]
//! struct Basic(MemoryStore);
//!
//! impl Store for Basic {
//!     fn backend_name(&self) -> &'static str {
//!         "basic"
//!     }
//!     fn execute(&self, op: &Op<'_>) -> Result<Reply> {
//!         match *op {
//!             Op::AppendOrAdd { key, value, ttl } => {
//!                 backend::append_or_add(self, key, value, ttl)?;
//!                 Ok(Reply::Done)
//!             }
//!             Op::IncrOrInit { key, delta, initial, ttl } => Ok(Reply::Value(
//!                 backend::incr_or_init(self, key, delta, initial, ttl)?,
//!             )),
//!             _ => self.0.execute(op),
//!         }
//!     }
//! }
//!
//! let store = Basic(MemoryStore::new());
//! let log = Key::new("log")?;
//! store.append_or_add(&log, b"a", Ttl::Never)?;
//! store.append_or_add(&log, b"b", Ttl::Never)?;
//! assert_eq!(store.get(&log)?.unwrap().value, b"ab");
//! let hits = Key::new("hits")?;
//! assert_eq!(store.incr_or_init(&hits, 5, 1, Ttl::Never)?, 1);
//! assert_eq!(store.incr_or_init(&hits, 5, 1, Ttl::Never)?, 6);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! There is deliberately no fallback for `delete_cas`: one built from a
//! read, a compare and a delete has a window in which it deletes another
//! writer's item. A backend without an atomic conditional delete answers
//! [`Error::Unsupported`].

use std::time::Duration;

use crate::access::{Access, block_on};
use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::item::{CasOutcome, Item, Stored, Updated};
use crate::key::Key;
use crate::store::{Store, UpdateFn};
use crate::ttl::Ttl;

pub use crate::item::{ITEM_OVERHEAD, check_item_size, item_size, parse_counter};

/// The append/add loop: append; on a miss add; if add lost a race,
/// append again (bounded at 64 rounds, then [`Error::Conflict`]).
pub fn append_or_add<S: Store + ?Sized>(
    store: &S,
    key: &Key,
    value: &[u8],
    ttl: Ttl,
) -> Result<()> {
    for _ in 0..64 {
        if store.append(key, value)? {
            return Ok(());
        }
        if store.add(key, value, ttl)?.is_stored() {
            return Ok(());
        }
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: 64,
    })
}

/// incr; on a miss add `initial`; if add lost a race, incr again.
pub fn incr_or_init<S: Store + ?Sized>(
    store: &S,
    key: &Key,
    delta: u64,
    initial: u64,
    ttl: Ttl,
) -> Result<u64> {
    for _ in 0..64 {
        if let Some(v) = store.incr(key, delta)? {
            return Ok(v);
        }
        if store
            .add(key, initial.to_string().as_bytes(), ttl)?
            .is_stored()
        {
            return Ok(initial);
        }
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: 64,
    })
}

/// [`Store::update`]'s read-modify-write by CAS, for a backend that
/// overrides `update` (to refuse it in some configuration, say) and then
/// runs the usual loop: get; `f`; `cas` (or `add` on a missing key);
/// retried with backoff up to `max_attempts` times, then
/// [`Error::Conflict`].
pub fn update<S: Store + ?Sized>(
    store: &S,
    key: &Key,
    ttl: Ttl,
    max_attempts: u32,
    f: &mut UpdateFn<'_>,
) -> Result<Updated> {
    block_on(update_loop(&Blocking(store), key, ttl, max_attempts, f))
}

/// The store calls of [`update_loop`]: blocking ones ([`Blocking`]) or an
/// [`Access`] (either mode), so the loop is written once.
pub(crate) trait Calls {
    fn name(&self) -> &'static str;
    async fn supports_cas(&self, key: &Key) -> Result<bool>;
    async fn get(&self, key: &Key) -> Result<Option<Item>>;
    async fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome>;
    async fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored>;
    async fn pause(&self, delay: Duration);
}

/// A store's blocking methods, as [`Calls`].
pub(crate) struct Blocking<'a, S: ?Sized>(pub(crate) &'a S);

impl<S: Store + ?Sized> Calls for Blocking<'_, S> {
    fn name(&self) -> &'static str {
        self.0.backend_name()
    }
    async fn supports_cas(&self, key: &Key) -> Result<bool> {
        self.0.supports_cas(key)
    }
    async fn get(&self, key: &Key) -> Result<Option<Item>> {
        self.0.get(key)
    }
    async fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
        self.0.cas(key, value, ttl, cas)
    }
    async fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        self.0.add(key, value, ttl)
    }
    async fn pause(&self, delay: Duration) {
        std::thread::sleep(delay);
    }
}

impl Calls for Access<'_> {
    fn name(&self) -> &'static str {
        self.store().backend_name()
    }
    async fn supports_cas(&self, key: &Key) -> Result<bool> {
        Access::supports_cas(self, key).await
    }
    async fn get(&self, key: &Key) -> Result<Option<Item>> {
        Access::get(self, key).await
    }
    async fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
        Access::cas(self, key, value, ttl, cas).await
    }
    async fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        Access::add(self, key, value, ttl).await
    }
    async fn pause(&self, delay: Duration) {
        self.sleep(delay).await;
    }
}

/// The read-modify-write loop of [`update`] (and of the async
/// [`Access::update`]).
pub(crate) async fn update_loop<C: Calls, F>(
    store: &C,
    key: &Key,
    ttl: Ttl,
    max_attempts: u32,
    f: &mut F,
) -> Result<Updated>
where
    F: FnMut(Option<&[u8]>) -> Option<Vec<u8>> + ?Sized,
{
    // Refused before `f` runs: `f` may be a user's command with effects
    // of its own (the CLI's `kv update`), and a store without CAS could
    // only write a missing key.
    if !store.supports_cas(key).await? {
        return Err(Error::Unsupported {
            op: "update",
            backend: store.name(),
            hint: "update is a CAS read-modify-write: use a memcached started without -C, connected directly (not through a proxy)",
        });
    }
    let mut backoff = Backoff::default();
    for _ in 0..max_attempts.max(1) {
        let current = store.get(key).await?;
        let Some(new) = f(current.as_ref().map(|i| i.value.as_slice())) else {
            return Ok(Updated::Unchanged);
        };
        let cas = match &current {
            Some(item) => match store.cas(key, &new, ttl, item.cas).await? {
                CasOutcome::Stored(cas) => Some(cas),
                CasOutcome::Exists | CasOutcome::NotFound => None,
            },
            None => match store.add(key, &new, ttl).await? {
                Stored::Stored(cas) => Some(cas),
                Stored::NotStored => None,
            },
        };
        if let Some(cas) = cas {
            return Ok(Updated::Stored { value: new, cas });
        }
        store.pause(backoff.next_delay()).await;
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: max_attempts.max(1),
    })
}
