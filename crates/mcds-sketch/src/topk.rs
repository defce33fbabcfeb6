//! [`Leaderboard`]: Redis's `ZINCRBY` and `ZREVRANGE … WITHSCORES` for
//! counts — exact while the members fit, a Space-Saving sketch past that.
//!
//! **Algorithm.** The board keeps at most `m` (its *capacity*) members,
//! each with a count and an error, and `N`, the sum of every increment.
//! An increment of a member on the board adds to its count. A new member
//! takes a free slot with error 0 while there is one: up to `m` distinct
//! members, every count is exact. Once the board is full, a new member
//! *replaces* the member with the smallest count `c` (ties: the smallest
//! member bytes) and starts at `c + by` with error `c`: this is Metwally,
//! Agrawal and El Abbadi's Space-Saving, with weighted increments.
//!
//! **Error bound.** Counts never fall, and the counts on the board always
//! sum to `N`, so the smallest count is at most `N/m`. Hence, in sketched
//! mode:
//!
//! * each reported count overestimates the member's true count by at most
//!   its recorded error: `count − error ≤ true ≤ count`, with
//!   `error ≤ N/m`;
//! * a member that is not on the board has a true count of at most the
//!   smallest count on the board ([`SpaceSaving::max_error`], `≤ N/m`), so
//!   **every member with a true count above `N/m` is on the board**.
//!
//! In exact mode (no replacement yet) every error is 0 and counts are
//! exact. `tests/topk.rs` measures both on a Zipf stream.
//!
//! **Storage.** One item, `<prefix>topk:<name>:board`, updated by CAS
//! ([`Store::update`]): the magic `MTK1`, a flags byte (bit 0: exact), the
//! capacity (`u32`), `N` (`u64`), the number of members (`u32`), the members
//! in byte order (a length byte, the member, count `u64`, error `u64`, all
//! little-endian), and an XXH3-64 checksum of everything before it.
//! Anything else — damaged, truncated, another program's bytes, a board of
//! another capacity — is [`Error::Corrupt`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mcds_core::{
    Access, Error, Io, Key, Result, Scope, Store, Ttl, blocking_and_async, stable_hash,
};

use crate::{corrupt, update_checked};

/// The stored form's first bytes (version 1).
pub const MAGIC: &[u8; 4] = b"MTK1";
/// The longest member, in bytes. It bounds a board's stored size, so a
/// board's capacity can be checked against the item limit when it is
/// opened rather than fail on some later increment.
pub const MAX_MEMBER_LEN: usize = 128;
/// Bytes before the members: magic, flags, capacity, N, member count.
const HEADER_LEN: usize = 4 + 1 + 4 + 8 + 4;
/// Bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 8;
/// Bytes of one member besides its bytes: length, count, error.
const ENTRY_OVERHEAD: usize = 1 + 8 + 8;
/// The flag of a board that has never replaced a member.
const FLAG_EXACT: u8 = 1;

/// One member of a board and its count.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The member.
    pub member: Vec<u8>,
    /// Its count: exact in exact mode, an upper bound on the true count in
    /// sketched mode.
    pub count: u64,
    /// How much `count` may overestimate the true count (0 in exact mode;
    /// at most `N/m` in sketched mode).
    pub error: u64,
}

impl Entry {
    /// The least the member's true count can be: `count − error`.
    pub fn lower_bound(&self) -> u64 {
        self.count - self.error
    }
}

/// The stored board in memory: the Space-Saving summary of up to
/// `capacity` members, and the codec of its stored form.
///
/// ```
/// use mcds_sketch::topk::SpaceSaving;
///
/// let mut board = SpaceSaving::new(2);
/// board.insert(b"ann", 5).unwrap();
/// board.insert(b"bob", 3).unwrap();
/// assert!(board.is_exact());
/// board.insert(b"cy", 1).unwrap(); // full: cy replaces bob (3), starts at 4 with error 3
/// assert!(!board.is_exact());
/// let top = board.top(2);
/// assert_eq!((top[0].member.as_slice(), top[0].count), (&b"ann"[..], 5));
/// assert_eq!((top[1].member.as_slice(), top[1].count, top[1].error), (&b"cy"[..], 4, 3));
/// assert_eq!(board.total(), 9);
/// assert_eq!(SpaceSaving::decode(&board.encode()).unwrap(), board);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceSaving {
    capacity: u32,
    total: u64,
    exact: bool,
    /// member → (count, error)
    entries: BTreeMap<Vec<u8>, (u64, u64)>,
    /// (count, member), for the smallest count.
    by_count: BTreeSet<(u64, Vec<u8>)>,
}

