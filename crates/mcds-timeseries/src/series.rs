//! [`TimeSeries`]: count, sum, min and max of integer samples per time
//! bucket, at several resolutions, on period-numbered keys.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Access, Backoff, CasOutcome, Error, Io, Item, Key, Op, Reply, Result, Scope, Ttl, block_on,
};

use crate::period::{SLACK_MS, corrupt, first_readable, ttl_for, whole_ms};

/// The most resolutions one series records at.
pub const MAX_RESOLUTIONS: usize = 8;

/// The most buckets one read ([`TimeSeries::range`], the aggregates,
/// [`TimeSeries::union`], [`TimeSeries::intersection`]) reads, over all its
/// series: each bucket is up to 6 keys of one `get_multi`, so this bounds a
/// read at 60 000 keys.
pub const MAX_RANGE_BUCKETS: u64 = 10_000;

/// The most samples one bucket holds exactly: its sums are kept in 32-bit
/// halves (see [`TimeSeries`]), which cannot wrap below this many samples.
/// A bucket with more is reported as [`Error::Corrupt`] on read.
pub const MAX_SAMPLES_PER_BUCKET: u64 = 1 << 31;

/// CAS attempts of the min/max update before [`Error::Conflict`].
const MAX_ATTEMPTS: u32 = 64;

/// How many times a read takes another look at buckets whose parts
/// disagree, before it believes them (a record in flight settles in far
/// less than the backoff between looks).
const REREADS: u32 = 2;

/// A bucket ended this long ago is *closed*: a record still in flight to it
/// is a late one. Parts of a closed bucket that still disagree after the
/// rereads are an error; those of an open bucket are a record in flight.
const GRACE_MS: u64 = SLACK_MS;

/// The magic and version of the min/max item: `x2` carries the bucket's
/// generation.
const EXTREMES_MAGIC: [u8; 2] = *b"x2";

/// The length of the min/max item: magic, min, max (little-endian `i64`),
/// generation (little-endian `u32`).
pub const EXTREMES_LEN: usize = 22;

/// The min/max item of the first format (magic `x1`, no generation), read
/// still: its bucket's generation is not checked.
const EXTREMES_V1_MAGIC: [u8; 2] = *b"x1";

/// The length of an `x1` min/max item.
pub const EXTREMES_V1_LEN: usize = 18;

/// A count item holds `generation · 2^32 + samples`: the samples in its low
/// 32 bits (at most [`MAX_SAMPLES_PER_BUCKET`] = 2^31), a random generation
/// of 1 to 2^31 − 1 above them, so the whole stays below 2^63 (memcached
/// misreads counters of 2^63 or more).
pub const GENERATION_SHIFT: u32 = 32;

/// A random generation for a count this record may create: 1 to 2^31 − 1.
fn new_generation() -> u64 {
    mcds_core::random_u64() % ((1 << 31) - 1) + 1
}

/// A count item's (samples, generation). Generation 0 is a count written
/// before generations were (samples only).
fn split_count(value: u64) -> (u64, u32) {
    (
        value & 0xffff_ffff,
        u32::try_from(value >> GENERATION_SHIFT).unwrap_or(u32::MAX),
    )
}

/// One resolution of a [`TimeSeries`]: buckets of `step`, kept for
/// `retention` after each bucket ends.
///
/// ```
/// use std::time::Duration;
/// use mcds_timeseries::Resolution;
///
/// let per_minute = Resolution::new(Duration::from_secs(60), Duration::from_secs(86_400))?;
/// assert_eq!(per_minute.step(), Duration::from_secs(60));
/// assert!(Resolution::new(Duration::from_secs(60), Duration::from_secs(1)).is_err());
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolution {
    step_ms: u64,
    retention_ms: u64,
}

impl Resolution {
    /// Buckets `step` long (whole milliseconds, at least 1 ms), readable for
    /// `retention` (at least one step, at most 100 years) after each
    /// bucket's end. Retention is what TTLs are for: they only free memory.
    pub fn new(step: Duration, retention: Duration) -> Result<Resolution> {
        let step_ms = whole_ms("a time series step", step)?;
        let retention_ms = whole_ms("a time series retention", retention)?;
        if retention_ms < step_ms {
            return Err(Error::InvalidArgument(format!(
                "a time series keeps its buckets of {step:?} for at least one step; got a retention of {retention:?} — raise it"
            )));
        }
        Ok(Resolution {
            step_ms,
            retention_ms,
        })
    }

    /// The bucket length.
    pub fn step(&self) -> Duration {
        Duration::from_millis(self.step_ms)
    }

    /// How long a bucket stays readable after its end.
    pub fn retention(&self) -> Duration {
        Duration::from_millis(self.retention_ms)
    }

    fn end_ms(&self, bucket: u64) -> u64 {
        bucket.saturating_add(1).saturating_mul(self.step_ms)
    }
}

/// The aggregates of at least one sample: how many, their exact sum, the
/// smallest and the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// How many samples.
    pub count: u64,
    /// Their sum, exact (an `i128` cannot overflow: a bucket holds at most
    /// [`MAX_SAMPLES_PER_BUCKET`] samples of at most 2^63 each, a read at
    /// most [`MAX_RANGE_BUCKETS`] buckets).
    pub sum: i128,
    /// The smallest sample.
    pub min: i64,
    /// The largest sample.
    pub max: i64,
}

impl Stats {
    /// The aggregates of the one sample `value`.
    pub fn of(value: i64) -> Stats {
        Stats {
            count: 1,
            sum: i128::from(value),
            min: value,
            max: value,
        }
    }

    /// The mean, `sum / count`, as a float (rounded to `f64`; NaN for a
    /// count of 0, which no read returns).
    pub fn avg(&self) -> f64 {
        self.sum as f64 / self.count as f64
    }

    /// Add `other`'s samples to these: counts and sums add, min and max
    /// widen. Commutative and associative, so merging buckets or series in
    /// any order gives the same result.
    pub fn merge(&mut self, other: &Stats) {
        self.count = self.count.saturating_add(other.count);
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// One non-empty bucket of a read: where it starts and its aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket's start, Unix milliseconds (a multiple of the step).
    pub start_ms: u64,
    /// Its samples' aggregates.
    pub stats: Stats,
}

/// The items of one bucket: a count, the sums' halves, the min/max item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Count,
    PosLo,
    PosHi,
    NegLo,
    NegHi,
    Extremes,
}

pub(crate) const PARTS: [Part; 6] = [
    Part::Count,
    Part::PosLo,
    Part::PosHi,
    Part::NegLo,
    Part::NegHi,
    Part::Extremes,
];

