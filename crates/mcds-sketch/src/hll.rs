//! [`HyperLogLog`]: distinct counting in 12 KiB (Redis's PFADD, PFCOUNT,
//! PFMERGE), and [`HllBuffer`] for hot paths.
//!
//! **Algorithm.** An element is hashed with XXH3-64. The low 14 bits pick one
//! of 16 384 registers; the register keeps the largest *rank* seen, the
//! position of the lowest set bit of the remaining 50 bits (1 to 51). The
//! estimate is Ertl's improved estimator over the register histogram (the
//! one Redis uses), which needs no bias tables and is accurate from 0 to
//! billions: standard error 1.04/√16384 ≈ 0.81 %.
//!
//! **Storage: 16 segments, each sparse or dense, each with an append log.**
//! The registers are split into [`SEGMENTS`] items of [`SEGMENT_REGISTERS`]
//! (register `i` lives in segment `i / 1024`), under
//! `<prefix>hll:<name>:s0` … `:sf`. A segment item is the magic `MHS1`, a
//! base, then a log:
//!
//! * the base is *sparse* (`S`, a `u16` count, then one 2-byte record per
//!   non-zero register) while that is smaller than the *dense* form (`D`,
//!   the 1 024 registers packed 6 bits each: 768 bytes). Like Redis's sparse
//!   encoding, a small sketch is small: 3 elements take 3 items of 9 bytes;
//! * the log is 2-byte records appended by [`HyperLogLog::add`]. A record is
//!   a little-endian `u16`: the register's index in its segment (10 bits)
//!   above its rank (6 bits).
//!
//! A missing segment is all zero registers. A segment's registers are the
//! maximum over its base and its log. On a pool, the 16 segments live on
//! one server, like a Redis key on one node: segment `s`'s key is `:s<s>`,
//! or `:s<s>.<salt>` with the first salt (of 64) that ketama places on
//! segment 0's server. Clients must agree on the pool (as for any key), or
//! they name different items.
//!
//! **Why this layout (segments, and an append log).** An add must not move
//! 12 KiB twice, and should cost one round trip, like `PFADD`. memcached
//! has no "maximum" command, but `append` commutes just as the maximum does,
//! and needs no CAS: [`add`](HyperLogLog::add) sends, in one batch, a `get`
//! of its segment and an `append` of its record. The `get` runs first on
//! the same connection, so it shows the registers *before* this add, which
//! answers `PFADD`'s question (did a register change?). One round trip, a
//! few hundred bytes read, 2 bytes written. A retried or duplicated append
//! is harmless (the maximum is idempotent), so a lost reply loses nothing.
//! The log is folded into the base ("compacted") by a CAS write once it
//! holds [`COMPACT_AT`] records: an append between that read and that write
//! changes the CAS id, so a compaction never drops a record; it is tried
//! by one adder in [`COMPACT_EVERY`] and, past [`LOG_LIMIT`] records, by
//! every adder (with backoff, which slows a hot segment's adders down until
//! one compaction wins). Segments keep both the compaction and every read
//! small (a segment is at most 773 bytes plus its log: about 1.3 KiB at
//! most while writers do not contend; a segment written by 16 threads at
//! once was seen at 9 KiB), and let writers to different segments never
//! conflict.
//! [`HllBuffer::flush`], [`merge`](HyperLogLog::merge) and
//! [`merge_registers`](HyperLogLog::merge_registers) write whole segments:
//! one `get_multi` of the segments they raise, then one batch of CAS writes
//! (2 round trips), retrying the segments whose CAS lost.
//!
//! A server started with `-C` (no CAS) cannot compact: the first add of a
//! segment, and every merge, is refused with
//! [`Error::Unsupported`], as every CAS
//! update is.
//!
//! **Item size and memory.** A log must not reach the item size limit,
//! where memcached refuses the append: besides [`COMPACT_AT`], an add
//! compacts when the log has used half of the room the store's
//! [`item_size_limit`](mcds_core::Store::item_size_limit) leaves above the
//! compacted segment, and must compact at three quarters; an add whose
//! append is refused as too large (a server `-I` smaller than the store
//! was told) compacts and appends again. On a server out of memory with
//! `-M`, an add or flush fails with [`Error::OutOfMemory`] and the segment
//! keeps what it had: mcds-memcached sends appends and CAS writes as text
//! commands, because memcached's meta `ms` deletes the item it cannot
//! replace (see `mcds_memcached`'s codec).
//!
//! [`Registers::encode`] is the whole sketch in one blob (`MHL1`, the 16 384
//! registers packed 6 bits each), for moving registers around; it is not
//! what the store holds.

use std::sync::Arc;

use mcds_core::backend::item_size;
use mcds_core::{
    Access, Backoff, CasOutcome, Error, Io, Key, Op, Reply, Result, Scope, Store, Stored, Ttl,
    blocking_and_async, stable_hash,
};

use crate::{MAX_ATTEMPTS, cas_or_add, corrupt, update_checked_with};