impl SpaceSaving {
    /// An empty board of `capacity` members (at least 1).
    pub fn new(capacity: u32) -> SpaceSaving {
        SpaceSaving {
            capacity: capacity.max(1),
            total: 0,
            exact: true,
            entries: BTreeMap::new(),
            by_count: BTreeSet::new(),
        }
    }

    /// How many members the board keeps.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// `N`: the sum of every increment ever applied (the counts on the board
    /// sum to it).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether every count is exact: no member was ever replaced.
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// Members on the board.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was ever counted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The most a count on the board overestimates, and the most a member
    /// *off* the board can have been counted: 0 in exact mode, else the
    /// smallest count on the board, which is at most `N/m`.
    pub fn max_error(&self) -> u64 {
        if self.exact {
            0
        } else {
            self.by_count.first().map_or(0, |(c, _)| *c)
        }
    }

    /// Add `by` to `member`'s count (replacing the smallest member if the
    /// board is full and `member` is not on it); the member's new count.
    /// `by` = 0 changes nothing (the count, 0 if off the board). An error
    /// when `N` would pass 2^64 − 1 (nothing changes) or the member is
    /// longer than [`MAX_MEMBER_LEN`].
    pub fn insert(&mut self, member: &[u8], by: u64) -> std::result::Result<u64, String> {
        if by == 0 {
            return Ok(self.entries.get(member).map_or(0, |&(count, _)| count));
        }
        if member.len() > MAX_MEMBER_LEN {
            return Err(format!(
                "a leaderboard member is at most {MAX_MEMBER_LEN} bytes; got {} — hash or shorten it",
                member.len()
            ));
        }
        let total = self.total.checked_add(by).ok_or_else(|| {
            format!(
                "the leaderboard's total would pass 2^64 - 1 ({} + {by}) — reset it",
                self.total
            )
        })?;
        self.total = total;
        let (count, error) = match self.entries.get(member) {
            Some(&(count, error)) => {
                self.by_count.remove(&(count, member.to_vec()));
                (count + by, error)
            }
            None if self.entries.len() < self.capacity as usize => (by, 0),
            None => {
                let (smallest, evicted) = self.by_count.pop_first().expect("a full board");
                self.entries.remove(&evicted);
                self.exact = false;
                (smallest + by, smallest)
            }
        };
        self.entries.insert(member.to_vec(), (count, error));
        self.by_count.insert((count, member.to_vec()));
        Ok(count)
    }

    /// The member's entry, if it is on the board.
    pub fn get(&self, member: &[u8]) -> Option<Entry> {
        self.entries.get(member).map(|&(count, error)| Entry {
            member: member.to_vec(),
            count,
            error,
        })
    }

    /// The `k` members with the largest counts, largest first (ties: by
    /// member bytes).
    pub fn top(&self, k: usize) -> Vec<Entry> {
        let mut all: Vec<(&Vec<u8>, &(u64, u64))> = self.entries.iter().collect();
        all.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(b.0)));
        all.into_iter()
            .take(k)
            .map(|(member, &(count, error))| Entry {
                member: member.clone(),
                count,
                error,
            })
            .collect()
    }

    /// The stored form (see the [module](self) docs).
    pub fn encode(&self) -> Vec<u8> {
        let body: usize = self.entries.keys().map(|m| ENTRY_OVERHEAD + m.len()).sum();
        let mut out = Vec::with_capacity(HEADER_LEN + body + CHECKSUM_LEN);
        out.extend_from_slice(MAGIC);
        out.push(if self.exact { FLAG_EXACT } else { 0 });
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.total.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for (member, (count, error)) in &self.entries {
            out.push(member.len() as u8);
            out.extend_from_slice(member);
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&error.to_le_bytes());
        }
        out.extend_from_slice(&stable_hash(&out).to_le_bytes());
        out
    }

    /// Read the stored form; never panics. Wrong magic, a checksum that
    /// does not match, unknown flags, members out of order or too long,
    /// an error above its count, counts that do not sum to `N`, more members
    /// than the capacity (or, once sketched, fewer), or trailing bytes are
    /// an error.
    pub fn decode(bytes: &[u8]) -> std::result::Result<SpaceSaving, String> {
        if bytes.len() < HEADER_LEN + CHECKSUM_LEN || &bytes[..4] != MAGIC {
            return Err("not a leaderboard (no MTK1 header)".into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        if stable_hash(body).to_le_bytes() != sum {
            return Err("checksum mismatch: the board is damaged or truncated".into());
        }
        let mut r = Reader(&body[4..]);
        let flags = r.u8()?;
        if flags & !FLAG_EXACT != 0 {
            return Err(format!(
                "unknown flags {flags:#04x} (written by a newer mcds?)"
            ));
        }
        let capacity = r.u32()?;
        let total = r.u64()?;
        let n = r.u32()?;
        if capacity == 0 || n > capacity {
            return Err(format!("{n} members on a board of capacity {capacity}"));
        }
        let exact = flags & FLAG_EXACT != 0;
        if !exact && n != capacity {
            return Err(format!(
                "a sketched board is full, but holds {n} of {capacity} members"
            ));
        }
        let mut board = SpaceSaving::new(capacity);
        board.exact = exact;
        board.total = total;
        let mut sum = 0u64;
        for _ in 0..n {
            let len = usize::from(r.u8()?);
            if len > MAX_MEMBER_LEN {
                return Err(format!(
                    "a member of {len} bytes (at most {MAX_MEMBER_LEN})"
                ));
            }
            let member = r.take(len)?.to_vec();
            let (count, error) = (r.u64()?, r.u64()?);
            if error > count || (exact && error != 0) {
                return Err(format!("a member with count {count} and error {error}"));
            }
            if board
                .entries
                .last_key_value()
                .is_some_and(|(m, _)| *m >= member)
            {
                return Err("members out of order or repeated".into());
            }
            sum = sum.checked_add(count).ok_or("counts sum past 2^64 - 1")?;
            board.by_count.insert((count, member.clone()));
            board.entries.insert(member, (count, error));
        }
        if sum != total {
            return Err(format!("counts sum to {sum}, the total says {total}"));
        }
        if !r.0.is_empty() {
            return Err(format!("{} bytes after the last member", r.0.len()));
        }
        Ok(board)
    }
}

/// Reads little-endian fields off the front of a slice, never panicking.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("truncated".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> std::result::Result<u32, String> {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(raw))
    }

    fn u64(&mut self) -> std::result::Result<u64, String> {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(raw))
    }
}