impl Part {
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Part::Count => "n",
            Part::PosLo => "p0",
            Part::PosHi => "p1",
            Part::NegLo => "m0",
            Part::NegHi => "m1",
            Part::Extremes => "x",
        }
    }
}

/// The sum counters a sample adds to and by how much: its magnitude's low
/// 32 bits to `p0` (`m0` when negative) and the rest to `p1` (`m1`). A
/// record writes only the halves that are not 0.
pub(crate) fn sum_halves(value: i64) -> [(Part, u64); 2] {
    let magnitude = value.unsigned_abs();
    let (lo, hi) = (magnitude & 0xffff_ffff, magnitude >> 32);
    if value < 0 {
        [(Part::NegLo, lo), (Part::NegHi, hi)]
    } else {
        [(Part::PosLo, lo), (Part::PosHi, hi)]
    }
}

/// What a bucket's min/max item holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extremes {
    /// The smallest sample.
    pub min: i64,
    /// The largest sample.
    pub max: i64,
    /// The generation of the bucket's count when the item was created
    /// (`None` for an `x1` item, which predates generations).
    pub generation: Option<u32>,
}

/// The min/max item's bytes.
pub fn encode_extremes(min: i64, max: i64, generation: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(EXTREMES_LEN);
    bytes.extend_from_slice(&EXTREMES_MAGIC);
    bytes.extend_from_slice(&min.to_le_bytes());
    bytes.extend_from_slice(&max.to_le_bytes());
    bytes.extend_from_slice(&generation.to_le_bytes());
    bytes
}

/// The min/max item's fields from its bytes, or why they are not that.
pub fn decode_extremes(bytes: &[u8]) -> std::result::Result<Extremes, String> {
    let wrong_length = || {
        format!(
            "a time series min/max item is {EXTREMES_LEN} bytes ({EXTREMES_V1_LEN} in its first format); found {}",
            bytes.len()
        )
    };
    let Some((magic, rest)) = bytes.split_first_chunk::<2>() else {
        return Err(wrong_length());
    };
    let (numbers, generation) = match (*magic, rest.len()) {
        (EXTREMES_MAGIC, 20) => rest.split_at(16),
        (EXTREMES_V1_MAGIC, 16) => (rest, &[][..]),
        (EXTREMES_MAGIC | EXTREMES_V1_MAGIC, _) => return Err(wrong_length()),
        _ => {
            return Err(format!(
                "a time series min/max item starts with {EXTREMES_MAGIC:?}; found {magic:?}"
            ));
        }
    };
    let (min, max) = numbers.split_at(8);
    let min = i64::from_le_bytes(min.try_into().unwrap_or_default());
    let max = i64::from_le_bytes(max.try_into().unwrap_or_default());
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    let generation = <[u8; 4]>::try_from(generation).ok().map(u32::from_le_bytes);
    if generation == Some(0) {
        return Err("its generation is 0, which no record writes".into());
    }
    Ok(Extremes {
        min,
        max,
        generation,
    })
}

/// What one bucket's items say.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// No sample.
    Empty,
    /// Consistent aggregates.
    Stats(Stats),
    /// The parts disagree: a record in flight, or lost or partial data.
    Suspect {
        /// How they disagree.
        reason: String,
        /// What can be shown of an open bucket.
        as_read: Option<Stats>,
    },
    /// The parts can never agree again: the count was re-created after
    /// the min/max item (their generations differ). No record in flight
    /// looks like this, so it is an error whether or not the bucket is
    /// closed.
    Lost(String),
}

/// Decode a bucket from its [`PARTS`]' items (`keys` for messages).
/// Bytes that no record writes are [`Error::Corrupt`].
pub(crate) fn decode_bucket(keys: &[Key], items: &[Option<Item>]) -> Result<Decoded> {
    let counter = |part: Part| -> Result<u64> {
        let i = part as usize;
        match &items[i] {
            None => Ok(0),
            Some(item) => item.counter().ok_or_else(|| {
                corrupt(
                    &keys[i],
                    format!(
                        "expected a decimal counter, found {} bytes that are not one",
                        item.value.len()
                    ),
                )
            }),
        }
    };
    let (count, generation) = split_count(counter(Part::Count)?);
    let (p0, p1, m0, m1) = (
        counter(Part::PosLo)?,
        counter(Part::PosHi)?,
        counter(Part::NegLo)?,
        counter(Part::NegHi)?,
    );
    let x = Part::Extremes as usize;
    let extremes = match &items[x] {
        None => None,
        Some(item) => Some(decode_extremes(&item.value).map_err(|r| corrupt(&keys[x], r))?),
    };
    if count > MAX_SAMPLES_PER_BUCKET {
        return Err(corrupt(
            &keys[Part::Count as usize],
            format!(
                "the bucket holds {count} samples, more than 2^31: its sum halves may have reached 2^63, which memcached misreads — record at a finer resolution"
            ),
        ));
    }
    if count == 0 {
        return Ok(if items.iter().all(Option::is_none) {
            Decoded::Empty
        } else {
            Decoded::Suspect {
                reason: "it has sums or a min/max but no count".into(),
                as_read: None,
            }
        });
    }
    let Some(Extremes {
        min,
        max,
        generation: born,
    }) = extremes
    else {
        return Ok(Decoded::Suspect {
            reason: format!("it counts {count} samples but has no min/max"),
            as_read: None,
        });
    };
    // The min/max item takes the generation of the count it was created
    // beside, and keeps it; a count re-created since (memcached evicted or
    // lost it, and a later record made a new one) has another. Its samples
    // and the sums' are then short by what was lost, which no bound check
    // is sure to see: an eviction of a bucket still being written.
    if let Some(born) = born
        && generation != 0
        && born != generation
    {
        return Ok(Decoded::Lost(format!(
            "its count (generation {generation}) was re-created after its min/max item (generation {born}): memcached evicted or lost the count while the bucket was written, so it holds only the {count} samples recorded since"
        )));
    }
    let half = |lo: u64, hi: u64| (i128::from(hi) << 32) + i128::from(lo);
    let stats = Stats {
        count,
        sum: half(p0, p1) - half(m0, m1),
        min,
        max,
    };
    // The min and the max are each one of the samples, and the others lie
    // between them: the sum is at least max + (n−1)·min and at most
    // min + (n−1)·max (min = max = sum for one sample). A count or sum
    // half that eviction re-created since falls outside more often than
    // with the looser n·[min, max].
    let rest = i128::from(count) - 1;
    let (lower, upper) = (
        i128::from(max) + rest * i128::from(min),
        i128::from(min) + rest * i128::from(max),
    );
    if stats.sum < lower || stats.sum > upper || (count == 1 && min != max) {
        return Ok(Decoded::Suspect {
            reason: format!(
                "its sum {} of {count} samples is outside [max + (count−1)·min, min + (count−1)·max] = [{lower}, {upper}]",
                stats.sum,
            ),
            as_read: Some(stats),
        });
    }
    Ok(Decoded::Stats(stats))
}