/// log2 of the number of registers.
pub const P: u32 = 14;
/// Registers per sketch.
pub const REGISTERS: usize = 1 << P;
/// Bytes of packed 6-bit registers.
pub const REGISTER_BYTES: usize = REGISTERS * 6 / 8;
/// The first bytes of [`Registers::encode`]'s blob.
pub const MAGIC: &[u8; 4] = b"MHL1";
/// Bytes of [`Registers::encode`]'s blob: magic plus packed registers.
pub(crate) const ENCODED_LEN: usize = MAGIC.len() + REGISTER_BYTES;
/// The largest rank a register can hold (50 hash bits plus the sentinel).
pub(crate) const MAX_RANK: u8 = (64 - P + 1) as u8;
/// The items a sketch is stored in.
pub const SEGMENTS: usize = 16;
/// Registers per segment item.
pub const SEGMENT_REGISTERS: usize = REGISTERS / SEGMENTS;
/// A segment item's first bytes.
pub const SEGMENT_MAGIC: &[u8; 4] = b"MHS1";
/// Bytes of a dense segment's packed registers.
const DENSE_BYTES: usize = SEGMENT_REGISTERS * 6 / 8;
/// The form byte of a sparse base (a count, then records).
const SPARSE: u8 = b'S';
/// The form byte of a dense base (packed registers).
const DENSE: u8 = b'D';
/// Log records after which an add tries to compact its segment (256
/// records: 512 bytes, so a segment read stays under about 1.3 KiB while
/// writers do not contend).
pub const COMPACT_AT: usize = 256;
/// Between [`COMPACT_AT`] and [`LOG_LIMIT`], an add compacts (one CAS
/// attempt) only when the log it read holds a multiple of this many
/// records: concurrent adders do not all try at once.
pub const COMPACT_EVERY: usize = 64;
/// Log records past which every add tries to compact its segment before
/// it returns (up to 8 CAS attempts with backoff), which keeps a hot
/// segment's log near this size.
pub const LOG_LIMIT: usize = 4096;
/// CAS attempts (with backoff: at most about 0.2 s) of an add that must
/// compact. They also slow the adders of a hot segment down, so that one
/// compaction wins; if none does, the add still succeeds (its record is in
/// the log) and the next one tries.
const MUST_ATTEMPTS: u32 = 8;
/// Salts tried to place a segment on segment 0's server of a pool.
const PLACEMENT_TRIES: u32 = 64;

/// Why stored bytes are not a sketch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

/// The 16 384 registers of a HyperLogLog, one byte each in memory.
///
/// ```
/// use mcds_sketch::hll::Registers;
///
/// let mut r = Registers::new();
/// for i in 0..1000u32 {
///     r.insert(&i.to_le_bytes());
/// }
/// let n = r.count();
/// assert!((980..=1020).contains(&n), "{n}");
/// assert_eq!(Registers::decode(&r.encode()).unwrap(), r);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Registers(Box<[u8]>);

impl std::fmt::Debug for Registers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used = self.0.iter().filter(|&&r| r != 0).count();
        write!(f, "Registers({used} of {REGISTERS} set)")
    }
}

impl Default for Registers {
    fn default() -> Self {
        Registers::new()
    }
}