/// A distributed leaderboard of counts (Redis's `ZINCRBY`/`ZREVRANGE`):
/// exact up to `capacity` distinct members, a Space-Saving sketch of
/// `capacity` counters past that (see the [module](self) docs for the
/// error bound).
///
/// * [`incr`](Self::incr): one CAS read-modify-write of the board, 2 round
///   trips; [`incr_many`](Self::incr_many) likewise for any batch.
/// * [`top`](Self::top), [`score`](Self::score), [`summary`](Self::summary):
///   1 round trip.
/// * Every method that reaches the store has an async twin
///   ([`incr_async`](Self::incr_async), [`top_async`](Self::top_async), …):
///   the same algorithm, awaiting the store instead of blocking the thread.
///
/// **Concurrency and failures.** Writers never lose each other's
/// increments: a write that lost a race is redone on the new board.
/// An increment whose reply was lost ([`Error::Ambiguous`]) may or may not
/// have been counted; it is not retried, so it is counted at most once —
/// read [`summary`](Self::summary)`.total()` to reconcile. Eviction,
/// a restart or a flush deletes the board: it reads as empty again. The
/// board never depends on when memcached expires an item: with a TTL
/// ([`with_ttl`](Self::with_ttl)) it is gone once the TTL passes, whole.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::Leaderboard;
///
/// let scores = Leaderboard::new(Arc::new(MemoryStore::new()), "game:42", 100)?;
/// scores.incr("ann", 10)?;
/// scores.incr("bob", 25)?;
/// assert_eq!(scores.incr("ann", 20)?, 30);
/// let top = scores.top(2)?;
/// assert_eq!((top[0].member.as_slice(), top[0].count), (&b"ann"[..], 30));
/// assert_eq!((top[1].member.as_slice(), top[1].count), (&b"bob"[..], 25));
/// assert_eq!(scores.score("cy")?, None);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses the board's one item: every score, and
/// increments after the loss start it again. No read can tell a lost board
/// from a new one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct Leaderboard {
    store: Arc<dyn Store>,
    key: Key,
    capacity: u32,
    ttl: Ttl,
}

impl Leaderboard {
    /// The leaderboard `name` in `scope` (a store, or a [`Scope`] with a
    /// key prefix), exact up to `capacity` members and a sketch of
    /// `capacity` counters beyond (error at most `N/capacity`). Every client
    /// must open it with the same capacity. [`Error::InvalidArgument`] when
    /// a full board (`capacity` members of [`MAX_MEMBER_LEN`] bytes, 145
    /// bytes each) would not fit the store's item limit: about 7 000 on
    /// memcached's default 1 MiB.
    pub fn new(scope: impl Into<Scope>, name: &str, capacity: u32) -> Result<Leaderboard> {
        let scope = scope.into();
        let key = scope.key("topk", name, "board")?;
        let store = Arc::clone(scope.store());
        let per_member = ENTRY_OVERHEAD + MAX_MEMBER_LEN;
        let room = store
            .item_size_limit()
            .saturating_sub(mcds_core::backend::item_size(
                key.len(),
                HEADER_LEN + CHECKSUM_LEN,
            ));
        let most = (room / per_member).min(u32::MAX as usize) as u32;
        if capacity == 0 || capacity > most {
            return Err(Error::InvalidArgument(format!(
                "a leaderboard's capacity is 1 to {most} members on this store (each takes up to {per_member} bytes of one item); got {capacity}"
            )));
        }
        Ok(Leaderboard {
            store,
            key,
            capacity,
            ttl: Ttl::Never,
        })
    }

