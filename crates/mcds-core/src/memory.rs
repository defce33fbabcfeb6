//! The embedded store: memcached's semantics in process memory.

use std::cell::Cell;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use hashlink::linked_hash_map::{RawEntryMut, RawOccupiedEntryMut};
use hashlink::{DefaultHashBuilder, LinkedHashMap};
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
        // One hasher (one random seed) for the shard choice and every
        // shard's map, so that each key is hashed once per operation.
        let hasher = KeyHasher::default();
        MemoryStore {
            shards: (0..self.shards)
                .map(|index| {
                    Mutex::new(Shard {
                        map: Map::with_hasher(hasher.clone()),
                        cas: CasIds {
                            index: index as u64,
                            shards: self.shards as u64,
                            sequence: 0,
                        },
                        soonest: 0,
                    })
                })
                .collect(),
            hasher,
            clock: self.clock,
            used: AtomicUsize::new(0),
            item_size_limit: self.item_size_limit,
            memory_limit: self.memory_limit,
            eviction: self.eviction,
            evictions: AtomicU64::new(0),
            lost_at: AtomicU64::new(0),
            uses: AtomicU64::new(0),
            id: STORE_IDS.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// Hashes keys, for the shard choice and within the shard's map alike:
/// foldhash (hashbrown's default), seeded at random per store so that keys
/// cannot be picked to pile onto one shard.
type KeyHasher = DefaultHashBuilder;

/// A shard's items by key, in order of use: the front is the least recently
/// used.
type Map = LinkedHashMap<Box<[u8]>, Entry, KeyHasher>;

#[derive(Debug)]
struct Entry {
    /// The value; its bytes are out of date while `counter` is set (see
    /// [`Entry::value`]), its length never is.
    value: Vec<u8>,
    /// Set by incr/decr: the value is this number in decimal, padded with
    /// spaces to the value's length. An increment is then arithmetic
    /// alone: its digits are written out when the value is read.
    counter: Option<u64>,
    cas: u64,
    /// Unix seconds at which the item is gone; 0 = never.
    exptime: u64,
    /// Its last use, a number of the store-wide sequence
    /// ([`MemoryStore::uses`]): orders eviction across shards.
    used: u64,
}

impl Entry {
    fn expired(&self, now: &Now<'_>) -> bool {
        self.exptime != 0 && self.exptime <= now.secs()
    }

    /// The value, with a pending counter's digits written out first.
    fn value(&mut self) -> &mut Vec<u8> {
        if let Some(n) = self.counter.take() {
            let mut digits = itoa::Buffer::new();
            write_counter(&mut self.value, digits.format(n).as_bytes());
        }
        &mut self.value
    }

    fn item(&mut self) -> Item {
        Item {
            value: self.value().clone(),
            flags: 0,
            cas: self.cas,
        }
    }
}

/// A shard's CAS ids: `sequence × shards + index`, unique across the store
/// and increasing per key, without a store-wide atomic (a shared cache line
/// every write would bounce between cores).
#[derive(Debug)]
struct CasIds {
    index: u64,
    shards: u64,
    sequence: u64,
}

impl CasIds {
    fn next(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence * self.shards + self.index
    }
}

/// Aligned to 128 bytes (two cache lines, which x86 prefetches in pairs),
/// so that threads on different shards never write to the same line.
#[derive(Debug)]
#[repr(align(128))]
struct Shard {
    /// In order of use: `Entry::used` increases from front to back.
    map: Map,
    cas: CasIds,
    /// No item of the shard expires before this Unix second (0: none
    /// expires). A lower bound, lowered as expiry times are set and made
    /// exact by each sweep, so that freeing memory under
    /// [`Eviction::Error`] skips shards with nothing expired instead of
    /// scanning every item of every shard on each refused write.
    soonest: u64,
}

impl Shard {
    /// Record that an item of this shard now expires at `exptime`.
    fn note_expiry(&mut self, exptime: u64) {
        if exptime != 0 && (self.soonest == 0 || exptime < self.soonest) {
            self.soonest = exptime;
        }
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
///   items or refuses writes with [`Error::OutOfMemory`], like
///   `memcached -M`. The LRU order is by use, not by the clock: every use
///   of an item (a read, a write, a hit of any operation) moves it to the
///   back of its shard and gives it the next number of a store-wide
///   sequence, and an eviction takes the item with the lowest number among
///   the shards' oldest. The order is exact while one thread uses the
///   store. A thread takes its numbers 16 at a time, so that threads on
///   their own keys share no cache line: against other threads' uses, a
///   use ranks as of when its thread reserved the block its number came
///   from, at most 15 of that thread's own uses earlier (memcached itself
///   moves an item up its LRU at most once a minute). Only a shard that another
///   thread holds locked at the moment of an eviction is passed over (so
///   under concurrent writers the victim is the least recently used of the
///   other shards).
/// * incr/decr parse values as memcached does and pad a shortened number
///   with spaces in place (`"10"` decremented is `"9 "`). memcached pads
///   only while nothing else holds a reference to the item (a read whose
///   reply is still being sent holds one), and writes the bare digits
///   otherwise: read a counter as a number, ignoring trailing spaces, as
///   memcached's own incr does.
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
    hasher: KeyHasher,
    clock: Arc<dyn Clock>,
    used: AtomicUsize,
    item_size_limit: usize,
    memory_limit: usize,
    eviction: Eviction,
    evictions: AtomicU64,
    /// When, by the store's clock, it last evicted or flushed an item (0:
    /// never): what [`Store::retention`] reports.
    lost_at: AtomicU64,
    /// The store-wide sequence of uses ([`Entry::used`]): the last number
    /// reserved by any thread (see [`MemoryStore::next_use`]).
    uses: AtomicU64,
    /// This store among the process's stores, for [`USE_BLOCK`].
    id: u64,
}

/// Numbers of a store's sequence of uses that a thread reserves at once
/// (see [`MemoryStore::next_use`]).
const USES_PER_BLOCK: u64 = 16;

/// The ids of stores ([`MemoryStore::id`]), never reused: a thread's block
/// of numbers is always one store's.
static STORE_IDS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's reserved numbers of one store's sequence of uses: the
    /// store's id, the last number handed out, and the block's last.
    static USE_BLOCK: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
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

/// The time of one operation: read from the clock when first needed (an
/// incr of a counter without a TTL needs none), then the same throughout.
struct Now<'c> {
    clock: &'c dyn Clock,
    secs: Cell<Option<u64>>,
}

impl<'c> Now<'c> {
    fn new(clock: &'c dyn Clock) -> Self {
        Now {
            clock,
            secs: Cell::new(None),
        }
    }

    /// Unix seconds.
    fn secs(&self) -> u64 {
        match self.secs.get() {
            Some(secs) => secs,
            None => {
                let secs = self.clock.now_secs();
                self.secs.set(Some(secs));
                secs
            }
        }
    }

    /// When an item written now with `ttl` is gone (0: never).
    fn exptime(&self, ttl: Ttl) -> u64 {
        match ttl.as_secs() {
            None => 0,
            Some(n) => self.secs() + u64::from(n),
        }
    }
}

/// The place of `key` in `map`, found by its hash.
fn find<'m>(
    map: &'m mut Map,
    hash: u64,
    key: &Key,
) -> RawEntryMut<'m, Box<[u8]>, Entry, KeyHasher> {
    let key = key.as_bytes();
    map.raw_entry_mut().from_hash(hash, |k| same_key(k, key))
}