/// Register index and rank of a 64-bit hash.
fn index_and_rank(hash: u64) -> (usize, u8) {
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << (64 - P));
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Pack `registers` 6 bits each, little-endian, into `out` (zeroed, 3/4 of
/// their count long).
fn pack(registers: &[u8], out: &mut [u8]) {
    for (i, &r) in registers.iter().enumerate() {
        let bit = i * 6;
        let (byte, shift) = (bit / 8, bit % 8);
        let v = u16::from(r & 63) << shift;
        out[byte] |= v as u8;
        if let Some(next) = out.get_mut(byte + 1) {
            *next |= (v >> 8) as u8;
        }
    }
}

/// Unpack [`pack`]'s bytes into `registers` (4/3 of their length); the index
/// of a register above the largest rank is an error.
///
/// Three packed bytes hold four registers (register `i` at bit `6i`, least
/// significant bit first), unpacked together: a `count` unpacks 16,384
/// registers, and one at a time with a check each was its largest cost.
/// The ranks are checked once, at the end. [`unpack_one_by_one`] is the
/// naive model a test holds this to.
fn unpack(packed: &[u8], registers: &mut [u8]) -> std::result::Result<(), DecodeError> {
    let whole = (registers.len() / 4).min(packed.len() / 3);
    for (b, r) in packed
        .chunks_exact(3)
        .zip(registers.chunks_exact_mut(4))
        .take(whole)
    {
        r[0] = b[0] & 63;
        r[1] = (b[0] >> 6) | ((b[1] & 15) << 2);
        r[2] = (b[1] >> 4) | ((b[2] & 3) << 4);
        r[3] = b[2] >> 2;
    }
    let unpacked = &registers[..whole * 4];
    if unpacked.iter().copied().max().unwrap_or(0) > MAX_RANK {
        let (i, v) = unpacked
            .iter()
            .copied()
            .enumerate()
            .find(|&(_, v)| v > MAX_RANK)
            .unwrap_or((0, 0));
        return Err(DecodeError(format!(
            "register {i} holds {v}, above the largest rank {MAX_RANK}"
        )));
    }
    // (Any registers past the last whole 3 bytes.)
    unpack_one_by_one(packed, registers, whole * 4)
}

/// [`unpack`] one register at a time, from register `from` on.
fn unpack_one_by_one(
    packed: &[u8],
    registers: &mut [u8],
    from: usize,
) -> std::result::Result<(), DecodeError> {
    for (i, r) in registers.iter_mut().enumerate().skip(from) {
        let bit = i * 6;
        let (byte, shift) = (bit / 8, bit % 8);
        let lo = u16::from(packed[byte]);
        let hi = u16::from(packed.get(byte + 1).copied().unwrap_or(0));
        let v = (((hi << 8) | lo) >> shift) as u8 & 63;
        if v > MAX_RANK {
            return Err(DecodeError(format!(
                "register {i} holds {v}, above the largest rank {MAX_RANK}"
            )));
        }
        *r = v;
    }
    Ok(())
}

impl Registers {
    /// All zero: the empty set.
    pub fn new() -> Registers {
        Registers(vec![0; REGISTERS].into_boxed_slice())
    }

    /// Register `i`.
    pub fn get(&self, i: usize) -> u8 {
        self.0[i]
    }

    /// Whether no element was ever added.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&r| r == 0)
    }

    /// Add an element; whether a register changed (PFADD's 1).
    pub fn insert(&mut self, element: &[u8]) -> bool {
        self.insert_hash(stable_hash(element))
    }

    /// Add an element by its XXH3-64 hash.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let (i, rank) = index_and_rank(hash);
        if self.0[i] < rank {
            self.0[i] = rank;
            true
        } else {
            false
        }
    }

    /// Take the register-wise maximum with `other` (PFMERGE); whether a
    /// register changed.
    pub fn merge(&mut self, other: &Registers) -> bool {
        max_into(&mut self.0, &other.0)
    }

    /// Segment `s`'s registers.
    fn segment(&self, s: usize) -> &[u8] {
        &self.0[s * SEGMENT_REGISTERS..(s + 1) * SEGMENT_REGISTERS]
    }

    /// Segment `s`'s registers, to change.
    fn segment_mut(&mut self, s: usize) -> &mut [u8] {
        &mut self.0[s * SEGMENT_REGISTERS..(s + 1) * SEGMENT_REGISTERS]
    }

    /// The estimated number of distinct elements (PFCOUNT): Ertl's improved
    /// estimator.
    pub fn count(&self) -> u64 {
        let q = (64 - P) as usize;
        // Four histograms filled side by side, then added: one alone made
        // each increment wait for the last (most registers share a few
        // values), the second largest cost of a `count`.
        let mut four = [[0u32; 64]; 4];
        let mut chunks = self.0.chunks_exact(4);
        for c in &mut chunks {
            for (h, &r) in four.iter_mut().zip(c) {
                h[usize::from(r).min(q + 1)] += 1;
            }
        }
        for &r in chunks.remainder() {
            four[0][usize::from(r).min(q + 1)] += 1;
        }
        let mut histogram = [0u32; 64];
        for h in &four {
            for (total, n) in histogram.iter_mut().zip(h) {
                *total += n;
            }
        }
        let m = REGISTERS as f64;
        let mut z = m * tau((m - f64::from(histogram[q + 1])) / m);
        for k in (1..=q).rev() {
            z += f64::from(histogram[k]);
            z *= 0.5;
        }
        z += m * sigma(f64::from(histogram[0]) / m);
        let alpha_inf = 0.5 / std::f64::consts::LN_2;
        (alpha_inf * m * m / z).round() as u64
    }

    /// The whole sketch as one blob: [`MAGIC`] and the registers packed 6
    /// bits each (12 292 bytes). For moving registers between programs; the
    /// store holds segments (see the [module docs](self)).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; ENCODED_LEN];
        out[..MAGIC.len()].copy_from_slice(MAGIC);
        pack(&self.0, &mut out[MAGIC.len()..]);
        out
    }

    /// Read [`encode`](Self::encode)'s blob. Wrong length, wrong magic or a
    /// register above the largest rank (51) is an error (never a panic).
    pub fn decode(bytes: &[u8]) -> std::result::Result<Registers, DecodeError> {
        if bytes.len() != ENCODED_LEN {
            return Err(DecodeError(format!(
                "a HyperLogLog is {ENCODED_LEN} bytes; found {}",
                bytes.len()
            )));
        }
        if &bytes[..MAGIC.len()] != MAGIC {
            return Err(DecodeError("not a HyperLogLog (no MHL1 magic)".into()));
        }
        let mut r = Registers::new();
        unpack(&bytes[MAGIC.len()..], &mut r.0)?;
        Ok(r)
    }
}

/// `mine = max(mine, theirs)` register by register; whether one rose.
fn max_into(mine: &mut [u8], theirs: &[u8]) -> bool {
    let mut changed = false;
    for (m, &t) in mine.iter_mut().zip(theirs) {
        if t > *m {
            *m = t;
            changed = true;
        }
    }
    changed
}

/// Ertl's σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k−1).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let previous = z;
        z += x * y;
        y += y;
        if previous == z {
            return z;
        }
    }
}

/// Ertl's τ(x) = (1 − x − Σ_{k≥1} (1 − x^(2^−k))² 2^−k) / 3.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let previous = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if previous == z {
            return z / 3.0;
        }
    }
}

/// One segment's registers read from its item, and the length of its log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The registers: the maximum over the base and the log.
    pub(crate) registers: [u8; SEGMENT_REGISTERS],
    /// Records in the log (appended since the last compaction).
    pub(crate) log: usize,
}

/// The log record of register `local` (an index in its segment) at `rank`.
fn record(local: usize, rank: u8) -> [u8; 2] {
    (((local as u16) << 6) | u16::from(rank)).to_le_bytes()
}

