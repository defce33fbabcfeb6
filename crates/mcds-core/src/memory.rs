//! The embedded store: memcached's semantics in process memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use hashlink::LinkedHashMap;
use parking_lot::Mutex;

use crate::clock::{Clock, CoarseClock};
use crate::error::{Error, Result};
use crate::item::{
    CasOutcome, DEFAULT_ITEM_SIZE_LIMIT, DeleteOutcome, Item, Stored, check_item_size, item_size,
    parse_counter,
};
use crate::key::Key;
use crate::op::{Op, Reply};
use crate::store::Store;
use crate::traffic;
use crate::ttl::Ttl;

/// What the embedded store does when its memory budget is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eviction {
    /// Evict least-recently-used items (memcached's default).
    #[default]
    Lru,
    /// Refuse the write with [`Error::OutOfMemory`] (like `memcached -M`).
    Error,
}

/// Configures a [`MemoryStore`].
#[derive(Debug)]
pub struct MemoryStoreBuilder {
    clock: Arc<dyn Clock>,
    item_size_limit: usize,
    memory_limit: usize,
    eviction: Eviction,
    shards: usize,
}

impl MemoryStoreBuilder {
    /// The clock that drives expiry (default [`CoarseClock`]). Give it a
    /// [`ManualClock`](crate::ManualClock) in tests.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The largest item, counting key, value and [`ITEM_OVERHEAD`](crate::backend::ITEM_OVERHEAD) (default
    /// 1 MiB, like `memcached -I 1m`).
    pub fn item_size_limit(mut self, bytes: usize) -> Self {
        self.item_size_limit = bytes;
        self
    }

    /// The memory budget in bytes, counted as [`item_size`] per item
    /// (default 64 MiB, like `memcached -m 64`).
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// What to do when the budget is full (default [`Eviction::Lru`]).
    pub fn eviction(mut self, eviction: Eviction) -> Self {
        self.eviction = eviction;
        self
    }

    /// The number of independently locked shards (default 32, at least 1).
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = shards.max(1);
        self
    }

    /// Build the store.
    pub fn build(self) -> MemoryStore {
        MemoryStore {
            shards: (0..self.shards)
                .map(|index| {
                    Mutex::new(Shard {
                        index: index as u64,
                        shards: self.shards as u64,
                        ..Shard::default()
                    })
                })
                .collect(),
            shard_seed: rand::random(),
            clock: self.clock,
            used: AtomicUsize::new(0),
            item_size_limit: self.item_size_limit,
            memory_limit: self.memory_limit,
            eviction: self.eviction,
            evictions: AtomicU64::new(0),
        }
    }
}

#[derive(Debug)]
struct Entry {
    value: Vec<u8>,
    cas: u64,
    /// Unix seconds at which the item is gone; 0 = never.
    exptime: u64,
    /// Last access, Unix ms: orders eviction across shards.
    touched_ms: u64,
}

impl Entry {
    fn expired(&self, now_secs: u64) -> bool {
        self.exptime != 0 && self.exptime <= now_secs
    }

    fn item(&self) -> Item {
        Item {
            value: self.value.clone(),
            flags: 0,
            cas: self.cas,
        }
    }
}

#[derive(Debug, Default)]
struct Shard {
    /// Front is least recently used.
    map: LinkedHashMap<Box<[u8]>, Entry>,
    /// This shard's index and the number of shards: CAS ids are
    /// `sequence × shards + index`, unique across the store and increasing
    /// per key, without a store-wide atomic (a shared cache line every
    /// write would bounce between cores).
    index: u64,
    shards: u64,
    sequence: u64,
}

impl Shard {
    fn next_cas(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence * self.shards + self.index
    }
}