/// Whether two keys are equal, compared 8 bytes at a time in line: keys
/// are short, and the call to the C library's `memcmp` that `==` makes
/// cost more than the comparison (5% of an increment, in `perf`).
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or_default());
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    a.len() == b.len()
        && a8.remainder().iter().eq(b8.remainder())
        && a8.zip(b8).all(|(x, y)| word(x) == word(y))
}

/// The entry of `key` (live or expired), found by its hash.
fn entry<'m>(map: &'m mut Map, hash: u64, key: &Key) -> Option<&'m mut Entry> {
    match find(map, hash, key) {
        RawEntryMut::Occupied(entry) => Some(entry.into_mut()),
        RawEntryMut::Vacant(_) => None,
    }
}

/// Write the decimal `digits` of a counter over `value`, as memcached does:
/// in place, padded with spaces to the old length when shorter (`"10"`
/// decremented is `"9 "`), else as the whole value.
fn write_counter(value: &mut Vec<u8>, digits: &[u8]) {
    if value.len() < digits.len() {
        value.resize(digits.len(), b' ');
    }
    value[..digits.len()].copy_from_slice(digits);
    value[digits.len()..].fill(b' ');
}

/// The number of decimal digits of `n`.
fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// Whether `n` has more than `len` decimal digits: one comparison with a
/// power of ten, where counting `n`'s digits takes a logarithm (this is on
/// every increment's path).
fn wider_than(n: u64, len: usize) -> bool {
    const POWERS: [u64; 20] = {
        let mut powers = [1; 20];
        let mut i = 1;
        while i < 20 {
            powers[i] = powers[i - 1] * 10;
            i += 1;
        }
        powers
    };
    // Lengths 20 and up hold every u64; length 0 holds none.
    POWERS.get(len).is_some_and(|&power| n >= power) || len == 0
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

    /// Remember that an item is being lost now (an eviction, a flush).
    fn note_loss(&self) {
        // At least 1, so that 0 stays "never".
        self.lost_at
            .fetch_max(self.clock.now_ms().max(1), Ordering::AcqRel);
    }

    /// Drop every item (like `flush_all`).
    pub fn flush_all(&self) {
        self.note_loss();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            for (k, e) in shard.map.drain() {
                self.forget(&k, &e);
            }
        }
    }

    /// Run `f` on the key's shard, locked, with the key's hash (hashed once
    /// for the shard and the map) and the operation's time.
    fn with_shard<T>(&self, key: &Key, f: impl FnOnce(&mut Shard, u64, &Now<'_>) -> T) -> T {
        traffic::record(1);
        let hash = self.hasher.hash_one(key.as_bytes());
        // hashbrown takes a bucket from the hash's low bits and a tag from
        // its top 7, so the shard comes from bits 25 to 56: within a shard
        // both stay as varied as in the whole store.
        let bits = u64::from((hash >> 25) as u32);
        let index = (bits * self.shards.len() as u64) >> 32;
        let now = Now::new(&*self.clock);
        let mut shard = self.shards[index as usize].lock();
        f(&mut shard, hash, &now)
    }

    fn check_size(&self, key: &Key, value_len: usize) -> Result<usize> {
        check_item_size(key, value_len, self.item_size_limit)
    }

    /// The live entry of `key`, now the most recently used; an expired one
    /// is removed (and `None`).
    // Inlined into each operation, as is `apply_delta`: as calls, their
    // prologues and moves were a fifth of an embedded increment (callgrind:
    // 315 instructions an increment as calls, 246 inlined).
    #[inline(always)]
    fn live<'m>(
        &self,
        map: &'m mut Map,
        hash: u64,
        key: &Key,
        now: &Now<'_>,
    ) -> Option<&'m mut Entry> {
        match find(map, hash, key) {
            RawEntryMut::Vacant(_) => None,
            RawEntryMut::Occupied(entry) if entry.get().expired(now) => {
                let (k, e) = entry.remove_entry();
                self.forget(&k, &e);
                None
            }
            RawEntryMut::Occupied(mut entry) => {
                self.use_entry(&mut entry);
                Some(entry.into_mut())
            }
        }
    }

    /// Make an entry the most recently used: the next number of the uses,
    /// and the back of its shard. An entry that holds the number this
    /// thread took last is left as it is (this thread used nothing since):
    /// a counter bumped in a loop takes no number and moves nothing.
    fn use_entry(&self, entry: &mut RawOccupiedEntryMut<'_, Box<[u8]>, Entry, KeyHasher>) {
        if !self.is_last_use(entry.get().used) {
            entry.get_mut().used = self.next_use();
            entry.to_back();
        }
    }

    /// Whether `used` is the number this thread took last from this
    /// store's sequence of uses.
    fn is_last_use(&self, used: u64) -> bool {
        USE_BLOCK.with(|block| {
            let (store, last, _) = block.get();
            store == self.id && last == used
        })
    }

    /// The next number of the store-wide sequence of uses for this thread,
    /// taken with the entry's shard locked. A thread reserves
    /// [`USES_PER_BLOCK`] numbers at once ([`MemoryStore::uses`]) and hands
    /// them out in turn, so that threads using their own keys do not write
    /// one shared cache line on every operation: two threads incrementing
    /// their own counters went from 0.95× to 1.22× the speed of
    /// `DashMap::get_mut` (medians of three runs of the `peers` bench). One
    /// thread's uses stay in their exact order; two threads' uses are
    /// ordered to within a block.
    fn next_use(&self) -> u64 {
        USE_BLOCK.with(|block| {
            let (store, last, end) = block.get();
            if store == self.id && last < end {
                block.set((store, last + 1, end));
                return last + 1;
            }
            let end = self.uses.fetch_add(USES_PER_BLOCK, Ordering::Relaxed) + USES_PER_BLOCK;
            let first = end - USES_PER_BLOCK + 1;
            block.set((self.id, first, end));
            first
        })
    }

    /// Remove `key`'s entry, if any.
    fn remove(&self, map: &mut Map, hash: u64, key: &Key) {
        if let RawEntryMut::Occupied(entry) = find(map, hash, key) {
            let (k, e) = entry.remove_entry();
            self.forget(&k, &e);
        }
    }

    /// Append or prepend `value` to the live entry of `key` (held in
    /// `shard`, its value `old_len` bytes long), within the item limit and
    /// the memory budget.
    #[expect(
        clippy::too_many_arguments,
        reason = "the shard, the key and its hash, the old length, the bytes and where they go, and the operation's time"
    )]
    fn extend_live(
        &self,
        shard: &mut Shard,
        hash: u64,
        key: &Key,
        old_len: usize,
        value: &[u8],
        append: bool,
        now: &Now<'_>,
    ) -> Result<()> {
        let size = self.check_size(key, old_len + value.len())?;
        self.reserve(shard, key, size - item_size(key.len(), old_len), now)?;
        if let Some(e) = entry(&mut shard.map, hash, key) {
            let bytes = e.value();
            if append {
                bytes.extend_from_slice(value);
            } else {
                bytes.splice(0..0, value.iter().copied());
            }
            e.cas = shard.cas.next();
        }
        Ok(())
    }

    /// Make room for `grow` more bytes while holding `shard` (which holds
    /// `key`, to be kept), and account for them. Evicts the least recently
    /// used items across shards, or (with [`Eviction::Error`], or when nothing
    /// can be evicted) fails with OutOfMemory. Other shards are only ever
    /// `try_lock`ed, so two writers cannot deadlock.
    fn reserve(&self, shard: &mut Shard, key: &Key, grow: usize, now: &Now<'_>) -> Result<()> {
        // How often to look again when nothing was freed because other
        // shards were locked. An LRU store looks hard: it must not refuse a
        // write while anything can be evicted. A no-evict store refuses
        // after a few looks, as memcached -M gives up after checking a few
        // items at the tail of its LRU: a full server's refusals must stay
        // cheap, and a locked shard seldom holds the only expired items.
        let max_busy_rounds = match self.eviction {
            Eviction::Error => 4,
            Eviction::Lru => 1000,
        };
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
                Freed::Busy if busy_rounds < max_busy_rounds => {
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
    /// A shard whose [`Shard::soonest`] is still ahead is not scanned.
    fn reclaim_expired(&self, own: &mut Shard, keep: &Key, now: &Now<'_>) -> Freed {
        let mut freed = false;
        let mut locked = 0;
        let mut sweep = |shard: &mut Shard| {
            if shard.soonest == 0 || shard.soonest > now.secs() {
                return;
            }
            let mut soonest = 0;
            let expired: Vec<Box<[u8]>> = shard
                .map
                .iter()
                .filter(|(k, e)| {
                    let gone = e.expired(now) && &***k != keep.as_bytes();
                    if !gone && e.exptime != 0 && (soonest == 0 || e.exptime < soonest) {
                        soonest = e.exptime;
                    }
                    gone
                })
                .map(|(k, _)| k.clone())
                .collect();
            shard.soonest = soonest;
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

    /// Evict the least recently used item: the lowest use number among
    /// the front of this shard (other than `keep`) and the fronts of the
    /// other shards that are not locked right now.
    fn evict_one(&self, shard: &mut Shard, keep: &Key) -> Freed {
        let mut best: Option<(u64, Option<usize>)> = shard
            .map
            .iter()
            .find(|(k, _)| &***k != keep.as_bytes())
            .map(|(_, e)| (e.used, None));
        let mut locked = 0;
        for (i, other) in self.shards.iter().enumerate() {
            match other.try_lock() {
                Some(other) => {
                    if let Some((_, e)) = other.map.front()
                        && best.is_none_or(|(used, _)| e.used < used)
                    {
                        best = Some((e.used, Some(i)));
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
                self.note_loss();
                Freed::Some
            }
            None => Freed::Busy,
        }
    }

    /// Store a whole new value under `key` (present, expired or not), as
    /// its most recently used item. An entry already there keeps its key
    /// and, unless it is more than twice as large as needed, its buffer.
    fn put(
        &self,
        shard: &mut Shard,
        hash: u64,
        key: &Key,
        value: &[u8],
        exptime: u64,
        now: &Now<'_>,
    ) -> Result<u64> {
        let size = self.check_size(key, value.len())?;
        let old =
            entry(&mut shard.map, hash, key).map_or(0, |e| item_size(key.len(), e.value.len()));
        if size > old {
            self.reserve(shard, key, size - old, now)?;
        } else {
            self.used.fetch_sub(old - size, Ordering::Relaxed);
        }
        let cas = shard.cas.next();
        let used = self.next_use();
        match find(&mut shard.map, hash, key) {
            RawEntryMut::Occupied(mut entry) => {
                let e = entry.get_mut();
                if e.value.capacity() / 2 > value.len() {
                    e.value = value.to_vec();
                } else {
                    e.value.clear();
                    e.value.extend_from_slice(value);
                }
                e.counter = None;
                e.cas = cas;
                e.exptime = exptime;
                e.used = used;
                entry.to_back();
                shard.note_expiry(exptime);
            }
            RawEntryMut::Vacant(entry) => {
                let e = Entry {
                    value: value.to_vec(),
                    counter: None,
                    cas,
                    exptime,
                    used,
                };
                entry.insert_hashed_nocheck(hash, key.as_bytes().into(), e);
                shard.note_expiry(exptime);
            }
        }
        Ok(cas)
    }

    fn concat(&self, key: &Key, value: &[u8], append: bool) -> Result<bool> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_shard(key, |shard, hash, now| {
            let Some(e) = self.live(&mut shard.map, hash, key, now) else {
                return Ok(false);
            };
            let old_len = e.value.len();
            self.extend_live(shard, hash, key, old_len, value, append, now)
                .map(|()| true)
        })
    }

    fn delta(&self, key: &Key, delta: u64, incr: bool) -> Result<Option<u64>> {
        self.with_shard(key, |shard, hash, now| {
            self.apply_delta(shard, hash, key, delta, incr, now)
        })
    }

    /// incr/decr `key` if it is live (else `None`) as memcached's
    /// do_add_delta does, its value read as [`parse_counter`] does. The
    /// result is kept as a number ([`Entry::counter`]): one lookup, no
    /// parsing or formatting, and no allocation unless it needs more
    /// digits than the value has.
    // Inlined: see `live`.
    #[inline(always)]
    fn apply_delta(
        &self,
        shard: &mut Shard,
        hash: u64,
        key: &Key,
        delta: u64,
        incr: bool,
        now: &Now<'_>,
    ) -> Result<Option<u64>> {
        let Some(mut e) = self.live(&mut shard.map, hash, key, now) else {
            return Ok(None);
        };
        let Some(current) = e.counter.or_else(|| parse_counter(&e.value)) else {
            return Err(Error::NonNumeric { key: key.display() });
        };
        let new = if incr {
            current.wrapping_add(delta)
        } else {
            current.saturating_sub(delta)
        };
        let old_len = e.value.len();
        if wider_than(new, old_len) {
            let new_len = decimal_len(new);
            // More digits than the value holds: within the item size limit
            // (where memcached fails to allocate the longer item), and
            // room for them first.
            self.check_size(key, new_len)?;
            self.reserve(shard, key, new_len - old_len, now)?;
            let Some(again) = entry(&mut shard.map, hash, key) else {
                return Err(Error::Internal(format!(
                    "the embedded store lost {} while making room for it",
                    key.display()
                )));
            };
            e = again;
            e.value.resize(new_len, b' ');
        }
        e.counter = Some(new);
        e.cas = shard.cas.next();
        Ok(Some(new))
    }
}

impl MemoryStore {
    // One function per operation; `execute` dispatches to them.

    fn op_get(&self, key: &Key) -> Result<Option<Item>> {
        self.with_shard(key, |shard, hash, now| {
            Ok(self.live(&mut shard.map, hash, key, now).map(|e| e.item()))
        })
    }

    fn op_set(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<u64> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_shard(key, |shard, hash, now| {
            self.put(shard, hash, key, value, now.exptime(ttl), now)
        })
    }

    fn op_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_shard(key, |shard, hash, now| {
            if self.live(&mut shard.map, hash, key, now).is_some() {
                return Ok(Stored::NotStored);
            }
            self.put(shard, hash, key, value, now.exptime(ttl), now)
                .map(Stored::Stored)
        })
    }

    fn op_replace(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_shard(key, |shard, hash, now| {
            if self.live(&mut shard.map, hash, key, now).is_none() {
                return Ok(Stored::NotStored);
            }
            self.put(shard, hash, key, value, now.exptime(ttl), now)
                .map(Stored::Stored)
        })
    }

    fn op_cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
        // Like the memcached backend: an oversized value is refused before
        // anything else is looked at.
        self.check_size(key, value.len())?;
        self.with_shard(key, |shard, hash, now| {
            match self.live(&mut shard.map, hash, key, now) {
                None => Ok(CasOutcome::NotFound),
                Some(e) if e.cas != cas => Ok(CasOutcome::Exists),
                Some(_) => self
                    .put(shard, hash, key, value, now.exptime(ttl), now)
                    .map(CasOutcome::Stored),
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
        self.with_shard(key, |shard, hash, now| {
            match self.live(&mut shard.map, hash, key, now) {
                Some(e) => {
                    let old_len = e.value.len();
                    self.extend_live(shard, hash, key, old_len, value, true, now)
                }
                None => self
                    .put(shard, hash, key, value, now.exptime(ttl), now)
                    .map(drop),
            }
        })
    }

    fn op_incr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.delta(key, delta, true)
    }

    fn op_decr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.delta(key, delta, false)
    }

    fn op_incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        self.with_shard(key, |shard, hash, now| {
            if let Some(new) = self.apply_delta(shard, hash, key, delta, true, now)? {
                return Ok(new);
            }
            let mut digits = itoa::Buffer::new();
            let digits = digits.format(initial).as_bytes();
            self.put(shard, hash, key, digits, now.exptime(ttl), now)?;
            Ok(initial)
        })
    }

    fn op_delete(&self, key: &Key) -> Result<bool> {
        self.with_shard(key, |shard, hash, now| {
            if self.live(&mut shard.map, hash, key, now).is_none() {
                return Ok(false);
            }
            self.remove(&mut shard.map, hash, key);
            Ok(true)
        })
    }

    fn op_delete_cas(&self, key: &Key, cas: u64) -> Result<DeleteOutcome> {
        self.with_shard(key, |shard, hash, now| {
            match self.live(&mut shard.map, hash, key, now) {
                None => Ok(DeleteOutcome::NotFound),
                Some(e) if e.cas != cas => Ok(DeleteOutcome::Exists),
                Some(_) => {
                    self.remove(&mut shard.map, hash, key);
                    Ok(DeleteOutcome::Deleted)
                }
            }
        })
    }

    fn op_touch(&self, key: &Key, ttl: Ttl) -> Result<bool> {
        self.with_shard(key, |shard, hash, now| {
            let Some(e) = self.live(&mut shard.map, hash, key, now) else {
                return Ok(false);
            };
            let exptime = now.exptime(ttl);
            e.exptime = exptime;
            shard.note_expiry(exptime);
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

    /// [`Retention::Complete`](crate::Retention::Complete) until the store
    /// first evicts an item or is flushed; from then on, the time of the
    /// latest such loss by the store's clock (the millisecond after it).
    fn retention(&self, key: &Key) -> Result<crate::Retention> {
        let _ = key;
        Ok(match self.lost_at.load(Ordering::Acquire) {
            0 => crate::Retention::Complete,
            at => crate::Retention::Since(at.saturating_add(1)),
        })
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

    /// Directly, without an `Op` and a `Reply`: the hot path of
    /// `Counter::incr` on the embedded store.
    fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        self.op_incr_or_init(key, delta, initial, ttl)
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

    /// A store on a clock that never moves, with room for 40 items of a
    /// 3-byte key and 10 bytes.
    fn forty_items() -> MemoryStore {
        MemoryStore::builder()
            .clock(Arc::new(ManualClock::new(1_000_000)))
            .memory_limit(40 * item_size(3, 10))
            .build()
    }

    #[test]
    fn lru_is_exact_within_one_millisecond_across_shards() {
        // The clock never moves: every write and read happens in the same
        // millisecond, on keys spread over all the shards. Eviction must
        // still follow the order of use exactly, store-wide.
        let store = forty_items();
        let key = |i: usize| k(&format!("{i:03}"));
        for i in 0..40 {
            store.set(&key(i), &[b'x'; 10], Ttl::Never).unwrap();
        }
        // Reading 0 makes 1 the least recently used.
        assert!(store.get(&key(0)).unwrap().is_some());
        // The order of use is now 1, 2, ..., 39, 0: each new item must
        // evict exactly the least recently used one left.
        let expected = (1..40).chain([0]);
        for (i, oldest) in (40..80).zip(expected) {
            store.set(&key(i), &[b'x'; 10], Ttl::Never).unwrap();
            // A miss changes no order, so this read does not disturb it.
            assert!(
                store.get(&key(oldest)).unwrap().is_none(),
                "writing {i} kept {oldest}, the least recently used"
            );
            assert_eq!(store.evictions(), (i - 39) as u64);
        }
        for i in 40..80 {
            assert!(store.get(&key(i)).unwrap().is_some(), "{i} was evicted");
        }
    }

    #[test]
    fn a_threads_own_uses_keep_their_order_and_other_threads_rank_by_block() {
        let store = forty_items();
        let key = |i: usize| k(&format!("{i:03}"));
        // This thread: numbers 1..=16, then 17..=20 of its second block.
        for i in 0..20 {
            store.set(&key(i), &[b'x'; 10], Ttl::Never).unwrap();
        }
        // Another thread, after: its own blocks, 33..=52.
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 20..40 {
                    store.set(&key(i), &[b'x'; 10], Ttl::Never).unwrap();
                }
            });
        });
        // This thread reads 0: number 21, left in its block, which ranks
        // it as of when that block was reserved (before the other
        // thread's uses), within 15 of this thread's uses. 1..=19 are
        // still the least recently used, and go first, in their order.
        assert!(store.get(&key(0)).unwrap().is_some());
        for (i, oldest) in (40..59).zip(1..20) {
            store.set(&key(i), &[b'x'; 10], Ttl::Never).unwrap();
            assert!(
                store.get(&key(oldest)).unwrap().is_none(),
                "writing {i} kept {oldest}"
            );
            assert_eq!(store.evictions(), (i - 39) as u64);
        }
        for i in (0..1).chain(20..59) {
            assert!(store.get(&key(i)).unwrap().is_some(), "{i} was evicted");
        }
    }

    #[test]
    fn wider_than_agrees_with_counting_digits() {
        let mut values = vec![0, 1, 9, u64::MAX, u64::MAX - 1];
        for p in 1..20 {
            let power = 10u64.pow(p);
            values.extend([power - 1, power, power + 1]);
        }
        for n in values {
            for len in 0..=22 {
                assert_eq!(wider_than(n, len), decimal_len(n) > len, "{n} in {len}");
            }
        }
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

    /// Each shard's `soonest` bound lets a sweep skip it; check that the
    /// bound follows every way an expiry time is set (a write, a later
    /// write, a touch) and is raised, not lost, by a sweep.
    #[test]
    fn no_evict_mode_reclaims_items_as_each_expires() {
        let clock = ManualClock::new(1_000_000);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .shards(1)
            .memory_limit(3 * item_size(2, 100))
            .eviction(Eviction::Error)
            .build();
        store.set(&k("a0"), &[b'x'; 100], Ttl::secs(10)).unwrap();
        store.set(&k("b0"), &[b'x'; 100], Ttl::secs(5)).unwrap();
        store.set(&k("c0"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.set(&k("d0"), &[b'x'; 100], Ttl::Never).is_err());
        clock.advance(Duration::from_secs(5));
        // b0 is reclaimed; the sweep leaves the bound at a0's second (1010).
        store.set(&k("d0"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.set(&k("e0"), &[b'x'; 100], Ttl::Never).is_err());
        // c0 gets a TTL by touch, d0 by a new write: both before a0's.
        assert!(store.touch(&k("c0"), Ttl::secs(1)).unwrap());
        store.set(&k("d0"), &[b'y'; 100], Ttl::secs(2)).unwrap();
        clock.advance(Duration::from_secs(1));
        store.set(&k("e0"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.get(&k("c0")).unwrap().is_none());
        clock.advance(Duration::from_secs(1));
        store.set(&k("f0"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.get(&k("d0")).unwrap().is_none());
        assert!(store.set(&k("g0"), &[b'x'; 100], Ttl::Never).is_err());
        clock.advance(Duration::from_secs(3));
        store.set(&k("g0"), &[b'x'; 100], Ttl::Never).unwrap();
        assert!(store.get(&k("a0")).unwrap().is_none());
        assert_eq!(store.evictions(), 0);
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

    /// An increment that needs more digits than the value has stays within
    /// the item size limit, as `set` does (found by review: `"9"` + 1 under
    /// a limit that fits one digit became `"10"`).
    #[test]
    fn incr_never_grows_an_item_past_the_limit() {
        let store = MemoryStore::builder()
            .item_size_limit(crate::item::item_size(1, 1))
            .build();
        store.set(&k("k"), b"9", Ttl::Never).unwrap();
        assert!(store.set(&k("k"), b"10", Ttl::Never).is_err());
        assert!(matches!(
            store.incr(&k("k"), 1),
            Err(Error::ValueTooLarge { .. })
        ));
        assert_eq!(store.get(&k("k")).unwrap().unwrap().value, b"9");
        assert_eq!(store.incr(&k("k"), 0).unwrap(), Some(9));
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
