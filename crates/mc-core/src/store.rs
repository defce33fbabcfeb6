//! The [`Store`] trait: memcached's operations, one object-safe interface for
//! every backend.

use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::pipeline::{Op, Reply};
use crate::time::Ttl;

/// A stored item as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The value bytes.
    pub value: Vec<u8>,
    /// The client flags stored with the item (mcds writes 0).
    pub flags: u32,
    /// The item's CAS id: changes on every modification.
    pub cas: u64,
}

impl Item {
    /// The value read as a memcached counter, the way memcached's incr reads
    /// it: optional leading whitespace, decimal digits, optional trailing
    /// whitespace. A counter that `decr` made shorter is space-padded by
    /// memcached (`"9 "`) and still reads as 9. `None` if not a number.
    pub fn counter(&self) -> Option<u64> {
        parse_counter(&self.value)
    }
}

/// Outcome of [`Store::add`] and [`Store::replace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored; the new CAS id.
    Stored(u64),
    /// Not stored: for `add` the key exists, for `replace` it does not.
    NotStored,
}

impl Stored {
    /// Whether the value was stored.
    pub fn is_stored(self) -> bool {
        matches!(self, Stored::Stored(_))
    }
}

/// Outcome of [`Store::cas`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CasOutcome {
    /// Stored; the new CAS id.
    Stored(u64),
    /// The item changed since the CAS id was read; nothing was stored.
    Exists,
    /// The item does not exist (any more); nothing was stored.
    NotFound,
}

/// Outcome of [`Store::delete_cas`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The item matched and was deleted.
    Deleted,
    /// The item changed since the CAS id was read; it was kept.
    Exists,
    /// The item does not exist.
    NotFound,
}

/// Outcome of [`Store::update`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Updated {
    /// The new value was stored with this CAS id.
    Stored {
        /// The stored value.
        value: Vec<u8>,
        /// Its CAS id.
        cas: u64,
    },
    /// The update function declined to change anything.
    Unchanged,
}

/// The function [`Store::update`] calls: it receives the current value
/// (`None` if the key is missing) and returns the new value, or `None` to
/// leave the item unchanged.
pub type UpdateFn<'a> = dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>> + 'a;

/// A memcached-style key-value store: the embedded
/// [`MemoryStore`](crate::MemoryStore), real memcached (crate
/// `mc-memcached`), or a wrapper such as [`CountingStore`](crate::CountingStore).
///
/// Outcomes that are normal in memcached (a miss, "not stored", a CAS
/// conflict) are values; [`Error`] is for what the caller must handle. Every
/// structure in mcds is written once against `&dyn Store`.
///
/// The compound operations ([`append_or_add`](Store::append_or_add),
/// [`incr_or_init`](Store::incr_or_init), [`delete_cas`](Store::delete_cas),
/// [`update`](Store::update)) have default implementations built from the
/// basic ones, so a new backend is correct first; backends override them with
/// single round trips where the server allows.
///
/// Round trips are counted by [`traffic`](crate::traffic): a backend calls
/// [`traffic::record`](crate::traffic::record) once per network exchange.
///
/// ```
/// use mc_core::{Key, MemoryStore, Store, Stored, Ttl};
///
/// let store = MemoryStore::new();
/// let k = Key::new("greeting")?;
/// assert!(store.add(&k, b"hello", Ttl::secs(60))?.is_stored());
/// assert_eq!(store.add(&k, b"again", Ttl::secs(60))?, Stored::NotStored);
/// assert_eq!(store.get(&k)?.unwrap().value, b"hello");
/// assert_eq!(store.incr_or_init(&Key::new("hits")?, 1, 1, Ttl::Never)?, 1);
/// # Ok::<(), mc_core::Error>(())
/// ```
pub trait Store: Send + Sync {
    /// A short name for messages ("memory", "memcached").
    fn backend_name(&self) -> &'static str;

    /// Read one item.
    fn get(&self, key: &Key) -> Result<Option<Item>>;

