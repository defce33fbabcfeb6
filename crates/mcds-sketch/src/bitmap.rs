//! [`ActivityBitmap`]: one bit per time unit since a start (Redis's SETBIT
//! and BITCOUNT pattern from the Redis best-practices article): "was the user active on day n?",
//! "on how many days of this month?".
//!
//! **Storage.** Bit `i` (unit `i` after the start) lives in segment
//! `i / 65 536`, the item `<prefix>bitmap:<name>:<segment>` of at most
//! 8 KiB, most significant bit first as in Redis (bit 0 is `0x80` of byte
//! 0). A segment grows as bits are set, like SETBIT; shorter bytes read as
//! zeros. Setting a bit is a CAS read-modify-write of its segment (OR
//! commutes, so retries lose nothing); counting reads the segments of the
//! range in one `get_multi`.

use std::time::Duration;

use mcds_core::{Access, Error, Io, Key, Result, Scope, Ttl, UnixMs, blocking_and_async};

use crate::{corrupt, update_checked};

/// Bits per segment item.
pub const SEGMENT_BITS: u64 = 65_536;
/// Bytes per segment item, at most.
pub const SEGMENT_BYTES: usize = (SEGMENT_BITS / 8) as usize;

/// A stored segment, or why it is not one (longer than a segment).
fn check_segment(bytes: &[u8]) -> std::result::Result<&[u8], String> {
    if bytes.len() > SEGMENT_BYTES {
        return Err(format!(
            "a bitmap segment is at most {SEGMENT_BYTES} bytes; found {}",
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// Whether bit `i` (MSB first) of `bytes` is set; bytes past the end are 0.
pub fn bit(bytes: &[u8], i: u64) -> bool {
    bytes
        .get((i / 8) as usize)
        .is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
}

/// Count the set bits of `bytes` in `first..=last` (MSB first).
pub(crate) fn count_range(bytes: &[u8], first: u64, last: u64) -> u64 {
    let mut total = 0u64;
    let mut i = first;
    while i <= last && i / 8 < bytes.len() as u64 {
        if i % 8 == 0 && i + 7 <= last {
            total += u64::from(bytes[(i / 8) as usize].count_ones());
            i += 8;
        } else {
            total += u64::from(bit(bytes, i));
            i += 1;
        }
    }
    total
}

/// A bitmap of activity per time unit (the SETBIT/BITCOUNT pattern of the Redis best-practices article).
///
/// * [`mark`](Self::mark) / [`set`](Self::set): SETBIT to 1, returning the
///   previous bit. 2 round trips when the bit changes, 1 when it was set.
/// * [`is_marked`](Self::is_marked) / [`get`](Self::get): 1 round trip.
/// * [`count`](Self::count) / [`count_bits`](Self::count_bits): BITCOUNT
///   over an inclusive range, 1 round trip per server (`get_multi`).
/// * Every method that reaches the store has an async twin
///   ([`set_async`](Self::set_async), [`count_async`](Self::count_async),
///   …): the same algorithm, awaiting the store instead of blocking the
///   thread.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::ActivityBitmap;
///
/// let day = Duration::from_secs(86_400);
/// // Day 0 is 2026-01-01 (Unix 1767225600).
/// let logins = ActivityBitmap::new(Arc::new(MemoryStore::new()), "user:7:logins", 1_767_225_600, day)?;
/// for n in [0, 1, 1, 5, 30] {
///     logins.set(n)?;
/// }
/// assert!(logins.get(5)? && !logins.get(2)?);
/// assert_eq!(logins.count_bits(0, 30)?, 4, "days active in January");
/// assert_eq!(logins.count_bits(2, 29)?, 1);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 227 bytes less the scope's prefix (the key `<prefix>bitmap:<name>:<segment>` of the last segment fits 250 bytes; `:` and `%` are escaped to 3 bytes) | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | a unit of at least 1 ms, in whole milliseconds | [`Error::InvalidArgument`] from [`new`](Self::new) (a fraction of a millisecond too: it would be dropped) | nothing |
/// | bit indexes 0 to `u64::MAX` ([`SEGMENT_BITS`] a segment); times from `start` on | [`Error::InvalidArgument`] for a time before `start` | nothing |
/// | a count reads at most 10 000 segments (`first / 65 536` to `last / 65 536`: 655 360 000 bits when aligned) | [`Error::InvalidArgument`] | nothing read |
/// | a segment grows to [`SEGMENT_BYTES`] (8 KiB) as its bits are set: the store's item limit must hold that, plus the key and 59 bytes of overhead (memcached's smallest `-I 1k` does not) | [`Error::ValueTooLarge`] from a set whose segment would outgrow the limit | nothing: the segment keeps what it had |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses bitmap segments: their bits read clear.
/// No read can tell a lost segment from an inactive stretch: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct ActivityBitmap {
    scope: Scope,
    name: String,
    start_ms: u64,
    unit_ms: u64,
    ttl: Ttl,
}

impl ActivityBitmap {
    /// The bitmap `name` whose bit 0 is the unit starting at `start` (Unix
    /// seconds), one bit per `unit` (at least 1 ms), in `scope`: a store,
    /// or a [`Scope`] with a key prefix and the clock
    /// [`mark_now`](Self::mark_now) reads.
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        start: u64,
        unit: Duration,
    ) -> Result<ActivityBitmap> {
        let unit_ms = u64::try_from(unit.as_millis()).unwrap_or(u64::MAX);
        if unit_ms == 0 || unit.subsec_nanos() % 1_000_000 != 0 {
            return Err(Error::InvalidArgument(format!(
                "an activity bitmap's unit is a whole number of milliseconds, at least 1 (e.g. one day); got {unit:?}"
            )));
        }
        let bitmap = ActivityBitmap {
            scope: scope.into(),
            name: name.to_string(),
            start_ms: start.saturating_mul(1000),
            unit_ms,
            ttl: Ttl::Never,
        };
        bitmap.segment_key(u64::MAX / SEGMENT_BITS)?; // the longest key fits
        Ok(bitmap)
    }

    /// Expire each segment `ttl` after its last write.
    pub fn with_ttl(mut self, ttl: Ttl) -> ActivityBitmap {
        self.ttl = ttl;
        self
    }

    fn segment_key(&self, segment: u64) -> Result<Key> {
        self.scope.key("bitmap", &self.name, segment)
    }

    /// The bit index of the unit containing `at_ms` (Unix ms).
    pub fn index_of(&self, at_ms: UnixMs) -> Result<u64> {
        if at_ms < self.start_ms {
            return Err(Error::InvalidArgument(format!(
                "time {at_ms} ms is before the bitmap's start ({} ms)",
                self.start_ms
            )));
        }
        Ok((at_ms - self.start_ms) / self.unit_ms)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    /// SETBIT index 1: the previous bit.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::time::Duration;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_sketch::ActivityBitmap;
    /// # mcds_core::block_on(async {
    /// let day = Duration::from_secs(86_400);
    /// let logins = ActivityBitmap::new(Arc::new(MemoryStore::new()), "user:8:logins", 1_767_225_600, day)?;
    /// assert!(!logins.set_async(3).await?, "was clear");
    /// assert!(logins.get_async(3).await?);
    /// assert_eq!(logins.count_bits_async(0, 30).await?, 1);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn set_io(&self, io: Io, index: u64) -> Result<bool> {
        let key = self.segment_key(index / SEGMENT_BITS)?;
        let i = index % SEGMENT_BITS;
        // Unchanged exactly when the bit was already set.
        let stored = update_checked(self.access(io), &key, self.ttl, &mut |current| {
            let mut bytes = check_segment(current.unwrap_or_default())?.to_vec();
            if bit(&bytes, i) {
                return Ok(None);
            }
            let byte = (i / 8) as usize;
            if bytes.len() <= byte {
                bytes.resize(byte + 1, 0);
            }
            bytes[byte] |= 0x80 >> (i % 8);
            Ok(Some(bytes))
        })
        .await?;
        Ok(!stored)
    }

    /// Mark the unit containing `at_ms`: the previous bit.
    #[blocking_and_async(pub)]
    async fn mark_io(&self, io: Io, at_ms: u64) -> Result<bool> {
        self.set_io(io, self.index_of(at_ms)?).await
    }

    /// Mark the current unit (by the bitmap's clock).
    #[blocking_and_async(pub)]
    async fn mark_now_io(&self, io: Io) -> Result<bool> {
        self.mark_io(io, self.scope.clock().now_ms()).await
    }

    fn read(&self, key: &Key, bytes: Vec<u8>) -> Result<Vec<u8>> {
        check_segment(&bytes).map_err(|reason| corrupt(key, reason))?;
        Ok(bytes)
    }

    /// GETBIT. 1 round trip.
    #[blocking_and_async(pub)]
    async fn get_io(&self, io: Io, index: u64) -> Result<bool> {
        let key = self.segment_key(index / SEGMENT_BITS)?;
        match self.access(io).get(&key).await? {
            None => Ok(false),
            Some(item) => Ok(bit(&self.read(&key, item.value)?, index % SEGMENT_BITS)),
        }
    }

    /// Whether the unit containing `at_ms` is marked.
    #[blocking_and_async(pub)]
    async fn is_marked_io(&self, io: Io, at_ms: u64) -> Result<bool> {
        self.get_io(io, self.index_of(at_ms)?).await
    }

    /// BITCOUNT of bits `first..=last`: one `get_multi` of their segments
    /// (at most 10 000 segments, 655 million bits, per call).
    ///
    /// [`count_bits`](ActivityBitmap::count_bits) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn count_bits_io(&self, io: Io, first: u64, last: u64) -> Result<u64> {
        if first > last {
            return Ok(0);
        }
        let (s0, s1) = (first / SEGMENT_BITS, last / SEGMENT_BITS);
        if s1 - s0 >= 10_000 {
            return Err(Error::InvalidArgument(format!(
                "counting {} bits reads {} segments; count at most 10000 segments ({} bits) per call",
                (last - first).saturating_add(1),
                s1 - s0 + 1,
                10_000 * SEGMENT_BITS
            )));
        }
        let keys: Vec<Key> = (s0..=s1)
            .map(|s| self.segment_key(s))
            .collect::<Result<_>>()?;
        let items = self.access(io).get_multi(&keys).await?;
        let mut total = 0;
        for ((segment, key), item) in (s0..=s1).zip(&keys).zip(items) {
            let Some(item) = item else { continue };
            let bytes = self.read(key, item.value)?;
            let base = segment * SEGMENT_BITS;
            let lo = first.max(base) - base;
            // The last segment ends at 2^64 - 1: no `base + SEGMENT_BITS`.
            let hi = (last - base).min(SEGMENT_BITS - 1);
            total += count_range(&bytes, lo, hi);
        }
        Ok(total)
    }

    /// BITCOUNT of the units from the one containing `from_ms` to the one
    /// containing `to_ms`, inclusive.
    #[blocking_and_async(pub)]
    async fn count_io(&self, io: Io, from_ms: u64, to_ms: u64) -> Result<u64> {
        self.count_bits_io(io, self.index_of(from_ms)?, self.index_of(to_ms)?)
            .await
    }
}