/// The embedded, in-process store: memcached's semantics without a server.
///
/// It is the default backend for tests, single-process programs and
/// examples, and it agrees with real memcached on every case of the
/// conformance suite in `mcds-testkit`:
///
/// * CAS ids are unique across the store (a per-shard sequence × shards +
///   shard index) and change on every modification.
/// * Expiry is lazy and driven by the [`Clock`], in whole seconds like
///   memcached: an item written at second `s` with `Ttl::secs(n)` is gone
///   from second `s + n` on (so `Ttl::secs(1)` lives 0 to 1 s).
/// * Items are limited to 1 MiB including memcached's 59-byte overhead
///   ([`ITEM_OVERHEAD`](crate::backend::ITEM_OVERHEAD)), configurable.
/// * A memory budget (64 MiB by default) either evicts least-recently-used
///   items (per shard LRU lists, the oldest front across shards goes first)
///   or refuses writes with [`Error::OutOfMemory`], like `memcached -M`.
/// * incr/decr parse values as memcached does and pad a shortened number
///   with spaces in place (`"10"` decremented is `"9 "`).
///
/// It is sharded (32 locks) and safe to share between threads.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::{Key, ManualClock, MemoryStore, Store, Ttl};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let store = MemoryStore::builder().clock(Arc::new(clock.clone())).build();
/// let k = Key::new("session")?;
/// store.set(&k, b"data", Ttl::secs(10))?;
/// clock.advance(Duration::from_secs(9));
/// assert!(store.get(&k)?.is_some());
/// clock.advance(Duration::from_secs(1));
/// assert!(store.get(&k)?.is_none());
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    shards: Box<[Mutex<Shard>]>,
    /// Seeds the shard choice (random per store, so keys cannot be picked
    /// to pile onto one shard).
    shard_seed: u64,
    clock: Arc<dyn Clock>,
    used: AtomicUsize,
    item_size_limit: usize,
    memory_limit: usize,
    eviction: Eviction,
    evictions: AtomicU64,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

/// What an attempt to free memory achieved.
enum Freed {
    Some,
    /// Nothing freed because other shards were locked at that moment.
    Busy,
    /// Nothing left to free.
    Nothing,
}

/// Bookkeeping for one write: what the store needs to know about time and
/// size while it holds a shard lock.
struct Now {
    secs: u64,
    ms: u64,
}

impl MemoryStore {
    /// A store with the defaults: system clock, 1 MiB items, 64 MiB budget
    /// with LRU eviction.
    pub fn new() -> MemoryStore {
        MemoryStore::builder().build()
    }

    /// Configure a store.
    pub fn builder() -> MemoryStoreBuilder {
        MemoryStoreBuilder {
            clock: Arc::new(CoarseClock),
            item_size_limit: DEFAULT_ITEM_SIZE_LIMIT,
            memory_limit: 64 * 1024 * 1024,
            eviction: Eviction::Lru,
            shards: 32,
        }
    }

    /// The store's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Bytes in use, counted as [`item_size`] per item (expired items count
    /// until they are touched or evicted).
    pub fn used_bytes(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Live and not-yet-reclaimed items.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    /// Whether the store holds no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items evicted to make room so far.
    pub fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }

