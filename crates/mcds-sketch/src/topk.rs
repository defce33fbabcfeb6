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
//! **Storage.** A board of up to [`SHARD_MEMBERS`] members is one item,
//! `<prefix>topk:<name>:board`; a larger one is split by member hash into
//! shards of that many, each such a board, under a marker item (see
//! [`Leaderboard`]'s "Layout"). Each item is updated by CAS
//! ([`Store::update`]): the magic `MTK1`, a flags byte (bit 0: exact), the
//! capacity (`u32`), `N` (`u64`), the number of members (`u32`), the members
//! in byte order (a length byte, the member, count `u64`, error `u64`, all
//! little-endian), and an XXH3-64 checksum of everything before it.
//! Anything else — damaged, truncated, another program's bytes, a board of
//! another capacity — is [`Error::Corrupt`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use mcds_core::{
    Access, Backoff, CasOutcome, Clock, Error, Io, Item, Key, Op, Reply, Result, Scope, Store,
    Stored, Ttl, blocking_and_async, random_u64, stable_hash,
};

use crate::{MAX_ATTEMPTS, corrupt};

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
    /// The least [`max_error`](Self::max_error) can be: 0 for a stored
    /// board; for the [union](Self::union) of a sharded board's shards, the
    /// largest of theirs.
    floor: u64,
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
            floor: 0,
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
            let smallest = self.by_count.first().map_or(0, |(c, _)| *c);
            smallest.max(self.floor)
        }
    }

    /// The boards of a sharded leaderboard's shards as one: every member of
    /// each (a member lives in one shard), `N` their sum, exact if all are,
    /// and [`max_error`](Self::max_error) the largest of theirs (a member
    /// off the board was counted at most its own shard's smallest count).
    /// Its capacity is the sum of theirs. It is a summary to read, not a
    /// stored form: [`encode`](Self::encode) of a sketched union that is
    /// not full does not decode.
    fn union(parts: Vec<SpaceSaving>) -> std::result::Result<SpaceSaving, String> {
        let mut all = SpaceSaving::new(1);
        all.capacity = 0;
        for part in parts {
            all.capacity = all.capacity.saturating_add(part.capacity);
            all.total = all.total.checked_add(part.total).ok_or_else(|| {
                "the shards' totals sum past 2^64 - 1 — clear the board".to_string()
            })?;
            all.exact &= part.exact;
            all.floor = all.floor.max(part.max_error());
            all.entries.extend(part.entries);
            all.by_count.extend(part.by_count);
        }
        all.capacity = all.capacity.max(1);
        Ok(all)
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
        let all = self
            .entries
            .iter()
            .map(|(m, &(count, error))| (m.as_slice(), count, error))
            .collect();
        top_of(all, k)
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
        let parsed = Parsed::of(bytes)?;
        let mut board = SpaceSaving::new(parsed.capacity);
        board.exact = parsed.exact;
        board.total = parsed.total;
        // The members come in byte order: the maps are built in bulk.
        board.entries = parsed
            .entries
            .iter()
            .map(|&(m, count, error)| (m.to_vec(), (count, error)))
            .collect();
        board.by_count = parsed
            .entries
            .iter()
            .map(|&(m, count, _)| (count, m.to_vec()))
            .collect();
        Ok(board)
    }
}

/// A stored board read and checked (everything
/// [`SpaceSaving::decode`] checks), its members still in the bytes: what a
/// top-k of many shards reads without building each one's maps.
struct Parsed<'a> {
    capacity: u32,
    total: u64,
    exact: bool,
    /// (member, count, error), in member byte order.
    entries: Vec<(&'a [u8], u64, u64)>,
}