    /// Read many items: one round trip per server. The result has one entry
    /// per key, in order.
    fn get_multi(&self, keys: &[Key]) -> Result<Vec<Option<Item>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }

    /// Store unconditionally; returns the new CAS id.
    fn set(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<u64>;

    /// Store only if the key does not exist.
    fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored>;

    /// Store only if the key exists.
    fn replace(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored>;

    /// Store only if the item's CAS id is still `cas`.
    fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome>;

    /// Append to an existing value, keeping its TTL. `false` if the key does
    /// not exist. An item that would grow past the item limit is
    /// [`Error::ValueTooLarge`] and is left as it was.
    fn append(&self, key: &Key, value: &[u8]) -> Result<bool>;

    /// Prepend to an existing value, keeping its TTL. `false` if the key does
    /// not exist.
    fn prepend(&self, key: &Key, value: &[u8]) -> Result<bool>;

    /// Append, creating the key with `value` and `ttl` if it is missing. The
    /// TTL applies only on creation.
    ///
    /// Default: the append/add loop (append; on a miss add; if add lost a
    /// race, append again), bounded at 64 rounds.
    fn append_or_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
        fallback::append_or_add(self, key, value, ttl)
    }

    /// Add `delta` to a counter, wrapping at 2^64. `None` if the key does not
    /// exist; [`Error::NonNumeric`] if the value is not a number.
    fn incr(&self, key: &Key, delta: u64) -> Result<Option<u64>>;

    /// Subtract `delta` from a counter, stopping at 0. `None` if the key does
    /// not exist; [`Error::NonNumeric`] if the value is not a number.
    fn decr(&self, key: &Key, delta: u64) -> Result<Option<u64>>;

    /// Add `delta` to a counter, or create it with the value `initial` (not
    /// `initial + delta`; memcached's `ma … N J D` also stores just J) and
    /// `ttl` if it is missing. Atomic: concurrent callers never lose an update. Returns the
    /// counter's new value.
    ///
    /// Default: incr; on a miss add `initial`; if add lost a race, incr again.
    fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        fallback::incr_or_init(self, key, delta, initial, ttl)
    }

    /// Delete a key; `false` if it did not exist.
    fn delete(&self, key: &Key) -> Result<bool>;

    /// Delete a key only if its CAS id is still `cas`, atomically.
    ///
    /// Default: [`Error::Unsupported`]. A conditional delete built from
    /// other operations (read, compare, delete) has a window in which it
    /// deletes another writer's item; a lock released that way could delete
    /// the next holder's lock. A backend that cannot do it atomically
    /// refuses instead.
    fn delete_cas(&self, key: &Key, cas: u64) -> Result<DeleteOutcome> {
        let _ = (key, cas);
        Err(Error::Unsupported {
            op: "delete_cas",
            backend: self.backend_name(),
            hint: "use a backend with an atomic conditional delete (memcached, the embedded store)",
        })
    }

    /// Whether the server behind `key` has CAS ids, so that [`cas`](Store::cas),
    /// [`delete_cas`](Store::delete_cas) and [`update`](Store::update) can
    /// work. `false` for memcached started with `-C`, where every CAS id is
    /// 0: a structure that needs CAS (a lock) refuses to start anything
    /// there. Default `true`.
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        let _ = key;
        Ok(true)
    }

    /// Give an existing key a new TTL; `false` if it does not exist.
    fn touch(&self, key: &Key, ttl: Ttl) -> Result<bool>;

    /// Read-modify-write by CAS, retried with backoff when another writer
    /// wins, at most `max_attempts` times (then [`Error::Conflict`]).
    ///
    /// `f` receives the current value (`None` if missing) and returns the new
    /// value, or `None` to leave the item as it is. A missing key is created
    /// with `add`. Costs 2 round trips when there is no conflict.
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        fallback::update(self, key, ttl, max_attempts, f)
    }

    /// Run several operations with one round trip per server (see
    /// [`pipeline`](crate::pipeline)): one result per op, in order. The ops
    /// are applied one by one (not as a transaction); a failure fails only
    /// the ops it concerns.
    ///
    /// Default: each op through its own method, in order.
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        crate::pipeline::sequential(self, ops)
    }

    /// Whether `a` and `b` live on the same server, so the commands of one
    /// pipelined batch on both are applied in order. Default `true` (one
    /// node); a pool answers by its routing.
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        let _ = (a, b);
        true
    }

    /// The largest item (key + value + [`ITEM_OVERHEAD`](crate::ITEM_OVERHEAD))
    /// the store accepts, so a structure can refuse an oversized value
    /// before it writes anything else. Default 1 MiB.
    fn item_size_limit(&self) -> usize {
        crate::DEFAULT_ITEM_SIZE_LIMIT
    }
}

/// The default implementations of the compound operations, built from the
/// basic ones. A backend that overrides an operation for speed can still call
/// these on the paths where its server lacks the fast command.
pub mod fallback {
    use super::*;

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

    /// The CAS read-modify-write loop of [`Store::update`].
    pub fn update<S: Store + ?Sized>(
        store: &S,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        let mut backoff = Backoff::default();
        for _ in 0..max_attempts.max(1) {
            let current = store.get(key)?;
            let Some(new) = f(current.as_ref().map(|i| i.value.as_slice())) else {
                return Ok(Updated::Unchanged);
            };
            let cas = match &current {
                Some(item) => match store.cas(key, &new, ttl, item.cas)? {
                    CasOutcome::Stored(cas) => Some(cas),
                    CasOutcome::Exists | CasOutcome::NotFound => None,
                },
                None => match store.add(key, &new, ttl)? {
                    Stored::Stored(cas) => Some(cas),
                    Stored::NotStored => None,
                },
            };
            if let Some(cas) = cas {
                return Ok(Updated::Stored { value: new, cas });
            }
            backoff.sleep();
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: max_attempts.max(1),
        })
    }
}