/// A record's error: an op's "not applied, retrying is safe" error
/// ([`Error::is_retryable`]) is not the record's when other ops of it were
/// applied (on a pool, the servers that answered stored their parts), so it
/// becomes [`Error::Ambiguous`]: a retry may count the sample twice.
fn partial(e: Error, applied: bool, key: &Key) -> Error {
    if !applied || !e.is_retryable() {
        return e;
    }
    let server = match &e {
        Error::Io { server, .. }
        | Error::Timeout { server, .. }
        | Error::ServerDown { server, .. } => server.clone(),
        _ => String::new(),
    };
    Error::Ambiguous {
        key: key.display(),
        reason: format!(
            "the record was applied in part: other servers stored their share of it, and {} did not take its own",
            if server.is_empty() {
                "one"
            } else {
                server.as_str()
            }
        ),
        server,
    }
}

/// Run a batch and check that the backend answered every op.
async fn run(access: Access<'_>, ops: &[Op<'_>]) -> Result<Vec<Result<Reply>>> {
    let replies = access.pipeline(ops).await;
    if replies.len() != ops.len() {
        return Err(Error::Internal(format!(
            "the {} backend returned {} results for a batch of {} ops",
            access.store().backend_name(),
            replies.len(),
            ops.len()
        )));
    }
    Ok(replies)
}

/// Keep the first error of several.
fn keep_first(failure: &mut Option<Error>, e: Error) {
    failure.get_or_insert(e);
}

/// The buckets of one resolution of one series a read covers.
#[derive(Debug)]
struct Plan<'a> {
    series: &'a TimeSeries,
    resolution: Resolution,
    now_ms: u64,
    first: u64,
    last: u64,
}

impl Plan<'_> {
    fn buckets(&self) -> impl Iterator<Item = u64> + use<> {
        self.first..=self.last
    }

    fn len(&self) -> u64 {
        if self.first > self.last {
            0
        } else {
            (self.last - self.first).saturating_add(1)
        }
    }

    fn keys(&self, bucket: u64) -> Result<Vec<Key>> {
        PARTS
            .iter()
            .map(|&part| self.series.key(self.resolution, bucket, part))
            .collect()
    }

    fn closed(&self, bucket: u64) -> bool {
        self.resolution.end_ms(bucket).saturating_add(GRACE_MS) <= self.now_ms
    }
}

/// The buckets of one resolution a record writes to.
struct Target {
    count: Key,
    lo: Option<Key>,
    hi: Option<Key>,
    extremes: Key,
    ttl: Ttl,
}