    /// Expire the board `ttl` after its last increment.
    pub fn with_ttl(mut self, ttl: Ttl) -> Leaderboard {
        self.ttl = ttl;
        self
    }

    /// The key the board lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// How many members the board keeps exactly, and counters it keeps
    /// once sketched.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    fn decode(&self, bytes: &[u8]) -> std::result::Result<SpaceSaving, String> {
        let board = SpaceSaving::decode(bytes)?;
        if board.capacity != self.capacity {
            return Err(format!(
                "created with capacity {}; this leaderboard wants {} — open it with the capacity it was created with, or clear it",
                board.capacity, self.capacity
            ));
        }
        Ok(board)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// ZINCRBY: add `by` (at least 1) to `member`'s count; its new count
    /// (exact in exact mode, an upper bound once sketched). 2 round trips.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_sketch::Leaderboard;
    /// # mcds_core::block_on(async {
    /// let scores = Leaderboard::new(Arc::new(MemoryStore::new()), "game:43", 100)?;
    /// scores.incr_async("ann", 10).await?;
    /// assert_eq!(scores.score_async("ann").await?.unwrap().count, 10);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn incr_io(&self, io: Io, member: impl AsRef<[u8]>, by: u64) -> Result<u64> {
        let member = member.as_ref();
        let mut count = 0;
        self.update(self.access(io), &[(member, by)], &mut |c| count = c)
            .await?;
        Ok(count)
    }

    /// Apply many increments, in order, in one CAS update (2 round trips):
    /// for a local buffer of a hot path's increments.
    #[blocking_and_async(pub)]
    async fn incr_many_io<M: AsRef<[u8]>>(&self, io: Io, increments: &[(M, u64)]) -> Result<()> {
        let increments: Vec<(&[u8], u64)> =
            increments.iter().map(|(m, by)| (m.as_ref(), *by)).collect();
        self.update(self.access(io), &increments, &mut |_| {}).await
    }

    async fn update(
        &self,
        access: Access<'_>,
        increments: &[(&[u8], u64)],
        counted: &mut (dyn FnMut(u64) + Send),
    ) -> Result<()> {
        for (member, by) in increments {
            if *by == 0 || member.len() > MAX_MEMBER_LEN {
                return Err(Error::InvalidArgument(format!(
                    "a leaderboard increment is at least 1, of a member of at most {MAX_MEMBER_LEN} bytes; got {by} for a member of {} bytes",
                    member.len()
                )));
            }
        }
        let mut refused = None;
        update_checked(access, &self.key, self.ttl, &mut |current| {
            let mut board = match current {
                None => SpaceSaving::new(self.capacity),
                Some(bytes) => self.decode(bytes)?,
            };
            for (member, by) in increments {
                match board.insert(member, *by) {
                    Ok(count) => counted(count),
                    Err(overflow) => {
                        refused = Some(overflow);
                        return Ok(None);
                    }
                }
            }
            Ok(Some(board.encode()))
        })
        .await?;
        match refused {
            Some(overflow) => Err(Error::InvalidArgument(overflow)),
            None => Ok(()),
        }
    }

    /// The whole stored board (empty if missing). 1 round trip.
    #[blocking_and_async(pub)]
    async fn summary_io(&self, io: Io) -> Result<SpaceSaving> {
        match self.access(io).get(&self.key).await? {
            None => Ok(SpaceSaving::new(self.capacity)),
            Some(item) => self
                .decode(&item.value)
                .map_err(|reason| corrupt(&self.key, reason)),
        }
    }

    /// ZREVRANGE 0 k−1 WITHSCORES: the `k` members with the largest counts,
    /// largest first, each with its error. 1 round trip.
    #[blocking_and_async(pub)]
    async fn top_io(&self, io: Io, k: usize) -> Result<Vec<Entry>> {
        Ok(self.summary_io(io).await?.top(k))
    }

    /// ZSCORE: the member's entry, `None` if it is not on the board (then
    /// its true count is at most [`SpaceSaving::max_error`]). 1 round trip.
    #[blocking_and_async(pub)]
    async fn score_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<Option<Entry>> {
        let member = member.as_ref();
        Ok(self.summary_io(io).await?.get(member))
    }

    /// Delete the board.
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        self.access(io).delete(&self.key).await.map(drop)
    }
}
