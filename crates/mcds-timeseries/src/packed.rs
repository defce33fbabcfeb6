//! [`PackedSeries`]: dense counters of fixed width (u8, u16 or u32), many
//! time slots packed into one item per period (Redis's `BITFIELD`
//! pattern), updated by CAS.

use std::time::Duration;

use mcds_core::{Access, Error, Io, Key, Result, Scope, UnixMs, blocking_and_async};

use crate::period::{
    DEFAULT_SKEW_MS, Read, check_retained, corrupt, first_readable, refuse_early, ttl_for, whole_ms,
};

/// The most slots one period item holds.
pub const MAX_SLOTS_PER_PERIOD: usize = 65_536;

/// The most slots one [`PackedSeries::range`] returns.
pub const MAX_RANGE_SLOTS: u64 = 100_000;

/// CAS attempts per increment before [`Error::Conflict`].
const MAX_ATTEMPTS: u32 = 64;

/// The first byte of every period item.
const MAGIC: u8 = b'P';

/// The bytes before the slots: the magic and the slot width in bytes.
pub const HEADER: usize = 2;

/// How wide each slot of a [`PackedSeries`] is: the largest count it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotWidth {
    /// 1 byte, counts to 255.
    U8,
    /// 2 bytes, counts to 65 535.
    U16,
    /// 4 bytes, counts to 4 294 967 295.
    U32,
}

impl SlotWidth {
    /// Bytes per slot.
    pub fn bytes(self) -> usize {
        match self {
            SlotWidth::U8 => 1,
            SlotWidth::U16 => 2,
            SlotWidth::U32 => 4,
        }
    }

    /// The largest value a slot holds; increments saturate there.
    pub fn max_value(self) -> u32 {
        match self {
            SlotWidth::U8 => u8::MAX.into(),
            SlotWidth::U16 => u16::MAX.into(),
            SlotWidth::U32 => u32::MAX,
        }
    }
}

/// One slot of a [`PackedSeries::range`]: where it starts and its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The slot's start, Unix milliseconds (a multiple of the slot length).
    pub start_ms: UnixMs,
    /// Its count (0 when nothing was counted).
    pub value: u32,
}