/// A time series of integer samples: per time bucket, the count, exact
/// sum, min and max of the samples recorded in it, at one or more
/// resolutions (say 1 s kept for an hour, 1 min kept for a day, 1 h kept
/// for a month), all written by one [`record`](Self::record).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::{ManualClock, MemoryStore, Scope};
/// use mcds_timeseries::{Resolution, TimeSeries};
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let scope = Scope::from(store).with_clock(Arc::new(clock.clone()));
/// let (second, minute) = (Duration::from_secs(1), Duration::from_secs(60));
/// let latency = TimeSeries::new(&scope, "latency-ms", &[
///     Resolution::new(second, Duration::from_secs(3600))?,
///     Resolution::new(minute, Duration::from_secs(86_400))?,
/// ])?;
/// let t0 = 1_800_000_000_000;
/// latency.record(t0, 12)?;
/// latency.record(t0 + 500, -3)?; // same second
/// latency.record(t0 + 1_000, 40)?; // next second, same minute
///
/// let seconds = latency.range(t0, t0 + 59_999, second)?;
/// assert_eq!(seconds.len(), 2);
/// assert_eq!((seconds[0].stats.count, seconds[0].stats.sum), (2, 9));
/// let minute_stats = latency.aggregate(t0, t0, minute)?.unwrap();
/// assert_eq!((minute_stats.count, minute_stats.sum), (3, 49));
/// assert_eq!((minute_stats.min, minute_stats.max), (-3, 40));
/// assert_eq!(latency.avg(t0, t0 + 59_999, second)?, Some(49.0 / 3.0));
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// ## Numbers
///
/// Samples are `i64`. For fractions, record a fixed-point value with a scale
/// of your choice (microseconds rather than seconds, cents rather than
/// dollars) and divide on read. Sums are exact as `i128`.
///
/// memcached's counters are unsigned 64-bit numbers (incr wraps at 2^64,
/// decr stops at 0), so a bucket's sum is kept in four counters: positive
/// samples add their magnitude's low 32 bits to `p0` and the rest (at most
/// 2^31) to `p1`, negative ones to `m0` and `m1`, and the sum is
/// `(p1·2^32 + p0) − (m1·2^32 + m0)`. Each increment of a half is below
/// 2^32, so no half reaches 2^63 before [`MAX_SAMPLES_PER_BUCKET`] (2^31)
/// samples in one bucket, whatever their values (memcached misreads
/// counters of 2^63 or more: its check for a minus sign reads past the
/// digits); a bucket with more is reported as corrupt rather than summed
/// wrongly. A zero half is not written, so a
/// sample whose magnitude is below 2^32 touches one sum counter.
///
/// ## Keys and retention
///
/// Bucket `b` of a resolution of step `s` ms covers `[b·s, (b+1)·s)` (Unix
/// ms); its items are `<prefix>ts:<name>:<s>:<b>:<part>` with parts `n`
/// (count), `p0`, `p1`, `m0`, `m1` (sums) and `x` (min/max: 22 bytes, the
/// magic `x2`, two little-endian `i64` and the bucket's generation, a
/// little-endian `u32`). The count item holds `generation · 2^32 + count`:
/// a record that creates it gives it a random generation (1 to 2^31 − 1),
/// the record that creates the min/max item copies the generation its
/// count increment returned, and neither ever changes it (see "detecting
/// lost data" below). A key is never reused.
///
/// A bucket is readable for the resolution's retention after its end, by
/// the reader's clock; older buckets are not read at all. Every write gives
/// the item a TTL reaching 60 s past that (slack for memcached's
/// one-second clock and for clock skew between clients), so a read never
/// depends on *when* memcached expires an item: TTLs only free memory. A
/// sample whose bucket is already past retention is not written at that
/// resolution (a read would never see it).
///
/// ## Record, and what it costs
///
/// [`record`](Self::record) sends one pipelined batch: for each resolution,
/// `incr_or_init` of the count and of the one or two sum counters the
/// sample touches, and a `get` of the min/max item. That is **1 round trip
/// per server** it touches (on a pool the servers' shares are sent at once:
/// one round trip of latency), for any number of resolutions, whenever the
/// sample lies within every bucket's current [min, max] — the common case
/// once a bucket has a few samples. When the sample widens the min or max
/// of some bucket (always for a bucket's first sample), a second batch
/// writes those min/max items by CAS (`add` when new): **2 round trips**.
/// Each CAS lost to a concurrent writer costs 2 more (a `get` of the items
/// that lost, then the CAS), with backoff, up to 64 attempts, then
/// [`Error::Conflict`]. Worst case on a hot bucket whose extremes keep
/// moving: 2 + 2 per lost race; amortized, a little over 1.
///
/// ## Concurrency
///
/// Counts and sums are `incr_or_init`: exact under any interleaving of
/// writers, threads or processes. Min and max are a CAS read-modify-write
/// whose merge (a wider interval) commutes, so no concurrent sample is lost
/// from them, and a retry is always safe.
///
/// ## Failures
///
/// A bucket's parts are separate items and a batch is not a transaction.
/// A record that fails partway returns the first error, after finishing
/// what it can (it still widens the min/max of every resolution whose
/// min/max item it could read).
/// What may have been applied: any of the sample's increments and min/max
/// widenings, at any of the resolutions — the ones whose op failed with
/// [`Error::Ambiguous`] perhaps, the ones with `Io`/`Timeout`/`ServerDown`
/// not, the others yes. Retrying such a record may count the sample twice
/// where it was applied.
///
/// ## Reads, and detecting lost data
///
/// [`range`](Self::range) reads every part of every bucket in the range in
/// one `get_multi`: **1 round trip per server**. The aggregates over a
/// range ([`aggregate`](Self::aggregate), [`count`](Self::count),
/// [`sum`](Self::sum), [`avg`](Self::avg), [`min`](Self::min),
/// [`max`](Self::max)) and the merges of several series
/// ([`union`](Self::union), [`intersection`](Self::intersection)) are one
/// such read too. A read covers at most [`MAX_RANGE_BUCKETS`] buckets
/// within retention, else [`Error::InvalidArgument`].
///
/// **Lost items are detected only in part: a restart or an eviction can
/// make a read return a wrong count, sum, min or max without an error.**
/// memcached is a cache, and a bucket is six items that it loses one by
/// one: on a pool they live on different servers; on one server they sit
/// in different slab classes (the sums are smaller items than the count
/// and the min/max item), each evicted on its own, and memcached's
/// increment does not bump an item in its LRU while every record's `get`
/// of the min/max item does. What a read checks:
///
/// * the parts against each other: a count with no min/max, sums or
///   min/max without a count, or a sum outside `[max + (count−1)·min,
///   min + (count−1)·max]`. Those are also the states a record in flight
///   passes through, so a read takes up to two more looks at such buckets
///   (1 round trip each, after a backoff of at most 1 ms, then 2 ms). A
///   bucket that still disagrees is an [`Error::Corrupt`] when it is
///   *closed* (ended 60 s ago or more: no record should be in flight); an
///   open bucket is shown as read (omitted when it has no count or no
///   min/max yet), which after a loss can be impossible stats;
/// * the count's *generation*: the min/max item keeps the generation of
///   the count it was created beside, a re-created count gets a new one,
///   and a bucket whose two generations differ is an [`Error::Corrupt`],
///   open or closed (no record in flight looks like that; the chance that
///   a new generation repeats the old is 2^−31). That catches the count
///   evicted from a bucket still being written (an adversarial review read
///   count 23, sum 22 for a true 151 and 100 before generations; with
///   them, 8 of 8 busy buckets amid filler traffic read as `Corrupt`).
///
/// What still escapes, each shown by an ignored test in
/// `tests/review.rs`: sum counters lost alone (a short sum within the
/// bounds); the count and the min/max item lost together while the sums
/// survive (the bucket mixes old sums with new counts); a server of a pool
/// restarted under writers (a review's run: of 36 live buckets, 11 read
/// exactly, 8 as `Corrupt`, 17 wrong without an error); a record that
/// failed partway (it returned the error; the bucket it tore may read as
/// `Ok`). Give time series servers the memory they need and keep an
/// authoritative copy elsewhere. Under `-M`, a record refused for lack of
/// memory is an error and may be partly applied (its count, not its
/// min/max), as any failed record; nothing acknowledged is deleted.
/// Records into a bucket that is already closed (a backfill more
/// than 60 s late) race reads of it: a read between a record's two steps
/// may report `Corrupt` for a healthy bucket. A bucket written to by more
/// than 2^31 samples is an `Error::Corrupt` too. Bytes no record writes (another
/// program's) are `Error::Corrupt`, never a panic or a misread.
///
/// A read concurrent with records is not a snapshot: it may see some of a
/// record in flight (its count but not yet its sum) in the open buckets.
#[derive(Clone, Debug)]
pub struct TimeSeries {
    scope: Scope,
    name: String,
    resolutions: Vec<Resolution>,
}