    /// Drop every item (like `flush_all`).
    pub fn flush_all(&self) {
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            for (k, e) in shard.map.drain() {
                self.forget(&k, &e);
            }
        }
    }

    fn shard_index(&self, key: &[u8]) -> usize {
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(key, self.shard_seed);
        (h % self.shards.len() as u64) as usize
    }

    fn now(&self) -> Now {
        let ms = self.clock.now_ms();
        Now {
            secs: ms / 1000,
            ms,
        }
    }

    fn exptime(ttl: Ttl, now: &Now) -> u64 {
        match ttl.as_secs() {
            None => 0,
            Some(n) => now.secs + u64::from(n),
        }
    }

    fn check_size(&self, key: &Key, value_len: usize) -> Result<usize> {
        check_item_size(key, value_len, self.item_size_limit)
    }

    /// Run `f` on the key's shard with the key's live entry (expired entries
    /// are removed first, a hit is moved to the LRU tail).
    fn with_live<T>(
        &self,
        key: &Key,
        f: impl FnOnce(&MemoryStore, &mut Shard, &Now, bool) -> Result<T>,
    ) -> Result<T> {
        traffic::record(1);
        let now = self.now();
        let index = self.shard_index(key.as_bytes());
        let mut shard = self.shards[index].lock();
        let live = self.touch_live(&mut shard, key.as_bytes(), &now);
        f(self, &mut shard, &now, live)
    }

    /// Whether `key` has a live entry: a hit moves to the LRU tail (one
    /// lookup), an expired entry is removed.
    fn touch_live(&self, shard: &mut Shard, key: &[u8], now: &Now) -> bool {
        let state = shard.map.to_back(key).map(|e| {
            let live = !e.expired(now.secs);
            if live {
                e.touched_ms = now.ms;
            }
            live
        });
        if state == Some(false)
            && let Some(e) = shard.map.remove(key)
        {
            self.forget(key, &e);
        }
        state == Some(true)
    }

    /// Append or prepend `value` to the live entry of `key` (held in
    /// `shard`), within the item limit and the memory budget.
    fn extend_live(
        &self,
        shard: &mut Shard,
        key: &Key,
        value: &[u8],
        append: bool,
        now: &Now,
    ) -> Result<()> {
        let old_len = shard.map.get(key.as_bytes()).map_or(0, |e| e.value.len());
        let size = self.check_size(key, old_len + value.len())?;
        self.reserve(shard, key, size - item_size(key.len(), old_len), now)?;
        let cas = shard.next_cas();
        if let Some(e) = shard.map.get_mut(key.as_bytes()) {
            if append {
                e.value.extend_from_slice(value);
            } else {
                e.value.splice(0..0, value.iter().copied());
            }
            e.cas = cas;
        }
        Ok(())
    }

    /// Make room for `grow` more bytes while holding `shard` (which holds
    /// `key`, to be kept), and account for them. Evicts the least recently
    /// used items across shards, or (with [`Eviction::Error`], or when nothing
    /// can be evicted) fails with OutOfMemory. Other shards are only ever
    /// `try_lock`ed, so two writers cannot deadlock.
    fn reserve(&self, shard: &mut Shard, key: &Key, grow: usize, now: &Now) -> Result<()> {
        let mut busy_rounds = 0;
        loop {
            let used = self.used.load(Ordering::Relaxed);
            let wanted = used.saturating_add(grow);
            if wanted <= self.memory_limit {
                if self
                    .used
                    .compare_exchange(used, wanted, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    return Ok(());
                }
                continue;
            }
            let freed = match self.eviction {
                // memcached -M still reclaims expired items.
                Eviction::Error => self.reclaim_expired(shard, key, now),
                Eviction::Lru => self.evict_one(shard, key),
            };
            match freed {
                Freed::Some => busy_rounds = 0,
                // Other shards were locked for a moment: look again.
                Freed::Busy if busy_rounds < 1000 => {
                    busy_rounds += 1;
                    std::thread::yield_now();
                }
                Freed::Busy | Freed::Nothing => {
                    return Err(Error::OutOfMemory { key: key.display() });
                }
            }
        }
    }

    fn forget(&self, key: &[u8], entry: &Entry) {
        self.used
            .fetch_sub(item_size(key.len(), entry.value.len()), Ordering::Relaxed);
    }

    /// Drop expired items from every shard that is not locked right now.
    fn reclaim_expired(&self, own: &mut Shard, keep: &Key, now: &Now) -> Freed {
        let mut freed = false;
        let mut locked = 0;
        let mut sweep = |shard: &mut Shard| {
            let expired: Vec<Box<[u8]>> = shard
                .map
                .iter()
                .filter(|(k, e)| e.expired(now.secs) && &***k != keep.as_bytes())
                .map(|(k, _)| k.clone())
                .collect();
            for k in &expired {
                if let Some(e) = shard.map.remove(k) {
                    self.forget(k, &e);
                    freed = true;
                }
            }
        };
        sweep(own);
        for other in self.shards.iter() {
            match other.try_lock() {
                Some(mut other) => sweep(&mut other),
                // Our own shard (already swept) or another writer's.
                None => locked += 1,
            }
        }
        // Our own shard is always locked; "busy" means another one was too.
        match (freed, locked > 1) {
            (true, _) => Freed::Some,
            (false, true) => Freed::Busy,
            (false, false) => Freed::Nothing,
        }
    }

    /// Evict the globally oldest LRU front among this shard and the other
    /// shards that are not locked right now.
    fn evict_one(&self, shard: &mut Shard, keep: &Key) -> Freed {
        let mut best: Option<(u64, Option<usize>)> = shard
            .map
            .iter()
            .find(|(k, _)| &***k != keep.as_bytes())
            .map(|(_, e)| (e.touched_ms, None));
        let mut locked = 0;
        for (i, other) in self.shards.iter().enumerate() {
            match other.try_lock() {
                Some(other) => {
                    if let Some((_, e)) = other.map.front()
                        && best.is_none_or(|(t, _)| e.touched_ms < t)
                    {
                        best = Some((e.touched_ms, Some(i)));
                    }
                }
                None => locked += 1,
            }
        }
        let victim = match best {
            // Our own shard is always locked; "busy" means another one was too.
            None if locked > 1 => return Freed::Busy,
            None => return Freed::Nothing,
            Some((_, None)) => {
                let k = shard.map.keys().find(|k| &***k != keep.as_bytes()).cloned();
                k.and_then(|k| shard.map.remove(&k).map(|e| (k, e)))
            }
            Some((_, Some(i))) => match self.shards[i].try_lock() {
                Some(mut other) => other.map.pop_front(),
                None => return Freed::Busy,
            },
        };
        match victim {
            Some((k, e)) => {
                self.forget(&k, &e);
                self.evictions.fetch_add(1, Ordering::Relaxed);
                Freed::Some
            }
            None => Freed::Busy,
        }
    }

    /// Store a whole new value under `key` (present or not).
    fn put(
        &self,
        shard: &mut Shard,
        key: &Key,
        value: &[u8],
        exptime: u64,
        now: &Now,
    ) -> Result<u64> {
        let size = self.check_size(key, value.len())?;
        let old = shard
            .map
            .get(key.as_bytes())
            .map(|e| item_size(key.len(), e.value.len()))
            .unwrap_or(0);
        if size > old {
            self.reserve(shard, key, size - old, now)?;
        } else {
            self.used.fetch_sub(old - size, Ordering::Relaxed);
        }
        let cas = shard.next_cas();
        shard.map.insert(
            key.as_bytes().into(),
            Entry {
                value: value.to_vec(),
                cas,
                exptime,
                touched_ms: now.ms,
            },
        );
        Ok(cas)
    }

    fn concat(&self, key: &Key, value: &[u8], append: bool) -> Result<bool> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, live| {
            if !live {
                return Ok(false);
            }
            s.extend_live(shard, key, value, append, now).map(|()| true)
        })
    }

    fn delta(&self, key: &Key, delta: u64, incr: bool) -> Result<Option<u64>> {
        self.with_live(key, |s, shard, now, live| {
            if !live {
                return Ok(None);
            }
            s.apply_delta(shard, key, delta, incr, now).map(Some)
        })
    }

    /// incr/decr a live entry in place, as memcached's do_add_delta does.
    fn apply_delta(
        &self,
        shard: &mut Shard,
        key: &Key,
        delta: u64,
        incr: bool,
        now: &Now,
    ) -> Result<u64> {
        let cas = shard.next_cas();
        let Some(e) = shard.map.get_mut(key.as_bytes()) else {
            return Err(Error::NonNumeric { key: key.display() });
        };
        let Some(current) = parse_counter(&e.value) else {
            return Err(Error::NonNumeric { key: key.display() });
        };
        let new = if incr {
            current.wrapping_add(delta)
        } else {
            current.saturating_sub(delta)
        };
        let mut digits = itoa::Buffer::new();
        let text = digits.format(new).as_bytes();
        let old_len = e.value.len();
        if text.len() <= old_len {
            // In place, padded with spaces to the old length (memcached).
            e.value[..text.len()].copy_from_slice(text);
            e.value[text.len()..].fill(b' ');
            e.cas = cas;
            return Ok(new);
        }
        self.reserve(shard, key, text.len() - old_len, now)?;
        if let Some(e) = shard.map.get_mut(key.as_bytes()) {
            e.value = text.to_vec();
            e.cas = cas;
        }
        Ok(new)
    }
}