/// Raise `registers` by 2-byte records; a rank of 0 or above the largest
/// is an error.
fn apply_records(
    records: &[u8],
    registers: &mut [u8; SEGMENT_REGISTERS],
) -> std::result::Result<(), DecodeError> {
    for pair in records.chunks_exact(2) {
        let v = u16::from_le_bytes([pair[0], pair[1]]);
        let (local, rank) = (usize::from(v >> 6), (v & 63) as u8);
        if rank == 0 || rank > MAX_RANK {
            return Err(DecodeError(format!(
                "a record of register {local} holds rank {rank}, outside 1..={MAX_RANK}"
            )));
        }
        registers[local] = registers[local].max(rank);
    }
    Ok(())
}

/// Read a segment item (see the [module docs](self)). Anything else is an
/// error, never a panic.
pub(crate) fn decode_segment(bytes: &[u8]) -> std::result::Result<Segment, DecodeError> {
    let rest = bytes
        .strip_prefix(SEGMENT_MAGIC)
        .ok_or_else(|| DecodeError("not a HyperLogLog segment (no MHS1 magic)".into()))?;
    let mut registers = [0u8; SEGMENT_REGISTERS];
    let log = match rest.split_first() {
        Some((&DENSE, body)) => {
            let packed = body.get(..DENSE_BYTES).ok_or_else(|| {
                DecodeError(format!(
                    "a dense segment holds {DENSE_BYTES} bytes of registers; found {}",
                    body.len()
                ))
            })?;
            unpack(packed, &mut registers)?;
            &body[DENSE_BYTES..]
        }
        Some((&SPARSE, body)) => {
            let [lo, hi, body @ ..] = body else {
                return Err(DecodeError("a sparse segment lacks its count".into()));
            };
            let n = usize::from(u16::from_le_bytes([*lo, *hi]));
            let base = body.get(..2 * n).ok_or_else(|| {
                DecodeError(format!(
                    "a sparse segment of {n} registers holds only {} bytes",
                    body.len()
                ))
            })?;
            apply_records(base, &mut registers)?;
            &body[2 * n..]
        }
        _ => {
            return Err(DecodeError(
                "a HyperLogLog segment of an unknown form".into(),
            ));
        }
    };
    if log.len() % 2 != 0 {
        return Err(DecodeError(format!(
            "a segment's log of {} bytes is not whole 2-byte records",
            log.len()
        )));
    }
    apply_records(log, &mut registers)?;
    Ok(Segment {
        registers,
        log: log.len() / 2,
    })
}

/// A segment item holding `registers` with an empty log: sparse while that
/// is smaller than dense. `registers` is [`SEGMENT_REGISTERS`] long.
pub(crate) fn encode_segment(registers: &[u8]) -> Vec<u8> {
    let set = registers.iter().filter(|&&r| r != 0).count();
    let head = SEGMENT_MAGIC.len() + 1;
    if 2 + 2 * set < DENSE_BYTES {
        let mut out = Vec::with_capacity(head + 2 + 2 * set);
        out.extend_from_slice(SEGMENT_MAGIC);
        out.push(SPARSE);
        out.extend_from_slice(&(set as u16).to_le_bytes());
        for (local, &rank) in registers.iter().enumerate() {
            if rank != 0 {
                out.extend_from_slice(&record(local, rank));
            }
        }
        out
    } else {
        let mut out = vec![0u8; head + DENSE_BYTES];
        out[..SEGMENT_MAGIC.len()].copy_from_slice(SEGMENT_MAGIC);
        out[SEGMENT_MAGIC.len()] = DENSE;
        pack(registers, &mut out[head..]);
        out
    }
}