impl TimeSeries {
    /// The series `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix and the clock that [`record_now`](Self::record_now) and
    /// retention read), recording at each of `resolutions` (1 to
    /// [`MAX_RESOLUTIONS`], distinct steps). Every process recording into
    /// or reading the series must use the same resolutions.
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        resolutions: &[Resolution],
    ) -> Result<TimeSeries> {
        if resolutions.is_empty() || resolutions.len() > MAX_RESOLUTIONS {
            return Err(Error::InvalidArgument(format!(
                "a time series records at 1 to {MAX_RESOLUTIONS} resolutions; got {}",
                resolutions.len()
            )));
        }
        let mut sorted = resolutions.to_vec();
        sorted.sort_by_key(|r| r.step_ms);
        if let Some(w) = sorted.windows(2).find(|w| w[0].step_ms == w[1].step_ms) {
            return Err(Error::InvalidArgument(format!(
                "a time series has one retention per step; {:?} is given twice",
                w[0].step()
            )));
        }
        let series = TimeSeries {
            scope: scope.into(),
            name: name.to_string(),
            resolutions: sorted,
        };
        for &r in &series.resolutions {
            series.key(r, u64::MAX, Part::PosLo)?; // the longest key fits
        }
        Ok(series)
    }

    /// The series' name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its resolutions, finest first.
    pub fn resolutions(&self) -> &[Resolution] {
        &self.resolutions
    }

    fn key(&self, r: Resolution, bucket: u64, part: Part) -> Result<Key> {
        self.scope.key(
            "ts",
            &self.name,
            format_args!("{}:{bucket}:{}", r.step_ms, part.tag()),
        )
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    fn resolution(&self, step: Duration) -> Result<Resolution> {
        self.resolutions
            .iter()
            .find(|r| r.step() == step)
            .copied()
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "time series {} does not record at a step of {step:?}; its steps are {:?}",
                    self.name,
                    self.resolutions
                        .iter()
                        .map(|r| r.step())
                        .collect::<Vec<_>>()
                ))
            })
    }

    /// Record `value` at `ts_ms` (Unix milliseconds) at every resolution
    /// whose bucket is still within retention: 1 round trip per server when
    /// no bucket's min or max changes, 2 when some does, 2 more per lost
    /// CAS race (see the [type docs](TimeSeries) for the protocol and for
    /// what a failure may have applied).
    pub fn record(&self, ts_ms: u64, value: i64) -> Result<()> {
        block_on(self.record_io(Io::Blocking, ts_ms, value))
    }

    /// [`record`](TimeSeries::record) without blocking the thread.
    pub async fn record_async(&self, ts_ms: u64, value: i64) -> Result<()> {
        self.record_io(Io::Async, ts_ms, value).await
    }

    async fn record_io(&self, io: Io, ts_ms: u64, value: i64) -> Result<()> {
        let now = self.scope.clock().now_ms();
        let [(lo_part, lo), (hi_part, hi)] = sum_halves(value);
        let mut targets = Vec::with_capacity(self.resolutions.len());
        for &r in &self.resolutions {
            let bucket = ts_ms / r.step_ms;
            let Some(ttl) = ttl_for(r.end_ms(bucket), r.retention_ms, now) else {
                continue;
            };
            targets.push(Target {
                count: self.key(r, bucket, Part::Count)?,
                lo: (lo > 0).then(|| self.key(r, bucket, lo_part)).transpose()?,
                hi: (hi > 0).then(|| self.key(r, bucket, hi_part)).transpose()?,
                extremes: self.key(r, bucket, Part::Extremes)?,
                ttl,
            });
        }
        if targets.is_empty() {
            return Ok(()); // past retention at every resolution
        }
        // The min/max update needs CAS: refused before the counters are
        // touched, not half applied (memcached -C, a proxy).
        // Every target's: on a pool, each min/max item may live on another
        // server, and one of them may have been started with -C.
        let access = self.access(io);
        let mut cas_less = false;
        for t in &targets {
            cas_less |= !access.supports_cas(&t.extremes).await?;
        }
        if cas_less {
            return Err(Error::Unsupported {
                op: "TimeSeries::record",
                backend: access.store().backend_name(),
                hint: "a time series widens min/max by CAS: use a memcached started without -C, connected directly (not through a proxy)",
            });
        }
        let mut ops = Vec::with_capacity(targets.len() * 4);
        let incr = |key, delta, ttl| Op::IncrOrInit {
            key,
            delta,
            initial: delta,
            ttl,
        };
        // A count this record creates starts at generation · 2^32 + 1.
        let generation = new_generation() << GENERATION_SHIFT;
        for t in &targets {
            ops.push(Op::IncrOrInit {
                key: &t.count,
                delta: 1,
                initial: generation | 1,
                ttl: t.ttl,
            });
            ops.extend(t.lo.as_ref().map(|k| incr(k, lo, t.ttl)));
            ops.extend(t.hi.as_ref().map(|k| incr(k, hi, t.ttl)));
            ops.push(Op::Get(&t.extremes));
        }
        let mut replies = run(access, &ops).await?.into_iter();
        let mut failure = None;
        // Whether any op of the batch was applied: then a "not applied"
        // error of another is not the record's (see `partial`).
        let mut applied = false;
        let mut reads = Vec::with_capacity(targets.len());
        // Each target's count generation, as its count's reply gave it.
        let mut generations = vec![None; targets.len()];
        for (i, t) in targets.iter().enumerate() {
            let counters = 1 + usize::from(t.lo.is_some()) + usize::from(t.hi.is_some());
            for (n, reply) in replies.by_ref().take(counters).enumerate() {
                match reply.and_then(Reply::value) {
                    Ok(count) if n == 0 => {
                        generations[i] = Some(split_count(count).1);
                        applied = true;
                    }
                    Ok(_) => applied = true,
                    Err(e) => keep_first(&mut failure, e),
                }
            }
            match replies.next().map(|r| r.and_then(Reply::item)) {
                Some(Ok(item)) => reads.push((i, item)),
                Some(Err(e)) => keep_first(&mut failure, e),
                None => {}
            }
        }
        if let Err(e) = self
            .widen(access, &targets, &generations, reads, value)
            .await
        {
            keep_first(&mut failure, e);
        }
        failure.map_or(Ok(()), |e| Err(partial(e, applied, &targets[0].count)))
    }

    /// Record `value` now, by the scope's clock.
    pub fn record_now(&self, value: i64) -> Result<()> {
        block_on(self.record_now_io(Io::Blocking, value))
    }

    /// [`record_now`](TimeSeries::record_now) without blocking the thread.
    pub async fn record_now_async(&self, value: i64) -> Result<()> {
        self.record_now_io(Io::Async, value).await
    }

    async fn record_now_io(&self, io: Io, value: i64) -> Result<()> {
        self.record_io(io, self.scope.clock().now_ms(), value).await
    }

    /// Widen the min/max items of `targets` (read as `reads`: target index,
    /// item) to take in `value`, by CAS, retrying the ones that lose. A
    /// min/max item this creates takes its target's count generation
    /// (`generations`, `None` where the count's reply failed: then none is
    /// created, since the generation it would carry is unknown); one it
    /// widens keeps the generation it has.
    async fn widen(
        &self,
        access: Access<'_>,
        targets: &[Target],
        generations: &[Option<u32>],
        mut reads: Vec<(usize, Option<Item>)>,
        value: i64,
    ) -> Result<()> {
        let mut failure = None;
        let mut backoff = Backoff::default();
        for attempt in 1..=MAX_ATTEMPTS {
            // (target, CAS id or None to add, new bytes)
            let mut writes = Vec::new();
            for (i, item) in reads.drain(..) {
                let Some(item) = item else {
                    // A count of the first format (generation 0) gets a
                    // min/max item without a check (generation 1 stands
                    // for "unknown" there, and is never compared).
                    if let Some(generation) = generations[i] {
                        writes.push((i, None, encode_extremes(value, value, generation.max(1))));
                    }
                    continue;
                };
                match decode_extremes(&item.value) {
                    Err(reason) => keep_first(&mut failure, corrupt(&targets[i].extremes, reason)),
                    Ok(x) if (x.min..=x.max).contains(&value) => {}
                    Ok(x) => writes.push((
                        i,
                        Some(item.cas),
                        encode_extremes(
                            x.min.min(value),
                            x.max.max(value),
                            x.generation.or(generations[i]).unwrap_or(1).max(1),
                        ),
                    )),
                }
            }
            if writes.is_empty() {
                break;
            }
            let ops: Vec<Op<'_>> = writes
                .iter()
                .map(|(i, cas, bytes)| {
                    let t = &targets[*i];
                    match cas {
                        None => Op::Add {
                            key: &t.extremes,
                            value: bytes,
                            ttl: t.ttl,
                        },
                        Some(cas) => Op::Cas {
                            key: &t.extremes,
                            value: bytes,
                            ttl: t.ttl,
                            cas: *cas,
                        },
                    }
                })
                .collect();
            let mut lost = Vec::new();
            for ((i, cas, _), reply) in writes.iter().zip(run(access, &ops).await?) {
                let stored = match cas {
                    None => reply.and_then(Reply::stored).map(|s| s.is_stored()),
                    Some(_) => reply
                        .and_then(Reply::cas_outcome)
                        .map(|c| matches!(c, CasOutcome::Stored(_))),
                };
                match stored {
                    Ok(true) => {}
                    Ok(false) => lost.push(*i),
                    Err(e) => keep_first(&mut failure, e),
                }
            }
            if lost.is_empty() {
                break;
            }
            if attempt == MAX_ATTEMPTS {
                keep_first(
                    &mut failure,
                    Error::Conflict {
                        key: targets[lost[0]].extremes.display(),
                        attempts: MAX_ATTEMPTS,
                    },
                );
                break;
            }
            access.sleep(backoff.next_delay()).await;
            let gets: Vec<Op<'_>> = lost
                .iter()
                .map(|&i| Op::Get(&targets[i].extremes))
                .collect();
            for (&i, reply) in lost.iter().zip(run(access, &gets).await?) {
                match reply.and_then(Reply::item) {
                    Ok(item) => reads.push((i, item)),
                    Err(e) => keep_first(&mut failure, e),
                }
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// The buckets of `step` from the one containing `from_ms` to the one
    /// containing `to_ms`, within retention.
    fn plan(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Plan<'_>> {
        let resolution = self.resolution(step)?;
        let now_ms = self.scope.clock().now_ms();
        let first = (from_ms / resolution.step_ms).max(first_readable(
            resolution.step_ms,
            resolution.retention_ms,
            now_ms,
        ));
        Ok(Plan {
            series: self,
            resolution,
            now_ms,
            first,
            last: to_ms / resolution.step_ms,
        })
    }

    /// The non-empty buckets of `step` (one of the series' resolutions) from
    /// the one containing `from_ms` to the one containing `to_ms` (Unix ms,
    /// inclusive), oldest first. Buckets past retention are not read. One
    /// `get_multi` (1 round trip per server), plus a second look at buckets
    /// whose parts disagree (see the [type docs](TimeSeries)).
    pub fn range(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Vec<Bucket>> {
        block_on(self.range_io(Io::Blocking, from_ms, to_ms, step))
    }

    /// [`range`](TimeSeries::range) without blocking the thread.
    pub async fn range_async(
        &self,
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        self.range_io(Io::Async, from_ms, to_ms, step).await
    }

    async fn range_io(
        &self,
        io: Io,
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        let plan = self.plan(from_ms, to_ms, step)?;
        Ok(read(self.access(io), &[plan])
            .await?
            .pop()
            .unwrap_or_default())
    }

    /// The aggregates of every sample in the range (as in
    /// [`range`](Self::range)); `None` when it has none.
    pub fn aggregate(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<Stats>> {
        block_on(self.aggregate_io(Io::Blocking, from_ms, to_ms, step))
    }

    /// [`aggregate`](TimeSeries::aggregate) without blocking the thread.
    pub async fn aggregate_async(
        &self,
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Option<Stats>> {
        self.aggregate_io(Io::Async, from_ms, to_ms, step).await
    }

    async fn aggregate_io(
        &self,
        io: Io,
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Option<Stats>> {
        Ok(merge_all(self.range_io(io, from_ms, to_ms, step).await?))
    }

    /// How many samples the range holds (as in [`range`](Self::range)).
    pub fn count(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<u64> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map_or(0, |s| s.count))
    }

    /// [`count`](TimeSeries::count) without blocking the thread.
    pub async fn count_async(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<u64> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map_or(0, |s| s.count))
    }

    /// The exact sum of the range's samples (0 when none).
    pub fn sum(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<i128> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map_or(0, |s| s.sum))
    }

    /// [`sum`](TimeSeries::sum) without blocking the thread.
    pub async fn sum_async(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<i128> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map_or(0, |s| s.sum))
    }

    /// The mean of the range's samples; `None` when none.
    pub fn avg(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<f64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.avg()))
    }

    /// [`avg`](TimeSeries::avg) without blocking the thread.
    pub async fn avg_async(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<f64>> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map(|s| s.avg()))
    }

    /// The smallest sample of the range; `None` when none.
    pub fn min(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<i64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.min))
    }

    /// [`min`](TimeSeries::min) without blocking the thread.
    pub async fn min_async(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<i64>> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map(|s| s.min))
    }

    /// The largest sample of the range; `None` when none.
    pub fn max(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<i64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.max))
    }

    /// [`max`](TimeSeries::max) without blocking the thread.
    pub async fn max_async(&self, from_ms: u64, to_ms: u64, step: Duration) -> Result<Option<i64>> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map(|s| s.max))
    }

    /// The buckets where *any* of `series` has samples, each the merge
    /// ([`Stats::merge`]) of their samples there: say the latency of every
    /// server of a fleet, per minute. All series must share one store (their
    /// scopes may differ in prefix and clock) and record at `step`; they are
    /// read in one `get_multi` (1 round trip per server), each within its
    /// own retention.
    pub fn union(
        series: &[&TimeSeries],
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        block_on(combine(Io::Blocking, series, from_ms, to_ms, step, 1))
    }

    /// [`union`](TimeSeries::union) without blocking the thread.
    pub async fn union_async(
        series: &[&TimeSeries],
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        combine(Io::Async, series, from_ms, to_ms, step, 1).await
    }

    /// The buckets where *every* one of `series` has samples, each the merge
    /// of their samples there (as in [`union`](Self::union), one round trip
    /// per server). An empty list gives no bucket.
    pub fn intersection(
        series: &[&TimeSeries],
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        let quorum = series.len().max(1);
        block_on(combine(Io::Blocking, series, from_ms, to_ms, step, quorum))
    }

    /// [`intersection`](TimeSeries::intersection) without blocking the
    /// thread.
    pub async fn intersection_async(
        series: &[&TimeSeries],
        from_ms: u64,
        to_ms: u64,
        step: Duration,
    ) -> Result<Vec<Bucket>> {
        let quorum = series.len().max(1);
        combine(Io::Async, series, from_ms, to_ms, step, quorum).await
    }
}