impl MemoryStore {
    // One function per operation; `execute` dispatches to them.

    fn op_get(&self, key: &Key) -> Result<Option<Item>> {
        self.with_live(key, |_, shard, _, live| {
            Ok(if live {
                shard.map.get(key.as_bytes()).map(Entry::item)
            } else {
                None
            })
        })
    }

    fn op_set(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<u64> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, _| {
            s.put(shard, key, value, Self::exptime(ttl, now), now)
        })
    }

    fn op_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, live| {
            if live {
                return Ok(Stored::NotStored);
            }
            s.put(shard, key, value, Self::exptime(ttl, now), now)
                .map(Stored::Stored)
        })
    }

    fn op_replace(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, live| {
            if !live {
                return Ok(Stored::NotStored);
            }
            s.put(shard, key, value, Self::exptime(ttl, now), now)
                .map(Stored::Stored)
        })
    }

    fn op_cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, live| {
            if !live {
                return Ok(CasOutcome::NotFound);
            }
            match shard.map.get(key.as_bytes()) {
                Some(e) if e.cas == cas => s
                    .put(shard, key, value, Self::exptime(ttl, now), now)
                    .map(CasOutcome::Stored),
                _ => Ok(CasOutcome::Exists),
            }
        })
    }

    fn op_append(&self, key: &Key, value: &[u8]) -> Result<bool> {
        self.concat(key, value, true)
    }

    fn op_prepend(&self, key: &Key, value: &[u8]) -> Result<bool> {
        self.concat(key, value, false)
    }

    fn op_append_or_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_live(key, |s, shard, now, live| {
            if !live {
                return s
                    .put(shard, key, value, Self::exptime(ttl, now), now)
                    .map(drop);
            }
            s.extend_live(shard, key, value, true, now)
        })
    }

    fn op_incr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.delta(key, delta, true)
    }

    fn op_decr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.delta(key, delta, false)
    }

    fn op_incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        self.with_live(key, |s, shard, now, live| {
            if live {
                return s.apply_delta(shard, key, delta, true, now);
            }
            let mut digits = itoa::Buffer::new();
            let text = digits.format(initial).as_bytes();
            s.put(shard, key, text, Self::exptime(ttl, now), now)?;
            Ok(initial)
        })
    }

    fn op_delete(&self, key: &Key) -> Result<bool> {
        self.with_live(key, |s, shard, _, live| {
            if !live {
                return Ok(false);
            }
            if let Some(e) = shard.map.remove(key.as_bytes()) {
                s.forget(key.as_bytes(), &e);
            }
            Ok(true)
        })
    }

    fn op_delete_cas(&self, key: &Key, cas: u64) -> Result<DeleteOutcome> {
        self.with_live(key, |s, shard, _, live| {
            if !live {
                return Ok(DeleteOutcome::NotFound);
            }
            match shard.map.get(key.as_bytes()) {
                Some(e) if e.cas == cas => {
                    if let Some(e) = shard.map.remove(key.as_bytes()) {
                        s.forget(key.as_bytes(), &e);
                    }
                    Ok(DeleteOutcome::Deleted)
                }
                _ => Ok(DeleteOutcome::Exists),
            }
        })
    }

    fn op_touch(&self, key: &Key, ttl: Ttl) -> Result<bool> {
        self.with_live(key, |_, shard, now, live| {
            if !live {
                return Ok(false);
            }
            if let Some(e) = shard.map.get_mut(key.as_bytes()) {
                e.exptime = Self::exptime(ttl, now);
            }
            Ok(true)
        })
    }
}