/// A distributed HyperLogLog (PFADD/PFCOUNT/PFMERGE, as in the Redis best-practices article).
///
/// * [`add`](Self::add): 1 round trip (a `get` and an `append` of 2 bytes
///   in one batch); 3 the first time a segment is written (the append
///   answers "not stored", then the segment is created), and 2 more about
///   once in [`COMPACT_AT`] adds to a segment (the compaction). Whether a register changed is exact for one writer; for
///   concurrent writers of the same element both may answer `true`.
/// * [`add_many`](Self::add_many): one CAS write of the segments the
///   elements raise (2 round trips, 1 when none rises).
/// * [`count`](Self::count): 1 round trip (`get_multi` of the 16
///   segments). [`count_union`](Self::count_union) of several: 1.
/// * [`merge`](Self::merge): the union of others written into this one (3
///   round trips).
/// * [`buffer`](Self::buffer): an [`HllBuffer`] that adds locally and
///   flushes with one batch of CAS writes.
/// * Every method that reaches the store has an async twin
///   ([`add_async`](Self::add_async), [`count_async`](Self::count_async),
///   …): the same algorithm, awaiting the store instead of blocking the
///   thread.
///
/// The [module docs](self) give the stored layout and why.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::HyperLogLog;
///
/// let store = Arc::new(MemoryStore::new());
/// let monday = HyperLogLog::new(store.clone(), "crawled:2020-06-13")?;
/// let tuesday = HyperLogLog::new(store.clone(), "crawled:2020-06-14")?;
/// assert!(monday.add_many(&["google.com", "redislabs.com", "redis.io"])?);
/// assert!(tuesday.add_many(&["redisearch.io", "redis.io"])?);
/// assert!(!monday.add("redis.io")?, "already counted");
/// assert_eq!(monday.count()?, 3);
/// assert_eq!(HyperLogLog::count_union(&[&monday, &tuesday])?, 4);
/// let week = HyperLogLog::new(store, "crawled:week")?;
/// week.merge(&[&monday, &tuesday])?;
/// assert_eq!(week.count()?, 4);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 243 bytes less the scope's prefix (the key `<prefix>hll:<name>:s<segment>` fits 250 bytes; `:` and `%` are escaped to 3 bytes). On a pool a segment's key may take a salt (`.1` to `.63`) that places it on segment 0's server: past 240 bytes some salts do not fit, and a segment that finds none lives on another server (no error) | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | no limit on elements (of any size: hashed, never stored) or on their number: [`SEGMENTS`] (16) items of [`SEGMENT_REGISTERS`] registers, counting to billions at 0.81 % | — | — |
/// | a segment's log: [`COMPACT_AT`] (256) records, then [`LOG_LIMIT`] (4 096) | no error: an add folds the log into the base by CAS (2 more round trips) | — |
/// | the store's item limit holds a dense segment (773 bytes, plus the key and 59 bytes of overhead) for [`merge`](Self::merge) and [`HllBuffer::flush`], and a few log records more for [`add`](Self::add) (memcached's smallest `-I 1k` does) | [`Error::ValueTooLarge`]: from an add, after its record may be in the log (see [`add`](Self::add)); from a merge or flush, segments that fit may be written (merging again is harmless) | see left |
/// | a server with CAS (memcached without `-C`, not through a proxy) | [`Error::Unsupported`] | nothing |
/// | [`count_union`](Self::count_union)'s sketches, and [`merge`](Self::merge)'s sources, share one store (a merge's target may live in another) | [`Error::InvalidArgument`] | nothing |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses register segments: the count then
/// misses the elements whose registers were there. No read can tell a lost
/// segment from an empty one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct HyperLogLog {
    store: Arc<dyn Store>,
    keys: Arc<[Key]>,
    ttl: Ttl,
}

/// A segment's registers from its item (all zero when it is missing).
fn registers_of(item: Option<&mcds_core::Item>) -> std::result::Result<Segment, DecodeError> {
    match item {
        None => Ok(Segment {
            registers: [0; SEGMENT_REGISTERS],
            log: 0,
        }),
        Some(item) => decode_segment(&item.value),
    }
}