impl<'a> Parsed<'a> {
    fn of(bytes: &'a [u8]) -> std::result::Result<Parsed<'a>, String> {
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
        // At least 17 bytes a member: never allocate more than the bytes allow.
        let mut entries: Vec<(&[u8], u64, u64)> =
            Vec::with_capacity((n as usize).min(r.0.len() / ENTRY_OVERHEAD));
        let mut sum = 0u64;
        for _ in 0..n {
            let len = usize::from(r.u8()?);
            if len > MAX_MEMBER_LEN {
                return Err(format!(
                    "a member of {len} bytes (at most {MAX_MEMBER_LEN})"
                ));
            }
            let member = r.take(len)?;
            let (count, error) = (r.u64()?, r.u64()?);
            if error > count || (exact && error != 0) {
                return Err(format!("a member with count {count} and error {error}"));
            }
            if entries.last().is_some_and(|(m, ..)| *m >= member) {
                return Err("members out of order or repeated".into());
            }
            sum = sum.checked_add(count).ok_or("counts sum past 2^64 - 1")?;
            entries.push((member, count, error));
        }
        if sum != total {
            return Err(format!("counts sum to {sum}, the total says {total}"));
        }
        if !r.0.is_empty() {
            return Err(format!("{} bytes after the last member", r.0.len()));
        }
        Ok(Parsed {
            capacity,
            total,
            exact,
            entries,
        })
    }
}

/// The `k` largest of `entries` (ties: by member bytes), largest first: a
/// selection, then a sort of the `k`.
fn top_of(mut entries: Vec<(&[u8], u64, u64)>, k: usize) -> Vec<Entry> {
    let order = |a: &(&[u8], u64, u64), b: &(&[u8], u64, u64)| b.1.cmp(&a.1).then(a.0.cmp(b.0));
    if k < entries.len() {
        if k > 0 {
            entries.select_nth_unstable_by(k - 1, order);
        }
        entries.truncate(k);
    }
    entries.sort_unstable_by(order);
    entries
        .into_iter()
        .map(|(member, count, error)| Entry {
            member: member.to_vec(),
            count,
            error,
        })
        .collect()
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
/// exact up to `capacity` distinct members, a Space-Saving sketch past that
/// (see the [module](self) docs for the error bound).
///
/// * [`incr`](Self::incr): one CAS read-modify-write, 2 round trips;
///   [`incr_many`](Self::incr_many) likewise for any batch.
/// * [`top`](Self::top), [`score`](Self::score), [`summary`](Self::summary):
///   1 round trip (2 on a handle's first read of a sharded board).
/// * Every method that reaches the store has an async twin
///   ([`incr_async`](Self::incr_async), [`top_async`](Self::top_async), …):
///   the same algorithm, awaiting the store instead of blocking the thread.
///
/// # Layout: one item, or shards
///
/// A board of at most [`SHARD_MEMBERS`] members is one item, `<prefix>topk:<name>:board`,
/// in the [module](self)'s stored form. A larger one (up to
/// [`MAX_CAPACITY`]) is split by member: member `x` lives in shard
/// `hash(x) mod S`, and each shard is a board of its own of
/// [`SHARD_MEMBERS`] members, so an increment reads and writes one shard
/// (at most 29 KiB each way) whatever the capacity. `S` =
/// ⌈1.5 · capacity / 200⌉: the shards hold half as many counters again as
/// asked for, so that a shard's hashed share of `capacity` members (133 on
/// average) passes 200 only about 6 standard deviations out. The board is
/// exact until some shard has to replace a member, and the counts of a
/// sketched shard overestimate by at most `N_s / 200`, where `N_s` is the
/// total of the members hashed to it (about `N / (1.5 · capacity)` for a
/// stream that no one member dominates).
///
/// The shards hang off a **marker** item (`<key>.m`), which names the board's
/// *life*: a random nonce in every shard's key (`<key>.<nonce>.<s>`). A new
/// board's first increment writes every shard (empty) and then the marker,
/// with `add`, so a marker is never seen before its shards: a shard missing
/// while its marker exists was evicted or lost in a restart, and reads and
/// writes that need it fail with [`Error::Lost`] (clear the board to start
/// again) rather than count from zero. Two first increments race by the
/// marker's `add`: the loser deletes its shards and uses the winner's.
/// Shards are spread over the pool by their keys.
///
/// With a TTL, the marker expires `ttl` after the last increment (each one
/// touches it, in the batch that reads it); the shards live at least
/// `2·ttl + 60 s` past the last time each writing handle touched them all,
/// which it does at least every `ttl / 4` of its writes, by the scope's
/// clock. So shards outlive their marker by construction, and an expired
/// board reads as empty from the moment its marker expires, never in part.
/// A write that took longer than `ttl − 2 s` from that touch to its CAS's
/// reply (a paused thread) reads the marker again: if the life it wrote to
/// has ended, the call is [`Error::Ambiguous`] (the increment may have
/// been counted before the board expired, and gone with it, or not at
/// all; writing it again could count it twice). The marker records the
/// TTL: every writer must use the same one (another is
/// [`Error::Corrupt`]), or one without it would let the board expire
/// under the others.
///
/// A board of more than 200 members that an older mcds wrote in one item
/// keeps that item: reads and increments use it as before (an increment
/// moves the whole item) until it is cleared or lost; the next board of
/// that name is made in shards. Moving it into shards while others write
/// could not be made safe against a concurrent [`clear`](Self::clear)
/// (the move would bring back what was cleared), so it is not done. Handles
/// of one name must agree on the capacity: one on the other side of 200
/// finds the other's item or marker and fails with [`Error::Corrupt`].
///
/// **Concurrency and failures.** Writers never lose each other's
/// increments: a write that lost a race is redone on the new board (or
/// shard). An increment whose reply was lost ([`Error::Ambiguous`]) may or
/// may not have been counted; it is not retried, so it is counted at most
/// once — read [`summary`](Self::summary)`.total()` to reconcile.
/// [`incr_many`](Self::incr_many) of a sharded board writes each shard by
/// its own CAS, in one batch: an error after some shards took their
/// increments is [`Error::Ambiguous`] with how many were applied. The
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
///
/// // 100 000 members: 750 shards of 200, each increment moves one.
/// let big = Leaderboard::new(Arc::new(MemoryStore::new()), "game:43", 100_000)?;
/// big.incr_many(&[("ann", 3), ("bob", 5)])?;
/// assert_eq!(big.top(1)?[0].member, b"bob");
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | capacity 1 to [`MAX_CAPACITY`] (2^20); more than [`SHARD_MEMBERS`] needs an item limit that holds a shard (29 KiB) | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | a member of at most [`MAX_MEMBER_LEN`] (128) bytes, an increment of at least 1 | [`Error::InvalidArgument`] | nothing (the whole batch is refused) |
/// | `N` of a one-item board, or of one shard, at most 2^64 − 1 | [`Error::InvalidArgument`] | nothing |
/// | a sharded board's `N` (its shards' sum) at most 2^64 − 1 | [`summary`](Self::summary) is [`Error::InvalidArgument`]; `top` and `score` still read | — |
/// | 2 round trips an increment, at most 58 KiB moved (one shard each way) | — | — |
/// | `top` reads every shard: 1 round trip per ~700 shards a server, `N × (member + 17)` bytes | — | — |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction of a one-item board loses every score, and
/// increments after the loss start it again. No read can tell a lost board
/// from a new one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
/// A sharded board that loses a shard fails with [`Error::Lost`] while its
/// marker lives; one that loses its marker reads as empty, and its next
/// increment starts a new life (the old shards are then garbage, left to
/// expire or be evicted).
#[derive(Clone, Debug)]
pub struct Leaderboard {
    store: Arc<dyn Store>,
    key: Key,
    capacity: u32,
    ttl: Ttl,
    clock: Arc<dyn Clock>,
    /// `Some` for a board of more than [`SHARD_MEMBERS`] members.
    shards: Option<Arc<Shards>>,
    /// `<key>.m`, the marker of a sharded board of this name (which a
    /// one-item board's handle looks for too); `None` when the name leaves
    /// no room for it, and so no sharded board can have it.
    marker: Option<Key>,
}

/// The most members of a board kept in one item, and of each shard of a
/// larger one. 200 members of [`MAX_MEMBER_LEN`] bytes take 29 KiB, so an
/// increment of a sharded board moves at most 58 KiB.
pub const SHARD_MEMBERS: u32 = 200;

/// The largest capacity: 2^20 members, in 7 865 shards.
pub const MAX_CAPACITY: u32 = 1 << 20;

/// The marker's first bytes.
const MARKER_MAGIC: &[u8; 4] = b"MTKS";

/// The shards of a board of `capacity` members (see [`Leaderboard`]).
fn shard_count(capacity: u32) -> u32 {
    let shards = (u64::from(capacity) * 3).div_ceil(2 * u64::from(SHARD_MEMBERS));
    u32::try_from(shards).unwrap_or(u32::MAX)
}

/// The marker's value: the magic, the capacity, the life's nonce, the
/// TTL in seconds (0: none) and a checksum.
fn encode_marker(capacity: u32, nonce: u32, ttl_secs: u32) -> Vec<u8> {
    let mut out = MARKER_MAGIC.to_vec();
    out.extend_from_slice(&capacity.to_le_bytes());
    out.extend_from_slice(&nonce.to_le_bytes());
    out.extend_from_slice(&ttl_secs.to_le_bytes());
    out.extend_from_slice(&stable_hash(&out).to_le_bytes());
    out
}

/// The capacity, nonce and TTL (seconds, 0 for none) of a marker's value.
fn decode_marker(bytes: &[u8]) -> std::result::Result<(u32, u32, u32), String> {
    if bytes.len() != 24 || &bytes[..4] != MARKER_MAGIC {
        return Err("not a leaderboard's marker (no MTKS header, or not 24 bytes)".into());
    }
    if stable_hash(&bytes[..16]).to_le_bytes() != bytes[16..] {
        return Err("the marker's checksum does not match".into());
    }
    let mut r = Reader(&bytes[4..16]);
    Ok((r.u32()?, r.u32()?, r.u32()?))
}

/// A sharded board: its shard count, its marker's key, and the life this
/// handle (and its clones) last saw.
#[derive(Debug)]
struct Shards {
    count: u32,
    marker: Key,
    life: Mutex<Option<Life>>,
}

/// One life of a sharded board: the nonce its marker names and the keys
/// of its shards.
#[derive(Clone, Debug)]
struct Life {
    nonce: u32,
    keys: Arc<[Key]>,
    /// When this handle last touched every shard (boards with a TTL), by
    /// the scope's clock.
    touched_ms: Option<u64>,
    /// The board's TTL in seconds (0: none), as its marker says.
    ttl_secs: u32,
}

impl Shards {
    fn cached(&self) -> Option<Life> {
        self.life.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn remember(&self, life: Option<Life>) {
        *self.life.lock().unwrap_or_else(|e| e.into_inner()) = life;
    }

    /// Record a full touch of `nonce`'s shards at `now_ms`.
    fn touched(&self, nonce: u32, now_ms: u64) {
        let mut life = self.life.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(life) = life.as_mut().filter(|l| l.nonce == nonce) {
            life.touched_ms = Some(now_ms);
        }
    }
}

/// How a sharded write's batch of CAS writes went.
struct Written {
    /// Shards that took their write.
    stored: Vec<u32>,
    /// Shards whose CAS lost (or whose item went away): read and write again.
    again: Vec<u32>,
    /// Shards whose write's reply was lost: it may have landed.
    unknown: Vec<u32>,
    /// The first error.
    error: Option<Error>,
}

impl Leaderboard {
    /// The leaderboard `name` in `scope` (a store, or a [`Scope`] with a
    /// key prefix and clock), exact up to `capacity` members and a sketch
    /// beyond (see the type's docs). Every client must open it with the same
    /// capacity. [`Error::InvalidArgument`] for a capacity of 0 or above
    /// [`MAX_CAPACITY`], or above what one item holds on a store whose
    /// item limit is too small for a shard of [`SHARD_MEMBERS`] members
    /// (145 bytes each).
    pub fn new(scope: impl Into<Scope>, name: &str, capacity: u32) -> Result<Leaderboard> {
        let scope = scope.into();
        let key = scope.key("topk", name, "board")?;
        let store = Arc::clone(scope.store());
        let per_member = ENTRY_OVERHEAD + MAX_MEMBER_LEN;
        let room = store
            .item_size_limit()
            .saturating_sub(mcds_core::backend::item_size(
                key.len() + 16,
                HEADER_LEN + CHECKSUM_LEN,
            ));
        let in_one = (room / per_member).min(u32::MAX as usize) as u32;
        let most = if in_one >= SHARD_MEMBERS {
            MAX_CAPACITY
        } else {
            in_one
        };
        if capacity == 0 || capacity > most {
            return Err(Error::InvalidArgument(format!(
                "a leaderboard's capacity is 1 to {most} members on this store (a board of more than {SHARD_MEMBERS} is kept in shards of {SHARD_MEMBERS}, each member taking up to {per_member} bytes of one); got {capacity}"
            )));
        }
        let shards = if capacity > SHARD_MEMBERS {
            let count = shard_count(capacity);
            // The longest shard key must fit.
            key.with_suffix(format!(".{:08x}.{:x}", u32::MAX, count - 1))?;
            Some(Arc::new(Shards {
                count,
                marker: key.with_suffix(".m")?,
                life: Mutex::new(None),
            }))
        } else {
            None
        };
        Ok(Leaderboard {
            store,
            marker: key.with_suffix(".m").ok(),
            key,
            capacity,
            ttl: Ttl::Never,
            clock: Arc::clone(scope.clock()),
            shards,
        })
    }

    /// Expire the board `ttl` after its last increment.
    pub fn with_ttl(mut self, ttl: Ttl) -> Leaderboard {
        self.ttl = ttl;
        self
    }

    /// The key the board lives under: its one item, or the prefix of its
    /// marker (`<key>.m`) and shards (`<key>.<nonce>.<s>`).
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
    /// (exact in exact mode, an upper bound once sketched). 2 round trips
    /// (3 on a handle's first write to a sharded board; more when it
    /// creates one).
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

    /// Apply many increments, in order: one CAS update of the board (or of
    /// each shard it touches, in one batch), 2 round trips. For a local
    /// buffer of a hot path's increments.
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
        if let Some(shards) = &self.shards {
            return self
                .update_shards(access, shards, increments, counted)
                .await;
        }
        self.update_one(access, &self.key, increments, counted, true)
            .await
            .map(drop)
    }

    /// `increments` on the one-item board under `key` by CAS (2 round
    /// trips), reading the marker of a sharded board in the same batch: a
    /// board of more than 200 members under this name (opened with another
    /// capacity) is [`Error::Corrupt`], not a second board. `create`: add
    /// the item if it is missing (a board of up to 200 members); else
    /// `Ok(false)` when it is missing (an older mcds's board of more than
    /// 200, gone: the caller makes shards instead).
    async fn update_one(
        &self,
        access: Access<'_>,
        key: &Key,
        increments: &[(&[u8], u64)],
        counted: &mut (dyn FnMut(u64) + Send),
        create: bool,
    ) -> Result<bool> {
        if !access.supports_cas(key).await? {
            return Err(no_cas(access.store()));
        }
        let marker = self.marker_key();
        let mut backoff = Backoff::default();
        for _ in 0..MAX_ATTEMPTS {
            let mut ops = Vec::with_capacity(2);
            if self.shards.is_none() {
                ops.extend(marker.map(Op::Get));
            }
            ops.push(Op::Get(key));
            let mut replies = access.pipeline(&ops).await.into_iter();
            if self.shards.is_none() && marker.is_some() {
                self.no_marker(next_reply(&mut replies).and_then(Reply::item)?)?;
            }
            let item = next_reply(&mut replies).and_then(Reply::item)?;
            if item.is_none() && !create {
                return Ok(false);
            }
            let mut board = match &item {
                None => SpaceSaving::new(self.capacity),
                Some(item) => self
                    .decode(&item.value)
                    .map_err(|reason| corrupt(key, reason))?,
            };
            let mut counts = Vec::with_capacity(increments.len());
            for (member, by) in increments {
                counts.push(board.insert(member, *by).map_err(Error::InvalidArgument)?);
            }
            let value = board.encode();
            let op = crate::cas_or_add(key, &value, self.ttl, item.as_ref().map(|i| i.cas));
            let stored = match (item.is_some(), access.execute(&op).await?) {
                (true, reply) => matches!(reply.cas_outcome()?, CasOutcome::Stored(_)),
                (false, reply) => match reply.stored()? {
                    Stored::Stored(cas) => {
                        // Made the board: a handle of capacity over 200 may
                        // have made shards under a marker at the same
                        // moment. Then neither board stands.
                        if let (None, Some(marker)) = (&self.shards, marker) {
                            let found = access.get(marker).await?;
                            if found.is_some() {
                                let _ = access.delete_cas(key, cas).await;
                                self.no_marker(found)?;
                            }
                        }
                        true
                    }
                    Stored::NotStored => false,
                },
            };
            if stored {
                for c in counts {
                    counted(c);
                }
                return Ok(true);
            }
            access.sleep(backoff.next_delay()).await;
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// The key of the marker a sharded board of this name has: `None` when
    /// the name leaves no room for it (no sharded board can have it then).
    fn marker_key(&self) -> Option<&Key> {
        self.marker.as_ref()
    }

    /// [`Error::Corrupt`] when a one-item board's handle finds a sharded
    /// board's marker under its name.
    fn no_marker(&self, marker: Option<Item>) -> Result<()> {
        let Some(marker) = marker else {
            return Ok(());
        };
        let key = self.marker_key().unwrap_or(&self.key);
        let (capacity, ..) = decode_marker(&marker.value).map_err(|r| corrupt(key, r))?;
        Err(corrupt(
            key,
            format!(
                "created with capacity {capacity}; this leaderboard wants {} — open it with the capacity it was created with, or clear it",
                self.capacity
            ),
        ))
    }

    /// The shard `member` lives in.
    fn shard_of(shards: &Shards, member: &[u8]) -> u32 {
        (stable_hash(member) % u64::from(shards.count)) as u32
    }

    /// The TTL of a sharded board's shards: they outlive the marker (see
    /// the type's docs).
    fn shard_ttl(&self) -> Ttl {
        match self.ttl {
            Ttl::Never => Ttl::Never,
            Ttl::Secs(n) => Ttl::secs(n.get().saturating_mul(2).saturating_add(60)),
        }
    }

    /// The life a marker's value names (the cached one when it is the same).
    fn life_of(&self, shards: &Shards, item: &Item, cached: Option<&Life>) -> Result<Life> {
        let (capacity, nonce, ttl) =
            decode_marker(&item.value).map_err(|reason| corrupt(&shards.marker, reason))?;

        if capacity != self.capacity {
            return Err(corrupt(
                &shards.marker,
                format!(
                    "created with capacity {capacity}; this leaderboard wants {} — open it with the capacity it was created with, or clear it",
                    self.capacity
                ),
            ));
        }
        if let Some(life) = cached.filter(|l| l.nonce == nonce) {
            return Ok(life.clone());
        }
        Ok(Life {
            nonce,
            keys: self.shard_keys(shards, nonce)?,
            touched_ms: None,
            ttl_secs: ttl,
        })
    }

    fn shard_keys(&self, shards: &Shards, nonce: u32) -> Result<Arc<[Key]>> {
        (0..shards.count)
            .map(|s| self.key.with_suffix(format!(".{nonce:08x}.{s:x}")))
            .collect()
    }

    /// A shard's board from its item; [`Error::Lost`] when it is missing
    /// (its marker exists: see the type's docs).
    fn shard_board(&self, life: &Life, s: u32, item: Option<Item>) -> Result<(SpaceSaving, u64)> {
        let Some(item) = item else {
            return Err(self.lost(life, s));
        };
        let board = Self::shard_of_bytes(&life.keys[s as usize], &item.value)?;
        Ok((board, item.cas))
    }

    /// A shard's board from its bytes.
    fn shard_of_bytes(key: &Key, value: &[u8]) -> Result<SpaceSaving> {
        let board = SpaceSaving::decode(value).map_err(|reason| corrupt(key, reason))?;
        if board.capacity > SHARD_MEMBERS {
            return Err(corrupt(
                key,
                format!(
                    "a shard of {} members (at most {SHARD_MEMBERS})",
                    board.capacity
                ),
            ));
        }
        Ok(board)
    }

    /// The error of shard `s` found missing while its marker exists.
    fn lost(&self, life: &Life, s: u32) -> Error {
        Error::Lost {
            key: life.keys[s as usize].display(),
            reason: format!(
                "shard {s} of the leaderboard {} is missing while its marker exists: it was evicted, or its server restarted, and the counts of its members are gone; clear() the board to start again",
                self.key.display()
            ),
        }
    }

    /// `increments` on a sharded board: read the marker (touching it first
    /// when the board has a TTL) and the shards touched (1 round trip),
    /// then CAS each shard (1 round trip). With no marker, an older mcds's
    /// one-item board under the key is written as it is (it stays one item
    /// until cleared); with neither, the board is made (see
    /// [`create`](Self::create)).
    async fn update_shards(
        &self,
        access: Access<'_>,
        shards: &Shards,
        increments: &[(&[u8], u64)],
        counted: &mut (dyn FnMut(u64) + Send),
    ) -> Result<()> {
        if !access.supports_cas(&shards.marker).await? {
            return Err(no_cas(access.store()));
        }
        let mut groups: BTreeMap<u32, Vec<(&[u8], u64)>> = BTreeMap::new();
        for &(member, by) in increments {
            groups
                .entry(Self::shard_of(shards, member))
                .or_default()
                .push((member, by));
        }
        let mut pending: Vec<u32> = groups.keys().copied().collect();
        // Increments whose shard took them, and those whose reply was lost.
        let (mut applied, mut unknown) = (0usize, 0usize);
        let mut backoff = Backoff::default();
        let partial = |applied: usize, unknown: usize, e: Error| -> Error {
            if applied + unknown == 0 || matches!(e, Error::Ambiguous { .. }) && applied == 0 {
                return e;
            }
            Error::Ambiguous {
                key: self.key.display(),
                server: String::new(),
                reason: format!(
                    "{applied} of the {} increments were applied (their shards took them) and {unknown} may have been (their replies were lost); the rest were not: {e}",
                    increments.len()
                ),
            }
        };
        for _ in 0..MAX_ATTEMPTS {
            let cached = shards.cached();
            let started = self.clock.now_ms();
            let mut ops = Vec::with_capacity(pending.len() + 2);
            // The touch only once this handle knows the board's life and
            // that it has this TTL: a handle opened with another must not
            // change when the board expires.
            let ttl = self.ttl.as_secs().unwrap_or(0);
            let touches = ttl > 0 && cached.as_ref().is_some_and(|l| l.ttl_secs == ttl);
            if touches {
                ops.push(Op::Touch {
                    key: &shards.marker,
                    ttl: self.ttl,
                });
            }
            ops.push(Op::Get(&shards.marker));
            match &cached {
                Some(life) => ops.extend(pending.iter().map(|&s| Op::Get(&life.keys[s as usize]))),
                None => ops.push(Op::Get(&self.key)),
            }
            let mut replies = access.pipeline(&ops).await.into_iter();
            if touches {
                // Whether there was a marker to touch: the get says.
                next_reply(&mut replies)
                    .and_then(Reply::applied)
                    .map_err(|e| partial(applied, unknown, e))?;
            }
            let marker = next_reply(&mut replies)
                .and_then(Reply::item)
                .map_err(|e| partial(applied, unknown, e))?;
            let Some(marker) = marker else {
                if cached.is_some() {
                    shards.remember(None);
                    continue;
                }
                let old = next_reply(&mut replies)
                    .and_then(Reply::item)
                    .map_err(|e| partial(applied, unknown, e))?;
                if old.is_some() {
                    let rest: Vec<(&[u8], u64)> = pending
                        .iter()
                        .flat_map(|s| groups[s].iter().copied())
                        .collect();
                    let written = self
                        .update_one(access, &self.key, &rest, counted, false)
                        .await
                        .map_err(|e| partial(applied, unknown, e))?;
                    if written {
                        return Ok(());
                    }
                    continue; // cleared meanwhile: make shards
                }
                self.create(access, shards)
                    .await
                    .map_err(|e| partial(applied, unknown, e))?;
                continue;
            };
            let life = self
                .life_of(shards, &marker, cached.as_ref())
                .map_err(|e| partial(applied, unknown, e))?;
            if cached.as_ref().is_none_or(|c| c.nonce != life.nonce) {
                shards.remember(Some(life));
                continue;
            }
            // Writers must agree on the TTL: one without it would let the
            // board expire under the others (it never touches the marker),
            // one with another would end it early or late for them.
            if life.ttl_secs != ttl {
                return Err(partial(
                    applied,
                    unknown,
                    corrupt(
                        &shards.marker,
                        format!(
                            "created with a TTL of {} s (0: none); this leaderboard has {ttl} s — write it with the TTL it was created with, or clear it",
                            life.ttl_secs
                        ),
                    ),
                ));
            }
            // The new value of each pending shard, its CAS id, and the
            // counts of its members.
            let mut writes: Vec<(u32, Vec<u8>, u64, Vec<u64>)> = Vec::new();
            for &s in &pending {
                let item = next_reply(&mut replies)
                    .and_then(Reply::item)
                    .map_err(|e| partial(applied, unknown, e))?;
                let (mut board, cas) = self
                    .shard_board(&life, s, item)
                    .map_err(|e| partial(applied, unknown, e))?;
                let mut counts = Vec::new();
                for (member, by) in &groups[&s] {
                    let count = board.insert(member, *by).map_err(|overflow| {
                        partial(applied, unknown, Error::InvalidArgument(overflow))
                    })?;
                    counts.push(count);
                }
                writes.push((s, board.encode(), cas, counts));
            }
            let touch_all = self.ttl.as_secs().is_some_and(|secs| {
                life.touched_ms
                    .is_none_or(|t| started.saturating_sub(t) >= u64::from(secs) * 250)
            });
            let written = self.write_shards(access, &life, &writes, touch_all).await;
            // With a TTL, the touch before the read kept this life's marker
            // for `ttl` from then: writes that landed within that time (less
            // memcached's one-second clock) landed in a live board. Past it,
            // the marker is read again: gone or replaced, the life ended
            // while the writes were on their way, and they go again, into
            // the next life (the old one is never read again).
            if let Some(secs) = self.ttl.as_secs() {
                let elapsed = self.clock.now_ms().saturating_sub(started);
                if elapsed + 2_000 >= u64::from(secs) * 1_000 && !written.stored.is_empty() {
                    let now = access
                        .get(&shards.marker)
                        .await
                        .map_err(|e| partial(applied, unknown + written.stored.len(), e))?;
                    let same = match now {
                        Some(item) => {
                            decode_marker(&item.value).is_ok_and(|(_, n, _)| n == life.nonce)
                        }
                        None => false,
                    };
                    if !same {
                        // The writes landed before the life ended (and are
                        // gone with it, perhaps after a reader saw them) or
                        // after (in a life no one reads): which, no one can
                        // tell, so they are not written again.
                        shards.remember(None);
                        let stored = written.stored.len();
                        return Err(partial(
                            applied,
                            unknown + stored,
                            Error::Ambiguous {
                                key: self.key.display(),
                                server: String::new(),
                                reason: format!(
                                    "the write took longer than the board's TTL ({secs} s), and the board expired meanwhile: the increment may have been counted in it before it expired, or not at all"
                                ),
                            },
                        ));
                    }
                }
            }
            for (s, _, _, counts) in &writes {
                if written.stored.contains(s) {
                    applied += counts.len();
                    counts.iter().for_each(|&c| counted(c));
                } else if written.unknown.contains(s) {
                    unknown += counts.len();
                }
            }
            if let Some(e) = written.error {
                return Err(partial(applied, unknown, e));
            }
            if touch_all {
                shards.touched(life.nonce, started);
            }
            if written.again.is_empty() {
                return Ok(());
            }
            pending = written.again;
            access.sleep(backoff.next_delay()).await;
        }
        Err(partial(
            applied,
            unknown,
            Error::Conflict {
                key: self.key.display(),
                attempts: MAX_ATTEMPTS,
            },
        ))
    }

    /// One batch: the CAS writes of `writes`, then, when `touch_all`,
    /// touches of every shard (the board has a TTL; see the type's docs).
    async fn write_shards(
        &self,
        access: Access<'_>,
        life: &Life,
        writes: &[(u32, Vec<u8>, u64, Vec<u64>)],
        touch_all: bool,
    ) -> Written {
        let shard_ttl = self.shard_ttl();
        let mut ops: Vec<Op<'_>> = writes
            .iter()
            .map(|(s, value, cas, _)| Op::Cas {
                key: &life.keys[*s as usize],
                value,
                ttl: shard_ttl,
                cas: *cas,
            })
            .collect();
        if touch_all {
            ops.extend(life.keys.iter().map(|key| Op::Touch {
                key,
                ttl: shard_ttl,
            }));
        }
        let mut replies = access.pipeline(&ops).await.into_iter();
        let mut written = Written {
            stored: Vec::new(),
            again: Vec::new(),
            unknown: Vec::new(),
            error: None,
        };
        for (s, ..) in writes {
            match next_reply(&mut replies).and_then(Reply::cas_outcome) {
                Ok(CasOutcome::Stored(_)) => written.stored.push(*s),
                Ok(CasOutcome::Exists | CasOutcome::NotFound) => written.again.push(*s),
                // The reply was lost: the write may have landed.
                Err(e @ Error::Ambiguous { .. }) => {
                    written.unknown.push(*s);
                    written.error.get_or_insert(e);
                }
                // Refused (out of memory, too large, a server down before
                // it was sent): not written.
                Err(e) => {
                    written.error.get_or_insert(e);
                }
            }
        }
        if touch_all {
            for s in 0..life.keys.len() {
                match next_reply(&mut replies).and_then(Reply::applied) {
                    Ok(true) => {}
                    Ok(false) => {
                        written
                            .error
                            .get_or_insert_with(|| self.lost(life, s as u32));
                    }
                    Err(e) => {
                        written.error.get_or_insert(e);
                    }
                }
            }
        }
        written
    }

    /// Make a sharded board whose marker is missing (and under whose key
    /// no older one-item board is): every shard, empty, then the marker,
    /// with `add`. See the type's docs.
    async fn create(&self, access: Access<'_>, shards: &Shards) -> Result<()> {
        let nonce = random_u64() as u32;
        let keys = self.shard_keys(shards, nonce)?;
        let empty = SpaceSaving::new(SHARD_MEMBERS).encode();
        let shard_ttl = self.shard_ttl();
        let ops: Vec<Op<'_>> = keys
            .iter()
            .map(|key| Op::Add {
                key,
                value: &empty,
                ttl: shard_ttl,
            })
            .collect();
        let mut first_error = None;
        let mut collided = false;
        for reply in access.pipeline(&ops).await {
            match reply.and_then(Reply::stored) {
                Ok(Stored::Stored(_)) => {}
                Ok(Stored::NotStored) => collided = true,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if first_error.is_some() || collided {
            self.discard(access, &keys).await;
            return first_error.map_or(Ok(()), Err);
        }
        let marker = encode_marker(self.capacity, nonce, self.ttl.as_secs().unwrap_or(0));
        match access.add(&shards.marker, &marker, self.ttl).await? {
            Stored::Stored(cas) => {
                let ttl_secs = self.ttl.as_secs().unwrap_or(0);
                // A handle of capacity at most 200 may have made a one-item
                // board under the key at the same moment: then neither
                // board stands (each creator checks for the other's).
                if let Some(old) = access.get(&self.key).await? {
                    if let Err(reason) = self.decode(&old.value) {
                        let _ = access.delete_cas(&shards.marker, cas).await;
                        self.discard(access, &keys).await;
                        return Err(corrupt(&self.key, reason));
                    }
                }
                shards.remember(Some(Life {
                    nonce,
                    keys,
                    touched_ms: Some(self.clock.now_ms()),
                    ttl_secs,
                }))
            }
            // Another first increment made the board first.
            Stored::NotStored => self.discard(access, &keys).await,
        }
        Ok(())
    }

    /// Delete shards no marker names (best effort: they are garbage).
    async fn discard(&self, access: Access<'_>, keys: &[Key]) {
        let ops: Vec<Op<'_>> = keys.iter().map(Op::Delete).collect();
        let _ = access.pipeline(&ops).await;
    }

    /// A sharded board's shards (`which`: all, or one), each checked and
    /// handed to `each`; or, with no marker, the board an older mcds left
    /// in one item (`None` when there is none either).
    async fn read_shards(
        &self,
        access: Access<'_>,
        shards: &Shards,
        which: Option<u32>,
        each: &mut (dyn FnMut(&Key, Vec<u8>) -> Result<()> + Send),
    ) -> Result<Option<SpaceSaving>> {
        for _ in 0..MAX_ATTEMPTS {
            let cached = shards.cached();
            let mut ops = vec![Op::Get(&shards.marker)];
            match (&cached, which) {
                (Some(life), None) => ops.extend(life.keys.iter().map(Op::Get)),
                (Some(life), Some(s)) => ops.push(Op::Get(&life.keys[s as usize])),
                // An older mcds's one-item board, not moved yet.
                (None, _) => ops.push(Op::Get(&self.key)),
            }
            let mut replies = access.pipeline(&ops).await.into_iter();
            let marker = next_reply(&mut replies).and_then(Reply::item)?;
            let Some(marker) = marker else {
                if cached.is_some() {
                    shards.remember(None);
                    continue;
                }
                return match next_reply(&mut replies).and_then(Reply::item)? {
                    None => Ok(None),
                    Some(item) => self
                        .decode(&item.value)
                        .map(Some)
                        .map_err(|reason| corrupt(&self.key, reason)),
                };
            };
            let life = self.life_of(shards, &marker, cached.as_ref())?;
            if cached.as_ref().is_none_or(|c| c.nonce != life.nonce) {
                shards.remember(Some(life));
                continue;
            }
            let read: Vec<u32> = match which {
                None => (0..shards.count).collect(),
                Some(s) => vec![s],
            };
            for s in read {
                let item = next_reply(&mut replies).and_then(Reply::item)?;
                let key = &life.keys[s as usize];
                let Some(item) = item else {
                    return Err(self.lost(&life, s));
                };
                each(key, item.value)?;
            }
            return Ok(None);
        }
        Err(Error::Conflict {
            key: self.key.display(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// A sharded board's shards (`which`: all, or one) as one summary.
    async fn shards_summary(
        &self,
        access: Access<'_>,
        shards: &Shards,
        which: Option<u32>,
    ) -> Result<SpaceSaving> {
        let mut parts = Vec::new();
        let old = self
            .read_shards(access, shards, which, &mut |key, value| {
                parts.push(Self::shard_of_bytes(key, &value)?);
                Ok(())
            })
            .await?;
        match old {
            Some(board) => Ok(board),
            None if parts.is_empty() => Ok(SpaceSaving::new(self.capacity)),
            None => SpaceSaving::union(parts).map_err(Error::InvalidArgument),
        }
    }

    /// The whole stored board (empty if missing). 1 round trip. For a
    /// sharded board, the [union](SpaceSaving) of its shards: its capacity is
    /// their counters together, and its `max_error` the largest of theirs.
    #[blocking_and_async(pub)]
    async fn summary_io(&self, io: Io) -> Result<SpaceSaving> {
        if let Some(shards) = &self.shards {
            return self.shards_summary(self.access(io), shards, None).await;
        }
        // The marker of a sharded board under this name, in the same batch.
        let marker = self.marker_key();
        let mut ops: Vec<Op<'_>> = marker.into_iter().map(Op::Get).collect();
        ops.push(Op::Get(&self.key));
        let mut replies = self.access(io).pipeline(&ops).await.into_iter();
        if marker.is_some() {
            self.no_marker(next_reply(&mut replies).and_then(Reply::item)?)?;
        }
        match next_reply(&mut replies).and_then(Reply::item)? {
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
        let Some(shards) = &self.shards else {
            return Ok(self.summary_io(io).await?.top(k));
        };
        // Each shard checked, its members left in the bytes it came in,
        // and the k largest selected from all of them.
        let mut values: Vec<(Key, Vec<u8>)> = Vec::new();
        let old = self
            .read_shards(self.access(io), shards, None, &mut |key, value| {
                values.push((key.clone(), value));
                Ok(())
            })
            .await?;
        if let Some(board) = old {
            return Ok(board.top(k));
        }
        let mut all = Vec::new();
        for (key, value) in &values {
            let parsed = Parsed::of(value).map_err(|reason| corrupt(key, reason))?;
            if parsed.capacity > SHARD_MEMBERS {
                return Err(corrupt(
                    key,
                    format!(
                        "a shard of {} members (at most {SHARD_MEMBERS})",
                        parsed.capacity
                    ),
                ));
            }
            all.extend(parsed.entries);
        }
        Ok(top_of(all, k))
    }

    /// ZSCORE: the member's entry, `None` if it is not on the board (then
    /// its true count is at most the `max_error` of its board or shard).
    /// 1 round trip, reading the member's shard alone on a sharded board.
    #[blocking_and_async(pub)]
    async fn score_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<Option<Entry>> {
        let member = member.as_ref();
        if let Some(shards) = &self.shards {
            let s = Self::shard_of(shards, member);
            let board = self
                .shards_summary(self.access(io), shards, Some(s))
                .await?;
            return Ok(board.get(member));
        }
        Ok(self.summary_io(io).await?.get(member))
    }

    /// Delete the board: its item, or its marker first (the board is empty
    /// from then on) and then its shards.
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        let access = self.access(io);
        let Some(shards) = &self.shards else {
            return access.delete(&self.key).await.map(drop);
        };
        let cached = shards.cached();
        let marker = access.get(&shards.marker).await?;
        let life = match &marker {
            Some(item) => Some(self.life_of(shards, item, cached.as_ref())?),
            None => None,
        };
        access.delete(&shards.marker).await?;
        shards.remember(None);
        let mut keys: Vec<&Key> = vec![&self.key];
        for life in [&life, &cached].into_iter().flatten() {
            keys.extend(life.keys.iter());
        }
        let ops: Vec<Op<'_>> = keys.into_iter().map(Op::Delete).collect();
        for reply in access.pipeline(&ops).await {
            reply.and_then(Reply::applied)?;
        }
        Ok(())
    }
}

/// The next reply of a pipeline (an internal error if it ran short).
fn next_reply(replies: &mut impl Iterator<Item = Result<Reply>>) -> Result<Reply> {
    replies
        .next()
        .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())))
}

/// The error of a write to a server without CAS.
fn no_cas(store: &dyn Store) -> Error {
    Error::Unsupported {
        op: "Leaderboard::incr",
        backend: store.backend_name(),
        hint: "a leaderboard is written by CAS: use a memcached started without -C, connected directly (not through a proxy)",
    }
}