/// Parse a counter value exactly as memcached's incr does (`strtoull` with
/// its checks): optional leading whitespace, an optional sign, decimal
/// digits, then whitespace, a NUL or the end. Out of range, empty or
/// trailing junk is `None`. A result that is negative as a signed 64-bit
/// number is refused when the text holds a `-` (so `"-0"` is 0 but `"-5"`
/// is refused), as in memcached.
pub fn parse_counter(bytes: &[u8]) -> Option<u64> {
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let mut i = bytes.iter().position(|&b| !is_space(b))?;
    let negative = match bytes[i] {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_start = i;
    let mut value: u64 = 0;
    while let Some(&b) = bytes.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    // strtoull stops at a NUL as at the end of a C string.
    if let Some(&b) = bytes.get(i)
        && !is_space(b)
        && b != 0
    {
        return None;
    }
    let value = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    // memcached then refuses a result that is negative as a signed number
    // if the string holds a '-' anywhere (before its first NUL).
    let c_string = bytes.split(|&b| b == 0).next().unwrap_or_default();
    if (value as i64) < 0 && c_string.contains(&b'-') {
        return None;
    }
    Some(value)
}

/// `Store` for smart pointers and references to a store, so `&S`,
/// `Box<dyn Store>` and `Arc<dyn Store>` can be used (and wrapped, e.g. in a
/// [`CountingStore`](crate::CountingStore)) wherever a store is expected.
macro_rules! delegate_store {
    ($($ptr:ty),*) => {$(
        impl<S: Store + ?Sized> Store for $ptr {
            fn backend_name(&self) -> &'static str {
                (**self).backend_name()
            }
            fn get(&self, key: &Key) -> Result<Option<Item>> {
                (**self).get(key)
            }
            fn get_multi(&self, keys: &[Key]) -> Result<Vec<Option<Item>>> {
                (**self).get_multi(keys)
            }
            fn set(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<u64> {
                (**self).set(key, value, ttl)
            }
            fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
                (**self).add(key, value, ttl)
            }
            fn replace(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
                (**self).replace(key, value, ttl)
            }
            fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
                (**self).cas(key, value, ttl, cas)
            }
            fn append(&self, key: &Key, value: &[u8]) -> Result<bool> {
                (**self).append(key, value)
            }
            fn prepend(&self, key: &Key, value: &[u8]) -> Result<bool> {
                (**self).prepend(key, value)
            }
            fn append_or_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
                (**self).append_or_add(key, value, ttl)
            }
            fn incr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
                (**self).incr(key, delta)
            }
            fn decr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
                (**self).decr(key, delta)
            }
            fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
                (**self).incr_or_init(key, delta, initial, ttl)
            }
            fn delete(&self, key: &Key) -> Result<bool> {
                (**self).delete(key)
            }
            fn delete_cas(&self, key: &Key, cas: u64) -> Result<DeleteOutcome> {
                (**self).delete_cas(key, cas)
            }
            fn supports_cas(&self, key: &Key) -> Result<bool> {
                (**self).supports_cas(key)
            }
            fn touch(&self, key: &Key, ttl: Ttl) -> Result<bool> {
                (**self).touch(key, ttl)
            }
            fn update(
                &self,
                key: &Key,
                ttl: Ttl,
                max_attempts: u32,
                f: &mut UpdateFn<'_>,
            ) -> Result<Updated> {
                (**self).update(key, ttl, max_attempts, f)
            }
            fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
                (**self).pipeline(ops)
            }
            fn colocated(&self, a: &Key, b: &Key) -> bool {
                (**self).colocated(a, b)
            }
            fn item_size_limit(&self) -> usize {
                (**self).item_size_limit()
            }
        }
    )*};
}

delegate_store!(&S, Box<S>, std::sync::Arc<S>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_parsing_matches_memcached() {
        let cases: &[(&[u8], Option<u64>)] = &[
            (b"0", Some(0)),
            (b"42", Some(42)),
            (b"9 ", Some(9)),
            (b" 7", Some(7)),
            (b"+3", Some(3)),
            (b"-0", Some(0)),
            (b"-5", None),
            (b"18446744073709551615", Some(u64::MAX)),
            (b"18446744073709551616", None),
            (b"12abc", None),
            (b"12 34", Some(12)),
            (b"", None),
            (b"   ", None),
            (b"abc", None),
            (b"-", None),
            (b"0\0junk", Some(0)),
            (b"\x0b5", Some(5)),
            (b"18446744073709551615 -", None),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse_counter(input),
                *want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