impl HyperLogLog {
    /// The HyperLogLog `name` in `scope` (a store, or a [`Scope`] with a
    /// key prefix), never expiring.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<HyperLogLog> {
        let scope = scope.into();
        let first = scope.key("hll", name, "s0")?;
        let mut keys = vec![first.clone()];
        for s in 1..SEGMENTS {
            // The first salt that puts the segment on segment 0's server
            // (salt 0 when none does, or behind a proxy).
            let salted = |salt: u32| match salt {
                0 => scope.key("hll", name, format_args!("s{s:x}")),
                salt => scope.key("hll", name, format_args!("s{s:x}.{salt}")),
            };
            let placed = (0..PLACEMENT_TRIES)
                .map(salted)
                .find(|k| k.as_ref().is_ok_and(|k| scope.store().colocated(k, &first)));
            keys.push(placed.unwrap_or_else(|| salted(0))?);
        }
        Ok(HyperLogLog {
            keys: keys.into(),
            store: Arc::clone(scope.store()),
            ttl: Ttl::Never,
        })
    }

    /// Expire the sketch `ttl` after its last write. Each add, merge and
    /// flush also touches the segments it does not write, in the same batch
    /// on the same server (a sketch's segments live on one server of a
    /// pool), so the 16 items get the same expiry time on one memcached
    /// clock and expire together. The one exception: memcached's clock
    /// ticks once a second, and a tick that falls inside the batch (a few
    /// microseconds) gives the items processed after it an expiry one
    /// second later; an add in that second finds part of the sketch.
    pub fn with_ttl(mut self, ttl: Ttl) -> HyperLogLog {
        self.ttl = ttl;
        self
    }

    /// The keys of the sketch's [`SEGMENTS`] items, segment 0 first.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    fn segment(&self, s: usize, item: Option<&mcds_core::Item>) -> Result<Segment> {
        registers_of(item).map_err(|e| corrupt(&self.keys[s], e.0))
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// The stored registers (all zero if no segment exists). 1 round trip.
    #[blocking_and_async(pub)]
    async fn registers_io(&self, io: Io) -> Result<Registers> {
        HyperLogLog::union(io, &[self]).await
    }

    /// PFADD of one element: whether a register changed (see the type's
    /// docs for concurrent writers). An error may come after the element
    /// was recorded (a lost reply, a compaction that failed); adding it
    /// again is always safe.
    #[blocking_and_async(pub)]
    async fn add_io(&self, io: Io, element: impl AsRef<[u8]>) -> Result<bool> {
        let element = element.as_ref();
        let (index, rank) = index_and_rank(stable_hash(element));
        let (s, local) = (index / SEGMENT_REGISTERS, index % SEGMENT_REGISTERS);
        let key = &self.keys[s];
        let rec = record(local, rank);
        let access = self.access(io);
        // The get first: on one connection, it reads the segment as it was
        // before this append. With a TTL, every segment is touched too.
        let mut ops = Vec::with_capacity(if self.ttl == Ttl::Never {
            2
        } else {
            2 + SEGMENTS
        });
        if self.ttl != Ttl::Never {
            ops.push(Op::Touch { key, ttl: self.ttl });
        }
        let get = ops.len();
        ops.push(Op::Get(key));
        ops.push(Op::Append { key, value: &rec });
        if self.ttl != Ttl::Never {
            ops.extend(self.keys.iter().filter(|k| *k != key).map(|k| Op::Touch {
                key: k,
                ttl: self.ttl,
            }));
        }
        let mut tries = 0;
        let (before, appended) = loop {
            let mut before = None;
            let mut appended = Ok(false);
            for (i, reply) in access.pipeline(&ops).await.into_iter().enumerate() {
                if i == get + 1 {
                    appended = reply.and_then(Reply::applied);
                    continue;
                }
                let reply = reply?;
                if i == get {
                    before = Some(reply.item()?);
                } else {
                    reply.applied()?;
                }
            }
            let Some(before) = before else {
                return Err(Error::Internal("a pipeline answered too few ops".into()));
            };
            tries += 1;
            match appended {
                // The log reached the server's item limit (smaller than the
                // store was told): compact, then append again, once.
                Err(Error::ValueTooLarge { .. }) if tries == 1 => {
                    self.segment(s, before.as_ref())?;
                    if !self.compact(access, s, MAX_ATTEMPTS).await? {
                        return Err(Error::Conflict {
                            key: key.display(),
                            attempts: MAX_ATTEMPTS,
                        });
                    }
                }
                appended => break (before, appended),
            }
        };
        let segment = self.segment(s, before.as_ref())?;
        let changed = segment.registers[local] < rank;
        if !appended? {
            // The segment did not exist (or vanished since the get).
            self.create(access, s, local, rank).await?;
            return Ok(true);
        }
        let size = before.map_or(0, |item| item.value.len());
        match self.compaction(key, size, &segment) {
            Compaction::None => {}
            Compaction::Try => {
                self.compact(access, s, 1).await?;
            }
            Compaction::Must => {
                self.compact(access, s, MUST_ATTEMPTS).await?;
            }
        }
        Ok(changed)
    }

    /// Whether an add that read segment `key`, `size` bytes (`segment`),
    /// compacts it. By records ([`COMPACT_AT`], [`LOG_LIMIT`]) and by the
    /// room an item has under the store's item size limit: the log may
    /// fill half of what the compacted segment leaves free before one try,
    /// three quarters before every adder must. A log must not reach the
    /// limit: memcached refuses the append (then the add compacts and
    /// appends again).
    fn compaction(&self, key: &Key, size: usize, segment: &Segment) -> Compaction {
        let log = segment.log;
        if log == 0 {
            return Compaction::None;
        }
        let room = self
            .store
            .item_size_limit()
            .saturating_sub(item_size(key.len(), 0));
        let base = size.saturating_sub(2 * log);
        let headroom = room.saturating_sub(base);
        if log >= LOG_LIMIT || 4 * (size - base) >= 3 * headroom {
            return Compaction::Must;
        }
        // One adder in `every` tries, `every` sized to the headroom (so
        // small item limits still get their tries in time).
        let every = COMPACT_EVERY.min(headroom / 16).max(1);
        if (log >= COMPACT_AT || 2 * (size - base) >= headroom) && log % every == 0 {
            Compaction::Try
        } else {
            Compaction::None
        }
    }

    /// Create segment `s` holding one register (or append its record to a
    /// segment created meanwhile).
    async fn create(&self, access: Access<'_>, s: usize, local: usize, rank: u8) -> Result<()> {
        let key = &self.keys[s];
        if !access.supports_cas(key).await? {
            return Err(no_cas(access.store()));
        }
        let mut registers = [0u8; SEGMENT_REGISTERS];
        registers[local] = rank;
        let value = encode_segment(&registers);
        let rec = record(local, rank);
        let mut backoff = Backoff::default();
        for _ in 0..MAX_ATTEMPTS {
            if let Stored::Stored(_) = access.add(key, &value, self.ttl).await? {
                return Ok(());
            }
            if access.append(key, &rec).await? {
                return Ok(());
            }
            // Created and deleted again between the two: once more.
            access.sleep(backoff.next_delay()).await;
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// Fold segment `s`'s log into its base by CAS, in up to `attempts`
    /// tries; whether it is compact now. Losing every race is not an
    /// error: this add's record is in the log, and a later add compacts.
    async fn compact(&self, access: Access<'_>, s: usize, attempts: u32) -> Result<bool> {
        let result =
            update_checked_with(access, &self.keys[s], self.ttl, attempts, &mut |current| {
                let Some(bytes) = current else {
                    return Ok(None);
                };
                let segment = decode_segment(bytes).map_err(|e| e.0)?;
                Ok((segment.log > 0).then(|| encode_segment(&segment.registers)))
            })
            .await;
        match result {
            Err(Error::Conflict { .. }) => Ok(false),
            other => other.map(|_| true),
        }
    }

    /// PFADD of many elements: one CAS write of the segments they raise
    /// (2 round trips; 1 when none rises).
    #[blocking_and_async(pub)]
    async fn add_many_io<E: AsRef<[u8]>>(&self, io: Io, elements: &[E]) -> Result<bool> {
        let mut local = Registers::new();
        for e in elements {
            local.insert(e.as_ref());
        }
        self.write_registers(self.access(io), &local).await
    }

    /// Raise the stored registers to `other` by CAS, segment by segment:
    /// one `get_multi` of the segments `other` could raise, one batch of
    /// CAS writes (or adds) of those it does, again for those whose CAS
    /// lost. Whether a register changed.
    async fn write_registers(&self, access: Access<'_>, other: &Registers) -> Result<bool> {
        let mut pending: Vec<usize> = (0..SEGMENTS)
            .filter(|&s| other.segment(s).iter().any(|&r| r != 0))
            .collect();
        for &s in &pending {
            if !access.supports_cas(&self.keys[s]).await? {
                return Err(no_cas(access.store()));
            }
        }
        let mut changed = false;
        // With a TTL, the segments left alone are touched in the first
        // write (so all expire together).
        let mut touch = self.ttl != Ttl::Never;
        let mut backoff = Backoff::default();
        for _ in 0..MAX_ATTEMPTS {
            let keys: Vec<Key> = pending.iter().map(|&s| self.keys[s].clone()).collect();
            let items = if keys.is_empty() {
                Vec::new()
            } else {
                access.get_multi(&keys).await?
            };
            // (segment, new value, CAS id of the item read, if any)
            let mut writes: Vec<(usize, Vec<u8>, Option<u64>)> = Vec::new();
            for (&s, item) in pending.iter().zip(&items) {
                let mut segment = self.segment(s, item.as_ref())?;
                if max_into(&mut segment.registers, other.segment(s)) {
                    let value = encode_segment(&segment.registers);
                    writes.push((s, value, item.as_ref().map(|i| i.cas)));
                }
            }
            let mut ops: Vec<Op<'_>> = writes
                .iter()
                .map(|(s, value, cas)| cas_or_add(&self.keys[*s], value, self.ttl, *cas))
                .collect();
            if touch {
                touch = false;
                ops.extend(
                    (0..SEGMENTS)
                        .filter(|s| !writes.iter().any(|w| w.0 == *s))
                        .map(|s| Op::Touch {
                            key: &self.keys[s],
                            ttl: self.ttl,
                        }),
                );
            }
            if ops.is_empty() {
                return Ok(changed);
            }
            let mut again = Vec::new();
            for (i, reply) in access.pipeline(&ops).await.into_iter().enumerate() {
                let reply = reply?;
                let Some((s, _, cas)) = writes.get(i) else {
                    reply.applied()?;
                    continue;
                };
                let stored = match cas {
                    Some(_) => matches!(reply.cas_outcome()?, CasOutcome::Stored(_)),
                    None => matches!(reply.stored()?, Stored::Stored(_)),
                };
                if stored {
                    changed = true;
                } else {
                    again.push(*s);
                }
            }
            if again.is_empty() {
                return Ok(changed);
            }
            pending = again;
            access.sleep(backoff.next_delay()).await;
        }
        Err(Error::Conflict {
            key: self.keys[pending[0]].display(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// PFCOUNT: the estimated number of distinct elements added. 1 round
    /// trip.
    #[blocking_and_async(pub)]
    async fn count_io(&self, io: Io) -> Result<u64> {
        Ok(self.registers_io(io).await?.count())
    }

    /// PFCOUNT of several keys: the estimated size of their union, without
    /// writing anything. 1 round trip per server (`get_multi`); all must
    /// use the same store.
    ///
    /// [`count_union`](HyperLogLog::count_union) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn count_union_io(io: Io, sketches: &[&HyperLogLog]) -> Result<u64> {
        Ok(HyperLogLog::union(io, sketches).await?.count())
    }

    /// The union of `sketches`' registers: one `get_multi` of all their
    /// segments.
    async fn union(io: Io, sketches: &[&HyperLogLog]) -> Result<Registers> {
        let mut union = Registers::new();
        let Some(first) = sketches.first() else {
            return Ok(union);
        };
        check_one_store(first, sketches)?;
        let keys: Vec<Key> = sketches
            .iter()
            .flat_map(|h| h.keys.iter().cloned())
            .collect();
        let items = first.access(io).get_multi(&keys).await?;
        for (i, item) in items.iter().enumerate() {
            let (h, s) = (sketches[i / SEGMENTS], i % SEGMENTS);
            if item.is_some() {
                let segment = h.segment(s, item.as_ref())?;
                max_into(union.segment_mut(s), &segment.registers);
            }
        }
        Ok(union)
    }

    /// PFMERGE: write the union of this sketch and `others` into this one.
    /// One `get_multi` of the others, then the CAS writes of
    /// [`merge_registers`](Self::merge_registers) (3 round trips). All must
    /// use the same store.
    #[blocking_and_async(pub)]
    async fn merge_io(&self, io: Io, others: &[&HyperLogLog]) -> Result<()> {
        // The sources share a store (`union` checks); the target may be
        // elsewhere: it is written on its own.
        let union = HyperLogLog::union(io, others).await?;
        self.write_registers(self.access(io), &union)
            .await
            .map(drop)
    }

    /// Add the registers `other` (built locally): one `get_multi` of the
    /// segments it could raise, one batch of CAS writes of those it does
    /// (2 round trips; 1 when none rises). Whether a register changed.
    ///
    /// [`merge_registers`](HyperLogLog::merge_registers) without blocking
    /// the thread.
    #[blocking_and_async(pub)]
    async fn merge_registers_io(&self, io: Io, other: &Registers) -> Result<bool> {
        self.write_registers(self.access(io), other).await
    }

    /// Delete the sketch (it counts 0 again): its 16 items in one batch.
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        let ops: Vec<Op<'_>> = self.keys.iter().map(Op::Delete).collect();
        for reply in self.access(io).pipeline(&ops).await {
            reply?.applied()?;
        }
        Ok(())
    }

    /// A local buffer for hot paths: adds cost nothing until
    /// [`HllBuffer::flush`].
    pub fn buffer(&self) -> HllBuffer {
        HllBuffer {
            hll: self.clone(),
            local: Registers::new(),
            pending: 0,
        }
    }
}

/// What an add does about its segment's log.
enum Compaction {
    /// Nothing yet.
    None,
    /// One CAS try (losing the race is fine).
    Try,
    /// CAS attempts with backoff until it is done.
    Must,
}

/// [`Error::Unsupported`] for a store without CAS.
/// [`Error::InvalidArgument`] unless every sketch of `others` uses
/// `first`'s store: a union reads every segment from one store, and would
/// read another store's sketch as empty.
fn check_one_store(first: &HyperLogLog, others: &[&HyperLogLog]) -> Result<()> {
    match others
        .iter()
        .find(|h| !std::ptr::addr_eq(Arc::as_ptr(&h.store), Arc::as_ptr(&first.store)))
    {
        None => Ok(()),
        Some(other) => Err(Error::InvalidArgument(format!(
            "the HyperLogLogs of a union or merge share one store; {} uses another than {}",
            other.keys[0].display(),
            first.keys[0].display()
        ))),
    }
}

fn no_cas(store: &dyn Store) -> Error {
    Error::Unsupported {
        op: "HyperLogLog write",
        backend: store.backend_name(),
        hint: "a HyperLogLog compacts its segments by CAS: use a memcached started without -C, connected directly (not through a proxy)",
    }
}

/// Accumulates elements in local registers and flushes them into the
/// stored [`HyperLogLog`] with one batch of CAS writes (2 round trips),
/// however many elements were added. Not flushed on drop: call
/// [`flush`](Self::flush).
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::HyperLogLog;
///
/// let visitors = HyperLogLog::new(Arc::new(MemoryStore::new()), "visitors")?;
/// let mut buffer = visitors.buffer();
/// for ip in ["10.0.0.1", "10.0.0.2", "10.0.0.1"] {
///     buffer.add(ip);
/// }
/// assert_eq!(buffer.pending(), 3);
/// buffer.flush()?;
/// assert_eq!(visitors.count()?, 2);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | no limit on the elements added (of any size, hashed) or on their number between flushes: the buffer is 16 384 registers, whatever it holds | — | — |
/// | a flush writes whole segments: the store's item limit holds a dense one (773 bytes, plus the key and 59 bytes of overhead) | [`Error::ValueTooLarge`]; the buffer keeps its registers for a later flush. Segments that fit may be written (flushing them again is harmless) | see left |
/// | a server with CAS (memcached without `-C`, not through a proxy) | [`Error::Unsupported`]; the buffer keeps its registers | nothing |
#[derive(Debug)]
pub struct HllBuffer {
    hll: HyperLogLog,
    local: Registers,
    pending: usize,
}

impl HllBuffer {
    /// Add an element locally.
    pub fn add(&mut self, element: impl AsRef<[u8]>) {
        self.local.insert(element.as_ref());
        self.pending += 1;
    }

    /// Elements added since the last flush.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Merge the local registers into the stored sketch (2 round trips;
    /// none when nothing is pending) and start over. On error the local
    /// registers are kept, so a later flush retries them.
    ///
    /// [`flush`](HllBuffer::flush) without blocking the thread. Cancelled
    /// (dropped) before it finishes, it keeps the local registers, as on
    /// error.
    #[blocking_and_async(pub)]
    async fn flush_io(&mut self, io: Io) -> Result<bool> {
        if self.pending == 0 {
            return Ok(false);
        }
        let changed = self.hll.merge_registers_io(io, &self.local).await?;
        self.local = Registers::new();
        self.pending = 0;
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`unpack`] against the naive model, one register at a time, on
    /// packed bytes of every length up to 40 and random contents (every
    /// byte value in every position), and on registers packed by [`pack`].
    #[test]
    fn unpack_agrees_with_one_register_at_a_time() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        };
        for len in 0..40 {
            for _ in 0..200 {
                let packed: Vec<u8> = (0..len).map(|_| next()).collect();
                let n = len * 8 / 6;
                let (mut fast, mut naive) = (vec![0u8; n], vec![0u8; n]);
                let a = unpack(&packed, &mut fast).map_err(|e| e.0);
                let b = unpack_one_by_one(&packed, &mut naive, 0).map_err(|e| e.0);
                assert_eq!(a, b, "{packed:?}");
                if a.is_ok() {
                    assert_eq!(fast, naive, "{packed:?}");
                }
            }
        }
        let registers: Vec<u8> = (0..SEGMENT_REGISTERS).map(|i| (i % 52) as u8).collect();
        let mut packed = vec![0u8; SEGMENT_REGISTERS * 6 / 8];
        pack(&registers, &mut packed);
        let mut back = vec![0u8; SEGMENT_REGISTERS];
        unpack(&packed, &mut back).unwrap();
        assert_eq!(back, registers);
    }
}