/// The merge of all buckets' stats.
fn merge_all(buckets: Vec<Bucket>) -> Option<Stats> {
    buckets.into_iter().map(|b| b.stats).reduce(|mut a, b| {
        a.merge(&b);
        a
    })
}

/// The buckets where at least `quorum` of `series` have samples, each the
/// merge of their samples there.
async fn combine(
    io: Io,
    series: &[&TimeSeries],
    from_ms: u64,
    to_ms: u64,
    step: Duration,
    quorum: usize,
) -> Result<Vec<Bucket>> {
    let Some(first) = series.first() else {
        return Ok(Vec::new());
    };
    let store = first.scope.store();
    if let Some(other) = series
        .iter()
        .find(|s| !std::ptr::addr_eq(Arc::as_ptr(s.scope.store()), Arc::as_ptr(store)))
    {
        return Err(Error::InvalidArgument(format!(
            "series {} and {} live in different stores; a union or intersection reads all its series in one batch — build them on one store (their scopes may differ in prefix and clock)",
            first.name, other.name
        )));
    }
    let plans = series
        .iter()
        .map(|s| s.plan(from_ms, to_ms, step))
        .collect::<Result<Vec<_>>>()?;
    // One series given twice would count its samples twice (and make an
    // intersection's quorum wrong): the same keys are the same series,
    // whatever the handles.
    let mut seen = std::collections::BTreeSet::new();
    for plan in &plans {
        let key = plan.series.key(plan.resolution, 0, Part::Count)?;
        if !seen.insert(key) {
            return Err(Error::InvalidArgument(format!(
                "series {} is given twice; a union or intersection takes each series once",
                plan.series.name
            )));
        }
    }
    let mut merged: BTreeMap<u64, (Stats, usize)> = BTreeMap::new();
    for bucket in read(Access::new(&**store, io), &plans)
        .await?
        .into_iter()
        .flatten()
    {
        merged
            .entry(bucket.start_ms)
            .and_modify(|(stats, seen)| {
                stats.merge(&bucket.stats);
                *seen += 1;
            })
            .or_insert((bucket.stats, 1));
    }
    Ok(merged
        .into_iter()
        .filter(|(_, (_, seen))| *seen >= quorum)
        .map(|(start_ms, (stats, _))| Bucket { start_ms, stats })
        .collect())
}