/// Dense counters per time slot, packed: each period of `slots` slots is
/// one item of `2 + slots × width` bytes (say a day of per-minute `u16`
/// counters: 1440 slots, 2882 bytes), like Redis's `BITFIELD` counters. Far
/// fewer items and bytes than one counter key per slot, for counters that
/// are dense in time (a counter per minute for every user, page or
/// endpoint), at the price of a CAS read-modify-write per increment.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::{ManualClock, MemoryStore, Scope};
/// use mcds_timeseries::{PackedSeries, SlotWidth};
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let scope = Scope::from(store).with_clock(Arc::new(clock.clone()));
/// let minute = Duration::from_secs(60);
/// let logins = PackedSeries::new(&scope, "logins", minute, 1440, SlotWidth::U8, Duration::from_secs(7 * 86_400))?;
/// let t0 = 1_800_000_000_000;
/// assert_eq!(logins.incr(t0, 3)?, 3);
/// assert_eq!(logins.incr(t0 + 59_000, 1)?, 4); // same minute
/// assert_eq!(logins.incr(t0 + 60_000, 300)?, 255); // saturates at u8::MAX
/// let slots = logins.range(t0, t0 + 120_000)?;
/// assert_eq!(slots.iter().map(|s| s.value).collect::<Vec<_>>(), [4, 255, 0]);
/// assert_eq!(logins.sum(t0, t0 + 120_000)?, 259);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// ## Layout and keys
///
/// Slot `i` (Unix ms `[i·s, (i+1)·s)` for a slot length `s`) lives in
/// period `p = i / slots`, the item `<prefix>packed:<name>:<s>:<slots>:<p>`,
/// at byte `2 + (i mod slots) × width`, little-endian. The item starts with
/// `P` and the width in bytes, and is created whole (every slot 0) by the
/// first increment of its period. The slot length and count are in the key,
/// so a series reopened with another shape reads other items; a series
/// reopened with another width finds items of the wrong width, which are
/// [`Error::Corrupt`], as is any other foreign or damaged item: never a
/// panic or a misread.
///
/// ## Round trips, concurrency, saturation
///
/// * [`incr`](Self::incr): a CAS read-modify-write of the period item
///   ([`Store::update`](mcds_core::Store::update)): **2 round trips** (`get`,
///   then `cas`, or `add` for a new period), 2 more per lost race, up to
///   64 attempts, then [`Error::Conflict`]; **1** when nothing changes
///   (a delta of 0, or a saturated slot). Concurrent increments are never
///   lost: each retry re-reads the item and adds to what it finds.
/// * A slot **saturates** at its width's maximum ([`SlotWidth::max_value`])
///   and stays there: a `u8` slot counted 300 times reads 255. `incr`
///   returns the slot's new value, so a caller sees the cap.
/// * [`get`](Self::get): 1 round trip; [`range`](Self::range) and
///   [`sum`](Self::sum): one `get` per period of the range in one
///   `get_multi`, **1 round trip per server**, then 2 more per server for
///   the loss check (see "Retention").
///
/// ## Retention
///
/// Like [`TimeSeries`](crate::TimeSeries): a period is readable for
/// `retention` after its end, by the reader's clock, and reads never look
/// at older periods; items get a TTL reaching the clock skew plus 60 s past
/// that, so no read depends on when memcached expires an item. An increment
/// of a slot past retention (even for a reader the skew behind) is an
/// [`Error::InvalidArgument`], and so is one
/// of a slot more than the clock skew ([`with_max_clock_skew`](Self::with_max_clock_skew),
/// 60 s by default) ahead of the scope's clock.
///
/// Eviction, flush and restart lose a period item without a reply that
/// says so, and an increment after the loss starts the period again from
/// zeros. A read therefore asks each server it read from whether it lost
/// items since twice the clock skew (2 minutes by default) before the
/// first slot it returns from there
/// ([`Store::retention`](mcds_core::Store::retention): for memcached its
/// `stats` and a record of when its clients saw its last loss, 2 more round
/// trips per server): if so, the read is an
/// [`Error::Lost`] naming the slot, the time of the loss and the first
/// time a read can vouch for; if not, every count ever made into those
/// slots is there. As for [`TimeSeries`](crate::TimeSeries), slots from
/// before the server started are not vouched for, a store that cannot
/// tell (a proxy) is [`Error::Unsupported`], and
/// [`with_loss_check(false)`](Self::with_loss_check) reads without asking.
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 220 bytes less the digits of the slot length in ms and of the slots per period, and less the scope's prefix (the key `<prefix>packed:<name>:<slot ms>:<slots>:<period>` of the last period there is, 20 digits, fits 250 bytes): 211 for minute slots, 1 440 a period; `:` and `%` are escaped to 3 bytes | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | 1 to [`MAX_SLOTS_PER_PERIOD`] (65 536) slots a period | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | a slot of whole milliseconds from 1 ms, a retention of at least a period and at most 100 years (of 366 days) | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | a period item, `2 + slots × width` bytes plus the key and 59 bytes of overhead, fits the store's item limit (65 536 `u32` slots take 256 KiB: memcached's default 1 MiB holds any) | [`Error::ValueTooLarge`] from [`new`](Self::new) | nothing |
/// | a slot counts up to its width's maximum ([`SlotWidth::max_value`]) | no error: it saturates, and [`incr`](Self::incr) returns the capped value | the capped value |
/// | an increment at most the clock skew ahead of the scope's clock, of a period within retention (for a reader the clock skew behind) | [`Error::InvalidArgument`] from [`incr`](Self::incr) | nothing |
/// | one read ([`range`](Self::range), [`sum`](Self::sum)) covers at most [`MAX_RANGE_SLOTS`] (100 000) slots within retention | [`Error::InvalidArgument`] | nothing read |
#[derive(Clone, Debug)]
pub struct PackedSeries {
    scope: Scope,
    name: String,
    slot_ms: u64,
    slots: u64,
    width: SlotWidth,
    retention_ms: u64,
    loss_check: bool,
    skew_ms: u64,
}

impl PackedSeries {
    /// The packed series `name` in `scope` (a store, or a [`Scope`] with a
    /// key prefix and a clock): slots of `slot` (whole ms, at least 1 ms),
    /// `slots_per_period` (1 to [`MAX_SLOTS_PER_PERIOD`]) of them per item,
    /// each `width` wide, readable for `retention` (at least one period)
    /// after their period ends. The item must fit the store's item size
    /// limit ([`Error::ValueTooLarge`] otherwise: use fewer slots per
    /// period).
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        slot: Duration,
        slots_per_period: usize,
        width: SlotWidth,
        retention: Duration,
    ) -> Result<PackedSeries> {
        let slot_ms = whole_ms("a packed series slot", slot)?;
        if !(1..=MAX_SLOTS_PER_PERIOD).contains(&slots_per_period) {
            return Err(Error::InvalidArgument(format!(
                "a packed series holds 1 to {MAX_SLOTS_PER_PERIOD} slots per item; got {slots_per_period}"
            )));
        }
        let slots = slots_per_period as u64;
        let period_ms = slot_ms.checked_mul(slots).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "a period of {slots_per_period} slots of {slot:?} is too long; use fewer or shorter slots"
            ))
        })?;
        let retention_ms = whole_ms("a packed series retention", retention)?;
        if retention_ms < period_ms {
            return Err(Error::InvalidArgument(format!(
                "a packed series keeps its periods of {slots_per_period} × {slot:?} for at least one period; got a retention of {retention:?} — raise it"
            )));
        }
        let series = PackedSeries {
            scope: scope.into(),
            name: name.to_string(),
            slot_ms,
            slots,
            width,
            retention_ms,
            loss_check: true,
            skew_ms: DEFAULT_SKEW_MS,
        };
        let longest = series.key(u64::MAX)?;
        mcds_core::backend::check_item_size(
            &longest,
            series.item_len(),
            series.scope.store().item_size_limit(),
        )?;
        Ok(series)
    }

    /// Whether reads ask the store if it lost items since the slots they
    /// return could first be counted (default `true`; see the
    /// [type docs](PackedSeries), "Retention"). `false` reads what the
    /// servers hold without asking: a slot that lost counts may then read
    /// short, or 0, without an error.
    pub fn with_loss_check(mut self, check: bool) -> PackedSeries {
        self.loss_check = check;
        self
    }

    /// The most the clocks of the series' clients differ by (default 60
    /// s): as [`TimeSeries::with_max_clock_skew`](crate::TimeSeries::with_max_clock_skew).
    pub fn with_max_clock_skew(mut self, skew: Duration) -> PackedSeries {
        self.skew_ms = u64::try_from(skew.as_millis()).unwrap_or(u64::MAX);
        self
    }

    fn key(&self, period: u64) -> Result<Key> {
        self.scope.key(
            "packed",
            &self.name,
            format_args!("{}:{}:{period}", self.slot_ms, self.slots),
        )
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    fn item_len(&self) -> usize {
        HEADER + self.slots as usize * self.width.bytes()
    }

    fn period_ms(&self) -> u64 {
        self.slot_ms * self.slots
    }

    /// The slots of a period item, or why the bytes are not one.
    pub(crate) fn check<'b>(&self, bytes: &'b [u8]) -> std::result::Result<&'b [u8], String> {
        match bytes {
            [MAGIC, width, slots @ ..] if usize::from(*width) == self.width.bytes() => {
                if bytes.len() == self.item_len() {
                    Ok(slots)
                } else {
                    Err(format!(
                        "a packed period item of {} slots of {} bytes is {} bytes; found {}",
                        self.slots,
                        self.width.bytes(),
                        self.item_len(),
                        bytes.len()
                    ))
                }
            }
            [MAGIC, width, ..] => Err(format!(
                "the item holds slots of {width} bytes, this series {} (reopened with another width?)",
                self.width.bytes()
            )),
            _ => Err("not a packed period item (no 'P' header)".into()),
        }
    }

    /// Slot `i` (within its period) of checked slot bytes.
    pub(crate) fn slot_value(&self, slots: &[u8], i: usize) -> u32 {
        let w = self.width.bytes();
        slots[i * w..(i + 1) * w]
            .iter()
            .rev()
            .fold(0, |v, &b| (v << 8) | u32::from(b))
    }

    /// A new period item: the header, every slot 0.
    pub(crate) fn fresh_item(&self) -> Vec<u8> {
        let mut fresh = vec![0; self.item_len()];
        fresh[..HEADER].copy_from_slice(&[MAGIC, self.width.bytes() as u8]);
        fresh
    }

    /// Add `delta` to slot `i` of a checked period item, saturating at the
    /// width's maximum: the slot's old and new values.
    pub(crate) fn add(&self, item: &mut [u8], i: usize, delta: u32) -> (u32, u32) {
        let w = self.width.bytes();
        let old = self.slot_value(&item[HEADER..], i);
        let new = old.saturating_add(delta).min(self.width.max_value());
        let at = HEADER + i * w;
        item[at..at + w].copy_from_slice(&new.to_le_bytes()[..w]);
        (old, new)
    }

    /// Add `delta` to the slot containing `ts_ms` (Unix ms), saturating at
    /// the width's maximum; the slot's new value. 2 round trips (1 when the
    /// slot does not change); see the [type docs](PackedSeries).
    #[blocking_and_async(pub)]
    async fn incr_io(&self, io: Io, ts_ms: u64, delta: u32) -> Result<u32> {
        let index = ts_ms / self.slot_ms;
        let (period, i) = (index / self.slots, (index % self.slots) as usize);
        let end = period.saturating_add(1).saturating_mul(self.period_ms());
        let now = self.scope.clock().now_ms();
        refuse_early("packed series", &self.name, ts_ms, now, self.skew_ms)?;
        let Some(ttl) = ttl_for(end, self.retention_ms, now, self.skew_ms) else {
            return Err(Error::InvalidArgument(format!(
                "time {ts_ms} ms is past the retention of packed series {} ({} ms after its period); count only recent slots",
                self.name, self.retention_ms
            )));
        };
        let key = self.key(period)?;
        let mut failure = None;
        let mut value = 0;
        // The closure is `Send`, as `Access::update` asks, so that the async
        // future is.
        self.access(io)
            .update(&key, ttl, MAX_ATTEMPTS, &mut |current| {
                let mut bytes = match current {
                    None => self.fresh_item(),
                    Some(bytes) => match self.check(bytes) {
                        Ok(_) => bytes.to_vec(),
                        Err(reason) => {
                            failure = Some(reason);
                            return None;
                        }
                    },
                };
                let (old, new) = self.add(&mut bytes, i, delta);
                value = new;
                if old == new {
                    return None; // a delta of 0, a saturated slot: no write
                }
                Some(bytes)
            })
            .await?;
        if let Some(reason) = failure {
            return Err(corrupt(&key, reason));
        }
        Ok(value)
    }

    /// [`incr`](Self::incr) the slot of now, by the scope's clock.
    #[blocking_and_async(pub)]
    async fn incr_now_io(&self, io: Io, delta: u32) -> Result<u32> {
        self.incr_io(io, self.scope.clock().now_ms(), delta).await
    }

    /// The count of the slot containing `ts_ms`: 1 round trip (0 when past
    /// retention, without reading).
    #[blocking_and_async(pub)]
    async fn get_io(&self, io: Io, ts_ms: u64) -> Result<u32> {
        Ok(self
            .range_io(io, ts_ms, ts_ms)
            .await?
            .first()
            .map_or(0, |s| s.value))
    }

    /// Every slot from the one containing `from_ms` to the one containing
    /// `to_ms` (Unix ms, inclusive) whose period is within retention, oldest
    /// first, zeros included: one `get` per period in one `get_multi`
    /// (1 round trip per server), then the loss check of each server read
    /// from (2 more each; see the [type docs](PackedSeries)). At most [`MAX_RANGE_SLOTS`] slots per
    /// call, else [`Error::InvalidArgument`].
    #[blocking_and_async(pub)]
    async fn range_io(&self, io: Io, from_ms: u64, to_ms: u64) -> Result<Vec<Slot>> {
        let now = self.scope.clock().now_ms();
        let oldest = first_readable(self.period_ms(), self.retention_ms, now);
        let first = (from_ms / self.slot_ms).max(oldest.saturating_mul(self.slots));
        let last = to_ms / self.slot_ms;
        if first > last {
            return Ok(Vec::new());
        }
        let n = (last - first).saturating_add(1);
        if n > MAX_RANGE_SLOTS {
            return Err(Error::InvalidArgument(format!(
                "this range holds {n} slots within retention; read at most {MAX_RANGE_SLOTS} per call — split the range"
            )));
        }
        let periods = first / self.slots..=last / self.slots;
        let keys: Vec<Key> = periods
            .clone()
            .map(|p| self.key(p))
            .collect::<Result<_>>()?;
        let access = self.access(io);
        let items = access.get_multi(&keys).await?;
        let mut out = Vec::with_capacity(n as usize);
        for ((period, key), item) in periods.clone().zip(&keys).zip(items) {
            let slots = match &item {
                None => None,
                Some(item) => Some(self.check(&item.value).map_err(|r| corrupt(key, r))?),
            };
            let base = period * self.slots;
            for index in first.max(base)..=last.min(base.saturating_add(self.slots - 1)) {
                let value = slots.map_or(0, |s| self.slot_value(s, (index - base) as usize));
                out.push(Slot {
                    start_ms: index * self.slot_ms,
                    value,
                });
            }
        }
        // Bytes no increment wrote are Corrupt first; then whether what was
        // read can be vouched for.
        if self.loss_check {
            // Each period from its first slot in the range: a period item
            // lost and re-created holds the counts since, complete for the
            // slots that start after the loss.
            let checked: Vec<Read<'_>> = periods
                .clone()
                .zip(&keys)
                .map(|(period, key)| {
                    let start_ms = first.max(period * self.slots) * self.slot_ms;
                    Read {
                        key,
                        start_ms,
                        what: format!(
                            "the slot from {start_ms} ms of packed series {} (period {period})",
                            self.name
                        ),
                    }
                })
                .collect();
            check_retained(access, "PackedSeries read", &checked, self.skew_ms).await?;
        }
        Ok(out)
    }

    /// The sum of the slots of the range (as in [`range`](Self::range)).
    #[blocking_and_async(pub)]
    async fn sum_io(&self, io: Io, from_ms: u64, to_ms: u64) -> Result<u64> {
        Ok(self
            .range_io(io, from_ms, to_ms)
            .await?
            .iter()
            .map(|s| u64::from(s.value))
            .sum())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use mcds_core::{MemoryStore, Store, Ttl};

    #[test]
    fn garbage_items_are_corrupt_never_a_panic() {
        let store = Arc::new(MemoryStore::new());
        let series = PackedSeries::new(
            store.clone(),
            "g",
            Duration::from_secs(60),
            4,
            SlotWidth::U16,
            Duration::from_secs(86_400),
        )
        .unwrap();
        let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
        let key = series.key(now / series.period_ms()).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for round in 0..500 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 16) as usize;
            let mut garbage: Vec<u8> = (0..len).map(|k| (state >> (k % 8 * 8)) as u8).collect();
            if round % 2 == 0 && len >= 2 {
                garbage[0] = MAGIC;
                garbage[1] = [1, 2, 4][round % 3];
            }
            store.set(&key, &garbage, Ttl::Never).unwrap();
            let read = series.range(now, now);
            let bumped = series.incr(now, 1);
            if garbage.len() == series.item_len() && garbage[..2] == [MAGIC, 2] {
                read.unwrap();
                bumped.unwrap();
            } else {
                assert!(matches!(read, Err(Error::Corrupt { .. })), "{read:?}");
                assert!(matches!(bumped, Err(Error::Corrupt { .. })), "{bumped:?}");
            }
        }
    }

    #[test]
    fn slots_are_little_endian_at_every_width() {
        for (width, values) in [
            (SlotWidth::U8, [7u32, 255]),
            (SlotWidth::U16, [258, 65_535]),
            (SlotWidth::U32, [70_000, u32::MAX]),
        ] {
            let series = PackedSeries::new(
                Arc::new(MemoryStore::new()),
                "w",
                Duration::from_secs(1),
                3,
                width,
                Duration::from_secs(60),
            )
            .unwrap();
            let mut bytes = vec![MAGIC, width.bytes() as u8];
            for v in [0, values[0], values[1]] {
                bytes.extend_from_slice(&v.to_le_bytes()[..width.bytes()]);
            }
            let slots = series.check(&bytes).unwrap();
            assert_eq!(series.slot_value(slots, 1), values[0]);
            assert_eq!(series.slot_value(slots, 2), values[1]);
        }
    }
}