impl Store for MemoryStore {
    fn backend_name(&self) -> &'static str {
        "memory"
    }

    fn item_size_limit(&self) -> usize {
        self.item_size_limit
    }

    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        Ok(match *op {
            Op::Get(key) => Reply::Item(self.op_get(key)?),
            Op::Set { key, value, ttl } => Reply::Cas(self.op_set(key, value, ttl)?),
            Op::Add { key, value, ttl } => Reply::Stored(self.op_add(key, value, ttl)?),
            Op::Replace { key, value, ttl } => Reply::Stored(self.op_replace(key, value, ttl)?),
            Op::Cas {
                key,
                value,
                ttl,
                cas,
            } => Reply::CasOutcome(self.op_cas(key, value, ttl, cas)?),
            Op::Append { key, value } => Reply::Applied(self.op_append(key, value)?),
            Op::Prepend { key, value } => Reply::Applied(self.op_prepend(key, value)?),
            Op::AppendOrAdd { key, value, ttl } => {
                self.op_append_or_add(key, value, ttl)?;
                Reply::Done
            }
            Op::Incr { key, delta } => Reply::Counter(self.op_incr(key, delta)?),
            Op::Decr { key, delta } => Reply::Counter(self.op_decr(key, delta)?),
            Op::IncrOrInit {
                key,
                delta,
                initial,
                ttl,
            } => Reply::Value(self.op_incr_or_init(key, delta, initial, ttl)?),
            Op::Delete(key) => Reply::Applied(self.op_delete(key)?),
            Op::DeleteCas { key, cas } => Reply::Deleted(self.op_delete_cas(key, cas)?),
            Op::Touch { key, ttl } => Reply::Applied(self.op_touch(key, ttl)?),
        })
    }

    /// Applied in order, counted as one round trip with one command per op
    /// (as a server would see one pipelined payload).
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let round_trips = u64::from(!ops.is_empty());
        traffic::as_round_trips(round_trips, || {
            ops.iter().map(|op| self.execute(op)).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::time::Duration;

    fn k(s: &str) -> Key {
        Key::new(s).unwrap()
    }

    #[test]
    fn lru_evicts_oldest_first() {
        let clock = ManualClock::new(1_000_000);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .memory_limit(4 * item_size(2, 100))
            .shards(4)
            .build();
        for i in 0..4 {
            store
                .set(&k(&format!("k{i}")), &[b'x'; 100], Ttl::Never)
                .unwrap();
            clock.advance(Duration::from_millis(10));
        }
        // Touch k0 so k1 becomes the oldest.
        assert!(store.get(&k("k0")).unwrap().is_some());
        clock.advance(Duration::from_millis(10));
        store.set(&k("k4"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.get(&k("k1")).unwrap().is_none(), "k1 was LRU");
        for key in ["k0", "k2", "k3", "k4"] {
            assert!(store.get(&k(key)).unwrap().is_some(), "{key}");
        }
        assert_eq!(store.evictions(), 1);
        assert!(store.used_bytes() <= 4 * item_size(2, 100));
    }

    #[test]
    fn no_evict_mode_refuses_and_keeps_data() {
        let store = MemoryStore::builder()
            .memory_limit(2 * item_size(2, 100))
            .eviction(Eviction::Error)
            .build();
        store.set(&k("k0"), &[b'x'; 100], Ttl::Never).unwrap();
        store.set(&k("k1"), &[b'x'; 100], Ttl::Never).unwrap();
        let err = store.set(&k("k2"), &[b'x'; 100], Ttl::Never).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        assert!(store.get(&k("k0")).unwrap().is_some());
        // Overwriting with a same-size value needs no new memory.
        store.set(&k("k0"), &[b'y'; 100], Ttl::Never).unwrap();
    }

    #[test]
    fn expiry_is_in_whole_seconds() {
        // memcached's clock ticks in seconds: written at x.999 with TTL 1,
        // an item is gone at (x+1).000 — 1 ms later.
        let clock = ManualClock::new(1_000_999);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build();
        store.set(&k("tick"), b"v", Ttl::secs(1)).unwrap();
        assert!(store.get(&k("tick")).unwrap().is_some());
        clock.advance(Duration::from_millis(1));
        assert!(store.get(&k("tick")).unwrap().is_none());
    }

    #[test]
    fn no_evict_mode_reclaims_expired_items_in_every_shard() {
        let clock = ManualClock::new(1_000_000);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .memory_limit(64 * item_size(4, 100))
            .eviction(Eviction::Error)
            .build();
        for i in 0..64 {
            store
                .set(&k(&format!("e{i:03}")), &[b'x'; 100], Ttl::secs(5))
                .unwrap();
        }
        assert!(store.set(&k("new0"), &[b'x'; 100], Ttl::Never).is_err());
        clock.advance(Duration::from_secs(5));
        for i in 0..64 {
            store
                .set(&k(&format!("n{i:03}")), &[b'y'; 100], Ttl::Never)
                .unwrap();
        }
        assert_eq!(
            store.evictions(),
            0,
            "expired items are reclaimed, not evicted"
        );
    }

    #[test]
    fn concurrent_writers_under_memory_pressure() {
        let limit = 200 * item_size(8, 100);
        let store = MemoryStore::builder().memory_limit(limit).build();
        std::thread::scope(|s| {
            for t in 0..4 {
                let store = &store;
                s.spawn(move || {
                    for i in 0..5000 {
                        store
                            .set(&k(&format!("t{t}:{i:05}")), &[b'z'; 100], Ttl::Never)
                            .expect("an item that fits is always stored under LRU eviction");
                    }
                });
            }
        });
        assert!(
            store.used_bytes() <= limit,
            "{} > {limit}",
            store.used_bytes()
        );
        assert!(store.evictions() >= 20_000 - 200);
        assert!(
            (150..=200).contains(&store.len()),
            "{} items kept",
            store.len()
        );
    }

    #[test]
    fn accounting_returns_to_zero() {
        let store = MemoryStore::new();
        let key = k("acc");
        store.set(&key, b"12", Ttl::Never).unwrap();
        store.append(&key, b"345").unwrap();
        store.incr(&key, 100_000).unwrap();
        store.prepend(&key, b"x").unwrap();
        store.delete(&key).unwrap();
        assert_eq!(store.used_bytes(), 0);
    }
}