/// Read the buckets of `plans` in one `get_multi`, look again at the ones
/// whose parts disagree, and give each plan's non-empty buckets in order.
async fn read(access: Access<'_>, plans: &[Plan<'_>]) -> Result<Vec<Vec<Bucket>>> {
    let total = plans
        .iter()
        .map(Plan::len)
        .fold(0u64, |sum, len| sum.saturating_add(len));
    if total > MAX_RANGE_BUCKETS {
        return Err(Error::InvalidArgument(format!(
            "this read covers {total} buckets within retention; read at most {MAX_RANGE_BUCKETS} per call — split the range or use a coarser step"
        )));
    }
    // (plan, bucket) of every bucket to look at, and the last look's result.
    let mut wanted: Vec<(usize, u64)> = plans
        .iter()
        .enumerate()
        .flat_map(|(p, plan)| plan.buckets().map(move |b| (p, b)))
        .collect();
    let mut found: Vec<BTreeMap<u64, Stats>> = vec![BTreeMap::new(); plans.len()];
    let mut backoff = Backoff::default();
    for look in 0..=REREADS {
        if wanted.is_empty() {
            break;
        }
        if look > 0 {
            access.sleep(backoff.next_delay()).await;
        }
        let mut keys = Vec::with_capacity(wanted.len() * PARTS.len());
        for &(p, b) in &wanted {
            keys.extend(plans[p].keys(b)?);
        }
        // get_multi, with the check that every key got its answer.
        let gets: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
        let items = run(access, &gets)
            .await?
            .into_iter()
            .map(|r| r.and_then(Reply::item))
            .collect::<Result<Vec<_>>>()?;
        let mut suspects = Vec::new();
        for ((&(p, b), keys), items) in wanted
            .iter()
            .zip(keys.chunks(PARTS.len()))
            .zip(items.chunks(PARTS.len()))
        {
            match decode_bucket(keys, items)? {
                Decoded::Empty => {}
                Decoded::Stats(stats) => {
                    found[p].insert(b, stats);
                }
                Decoded::Lost(reason) => {
                    let plan = &plans[p];
                    return Err(corrupt(
                        &keys[0],
                        format!(
                            "bucket {b} of time series {} (step {} ms, from {} ms) lost samples: {reason} — read around it, and give time series servers the memory they need",
                            plan.series.name,
                            plan.resolution.step_ms,
                            b.saturating_mul(plan.resolution.step_ms)
                        ),
                    ));
                }
                Decoded::Suspect { reason, as_read } => {
                    if look < REREADS {
                        suspects.push((p, b));
                    } else if plans[p].closed(b) {
                        let plan = &plans[p];
                        return Err(corrupt(
                            &keys[0],
                            format!(
                                "the parts of bucket {b} of time series {} (step {} ms, from {} ms) disagree: {reason}; some of its items were lost (their server restarted, was flushed or evicted them) or a record failed partway, so it cannot be aggregated exactly — read around it",
                                plan.series.name,
                                plan.resolution.step_ms,
                                b.saturating_mul(plan.resolution.step_ms)
                            ),
                        ));
                    } else if let Some(stats) = as_read {
                        found[p].insert(b, stats);
                    }
                }
            }
        }
        wanted = suspects;
    }
    Ok(plans
        .iter()
        .zip(found)
        .map(|(plan, buckets)| {
            buckets
                .into_iter()
                .map(|(b, stats)| Bucket {
                    start_ms: b.saturating_mul(plan.resolution.step_ms),
                    stats,
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<Key> {
        PARTS
            .iter()
            .map(|p| Key::new(format!("ts:t:1000:7:{}", p.tag())).unwrap())
            .collect()
    }

    fn item(value: &[u8]) -> Option<Item> {
        Some(Item {
            value: value.to_vec(),
            flags: 0,
            cas: 1,
        })
    }

    #[test]
    fn extremes_round_trip() {
        let bytes = encode_extremes(i64::MIN, i64::MAX, 7);
        assert_eq!(bytes.len(), EXTREMES_LEN);
        let x = decode_extremes(&bytes).unwrap();
        assert_eq!((x.min, x.max, x.generation), (i64::MIN, i64::MAX, Some(7)));
        assert!(decode_extremes(&encode_extremes(2, 1, 7)).is_err());
        assert!(decode_extremes(&encode_extremes(1, 2, 0)).is_err());
        // The first format (no generation) still reads.
        let mut v1 = b"x1".to_vec();
        v1.extend_from_slice(&(-4i64).to_le_bytes());
        v1.extend_from_slice(&9i64.to_le_bytes());
        assert_eq!(v1.len(), EXTREMES_V1_LEN);
        let x = decode_extremes(&v1).unwrap();
        assert_eq!((x.min, x.max, x.generation), (-4, 9, None));
        // Each magic with the other's length is not either.
        assert!(decode_extremes(&bytes[..EXTREMES_V1_LEN]).is_err());
        v1.extend_from_slice(&7u32.to_le_bytes());
        assert!(decode_extremes(&v1).is_err());
    }

    #[test]
    fn count_generations_split_off() {
        assert_eq!(split_count(5), (5, 0));
        let g = new_generation();
        assert!((1..1 << 31).contains(&g));
        let count = (g << GENERATION_SHIFT) | 3;
        assert!(
            count < 1 << 63,
            "memcached misreads counters of 2^63 or more"
        );
        assert_eq!(split_count(count), (3, u32::try_from(g).unwrap()));
        let top = (((1u64 << 31) - 1) << GENERATION_SHIFT) | MAX_SAMPLES_PER_BUCKET;
        assert!(top < 1 << 63);
    }

    /// The count re-created after the min/max item (an eviction of a bucket
    /// still being written): the generations differ, and the bucket is
    /// lost, whatever its sums say.
    #[test]
    fn a_recreated_count_is_lost() {
        let count = |generation: u64, n: u64| (generation << GENERATION_SHIFT) | n;
        // 2 samples of 10 since the count came back; the min/max item
        // remembers an older generation. Sum and bounds agree: only the
        // generation tells.
        let items = [
            item(count(9, 2).to_string().as_bytes()),
            item(b"20"),
            None,
            None,
            None,
            item(&encode_extremes(10, 10, 4)),
        ];
        assert!(matches!(
            decode_bucket(&keys(), &items).unwrap(),
            Decoded::Lost(_)
        ));
        // Same generation: healthy.
        let items = [
            item(count(4, 2).to_string().as_bytes()),
            item(b"20"),
            None,
            None,
            None,
            item(&encode_extremes(10, 10, 4)),
        ];
        assert_eq!(
            decode_bucket(&keys(), &items).unwrap(),
            Decoded::Stats(Stats {
                count: 2,
                sum: 20,
                min: 10,
                max: 10
            })
        );
        // A count or min/max item of the first format is not compared.
        let items = [
            item(b"2"),
            item(b"20"),
            None,
            None,
            None,
            item(&encode_extremes(10, 10, 4)),
        ];
        assert!(matches!(
            decode_bucket(&keys(), &items).unwrap(),
            Decoded::Stats(_)
        ));
    }

    #[test]
    fn garbage_is_corrupt_never_a_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..2000 {
            let len = (next() % 40) as usize;
            let mut garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if round % 3 == 0 && garbage.len() >= 2 {
                garbage[..2].copy_from_slice(&EXTREMES_MAGIC);
            }
            let _ = decode_extremes(&garbage);
            for part in 0..PARTS.len() {
                let mut items = vec![item(b"1"), None, None, None, None, None];
                items[5] = item(&encode_extremes(0, 5, 1));
                items[part] = item(&garbage);
                match decode_bucket(&keys(), &items) {
                    Ok(_) => {}
                    Err(Error::Corrupt { .. }) => {}
                    Err(e) => panic!("garbage gave {e}"),
                }
            }
        }
        let items = [item(b"3"), item(b"12"), None, None, None, item(b"junk")];
        assert!(matches!(
            decode_bucket(&keys(), &items),
            Err(Error::Corrupt { .. })
        ));
        let items = [item(b"three"), None, None, None, None, None];
        assert!(matches!(
            decode_bucket(&keys(), &items),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn sums_are_rebuilt_from_halves() {
        let (min, max) = (i64::MIN, i64::MAX);
        // Two samples: i64::MAX and i64::MIN → sum -1.
        let mag_max = i64::MAX.unsigned_abs();
        let mag_min = i64::MIN.unsigned_abs();
        let items = [
            item(b"2"),
            item((mag_max & 0xffff_ffff).to_string().as_bytes()),
            item((mag_max >> 32).to_string().as_bytes()),
            item((mag_min & 0xffff_ffff).to_string().as_bytes()),
            item((mag_min >> 32).to_string().as_bytes()),
            item(&encode_extremes(min, max, 1)),
        ];
        assert_eq!(
            decode_bucket(&keys(), &items).unwrap(),
            Decoded::Stats(Stats {
                count: 2,
                sum: -1,
                min,
                max
            })
        );
    }

    #[test]
    fn disagreeing_parts_are_suspect() {
        let lonely = [None, item(b"5"), None, None, None, None];
        assert!(matches!(
            decode_bucket(&keys(), &lonely).unwrap(),
            Decoded::Suspect { as_read: None, .. }
        ));
        let no_extremes = [item(b"1"), item(b"5"), None, None, None, None];
        assert!(matches!(
            decode_bucket(&keys(), &no_extremes).unwrap(),
            Decoded::Suspect { as_read: None, .. }
        ));
        // A count lost and restarted: 1 sample, but a sum of 30 with max 10.
        let out_of_bounds = [
            item(b"1"),
            item(b"30"),
            None,
            None,
            None,
            item(&encode_extremes(5, 10, 1)),
        ];
        assert!(matches!(
            decode_bucket(&keys(), &out_of_bounds).unwrap(),
            Decoded::Suspect {
                as_read: Some(_),
                ..
            }
        ));
        let too_many = [
            item((MAX_SAMPLES_PER_BUCKET + 1).to_string().as_bytes()),
            None,
            None,
            None,
            None,
            item(&encode_extremes(0, 0, 1)),
        ];
        assert!(decode_bucket(&keys(), &too_many).is_err());
    }
}
