//! [`TimeSeries`]: count, sum, min and max of integer samples per time
//! bucket, at several resolutions, one item per bucket on period-numbered
//! keys.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Access, Backoff, CasOutcome, Error, Io, Item, Key, Op, Reply, Result, Scope, Ttl, UnixMs,
    block_on, blocking_and_async,
};

use crate::period::{
    DEFAULT_SKEW_MS, Read, check_retained, corrupt, first_readable, refuse_early, ttl_for, whole_ms,
};

/// The most resolutions one series records at.
pub const MAX_RESOLUTIONS: usize = 8;

/// The most buckets one read ([`TimeSeries::range`], the aggregates,
/// [`TimeSeries::union`], [`TimeSeries::intersection`]) reads, over all its
/// series: one key each, in one `get_multi`.
pub const MAX_RANGE_BUCKETS: u64 = 10_000;

/// The most samples one bucket holds (2^48, about 2.8 · 10^14): the sums
/// of a read of [`MAX_RANGE_BUCKETS`] full buckets of `i64` samples stay
/// below 2^125, so an `i128` never overflows. A record into a full bucket
/// is an [`Error::InvalidArgument`]; a bucket item that counts more is
/// [`Error::Corrupt`].
pub const MAX_SAMPLES_PER_BUCKET: u64 = 1 << 48;

/// CAS attempts of a record before [`Error::Conflict`].
const MAX_ATTEMPTS: u32 = 64;

/// The magic and version of a bucket item.
const BUCKET_MAGIC: [u8; 2] = *b"t1";

/// The length of a bucket item: the magic, the count (`u64`), the sum
/// (`i128`), the min and the max (`i64`), all little-endian.
pub const BUCKET_LEN: usize = 2 + 8 + 16 + 8 + 8;

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
    /// [`MAX_SAMPLES_PER_BUCKET`] = 2^48 samples of at most 2^63 each, a
    /// read at most [`MAX_RANGE_BUCKETS`] buckets).
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
    pub start_ms: UnixMs,
    /// Its samples' aggregates.
    pub stats: Stats,
}

/// A bucket item's bytes.
pub fn encode_bucket(stats: &Stats) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(BUCKET_LEN);
    bytes.extend_from_slice(&BUCKET_MAGIC);
    bytes.extend_from_slice(&stats.count.to_le_bytes());
    bytes.extend_from_slice(&stats.sum.to_le_bytes());
    bytes.extend_from_slice(&stats.min.to_le_bytes());
    bytes.extend_from_slice(&stats.max.to_le_bytes());
    bytes
}

/// A bucket item's aggregates from its bytes, or why they are not a
/// bucket's: the wrong length or magic, no sample, `min > max`, more than
/// [`MAX_SAMPLES_PER_BUCKET`] samples, or a sum that samples between the
/// min and the max cannot make (`[max + (count−1)·min, min + (count−1)·max]`).
pub fn decode_bucket(bytes: &[u8]) -> std::result::Result<Stats, String> {
    let Some((magic, rest)) = bytes.split_first_chunk::<2>() else {
        return Err(format!(
            "a time series bucket item is {BUCKET_LEN} bytes; found {}",
            bytes.len()
        ));
    };
    if *magic != BUCKET_MAGIC {
        return Err(format!(
            "a time series bucket item starts with {BUCKET_MAGIC:?}; found {magic:?}"
        ));
    }
    let Ok(fields) = <&[u8; BUCKET_LEN - 2]>::try_from(rest) else {
        return Err(format!(
            "a time series bucket item is {BUCKET_LEN} bytes; found {}",
            bytes.len()
        ));
    };
    let (count, fields) = fields.split_first_chunk::<8>().unwrap_or((&[0; 8], &[]));
    let (sum, fields) = fields.split_first_chunk::<16>().unwrap_or((&[0; 16], &[]));
    let (min, max) = fields.split_first_chunk::<8>().unwrap_or((&[0; 8], &[]));
    let stats = Stats {
        count: u64::from_le_bytes(*count),
        sum: i128::from_le_bytes(*sum),
        min: i64::from_le_bytes(*min),
        max: i64::from_le_bytes(<[u8; 8]>::try_from(max).unwrap_or_default()),
    };
    if stats.count == 0 || stats.count > MAX_SAMPLES_PER_BUCKET {
        return Err(format!("it counts {} samples", stats.count));
    }
    if stats.min > stats.max {
        return Err(format!("min {} is above max {}", stats.min, stats.max));
    }
    // The min and the max are each one of the samples, and the others lie
    // between them.
    let rest = i128::from(stats.count) - 1;
    let (lower, upper) = (
        i128::from(stats.max).saturating_add(rest.saturating_mul(i128::from(stats.min))),
        i128::from(stats.min).saturating_add(rest.saturating_mul(i128::from(stats.max))),
    );
    if stats.sum < lower || stats.sum > upper || (stats.count == 1 && stats.min != stats.max) {
        return Err(format!(
            "its sum {} of {} samples is outside [max + (count−1)·min, min + (count−1)·max] = [{lower}, {upper}]",
            stats.sum, stats.count
        ));
    }
    Ok(stats)
}

/// A record's error: an op's "not applied, retrying is safe" error
/// ([`Error::is_retryable`]) is not the record's when another resolution's
/// bucket took the sample, so it becomes [`Error::Ambiguous`]: a retry
/// would count the sample twice there.
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
            "the record was applied in part: the buckets of other resolutions took the sample, and {} did not take its own",
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
}

/// The bucket of one resolution a record writes to.
struct Target {
    key: Key,
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
/// dollars) and divide on read. Sums are exact as `i128`: a bucket holds
/// at most [`MAX_SAMPLES_PER_BUCKET`] (2^48) samples, so no read's sum can
/// overflow one.
///
/// ## Keys and retention
///
/// Bucket `b` of a resolution of step `s` ms covers `[b·s, (b+1)·s)` (Unix
/// ms). It is **one item**, `<prefix>ts:<name>:<s>:<b>`, of
/// [`BUCKET_LEN`] bytes: the magic `t1`, then little-endian the count
/// (`u64`), the sum (`i128`), the min and the max (`i64`). A key is never
/// reused.
///
/// A bucket is readable for the resolution's retention after its end, by
/// the reader's clock; older buckets are not read at all. Every write gives
/// the item a TTL reaching the clock skew plus 60 s past that (a reader's
/// clock may be the skew behind the writer's; the 60 s cover memcached's
/// one-second clock, which lags real time by up to 2 s), so a read never
/// depends on *when* memcached expires an item: TTLs only free memory. A
/// sample whose bucket is past retention even for a reader the skew
/// behind is not written at that resolution (no read would see it). A sample more than the
/// clock skew ([`with_max_clock_skew`](Self::with_max_clock_skew), 60 s by
/// default) ahead of the recording client's clock is refused
/// ([`Error::InvalidArgument`]): reads rely on that to tell lost data
/// (below).
///
/// ## Record, and what it costs
///
/// [`record`](Self::record) is a CAS read-modify-write of the sample's
/// bucket at every resolution, all resolutions in one batch: a `get` of
/// each bucket, then a `cas` of each (an `add` of a new one) with the
/// sample merged in. **2 round trips per server** (on a pool the servers'
/// shares are sent at once: 2 round trips of latency), for any number of
/// resolutions. Each bucket whose CAS is lost to a concurrent record is
/// read and written again (2 more), with backoff, up to 64 attempts, then
/// [`Error::Conflict`]: a bucket many clients record into at once costs
/// each a few more round trips (with 8 writers on one bucket, about 2
/// attempts per record on average).
///
/// ## Concurrency and failures
///
/// Each bucket changes only by CAS, whole: no concurrent sample is lost,
/// and a reader sees a bucket before or after a sample, never part of
/// one. A record that fails returns the error, and did not touch the
/// buckets whose write failed. What it may have applied: nothing when its
/// error is `Io`/`Timeout`/`ServerDown`/`Conflict`, or
/// [`Error::Ambiguous`] when the sample was taken by some resolutions'
/// buckets (or a reply never came) — retrying that may count the sample
/// twice in those.
///
/// ## Reads, and lost data
///
/// [`range`](Self::range) reads every bucket of the range in one
/// `get_multi` (**1 round trip per server**), then asks each server it read
/// from whether it has lost items since before those buckets could first
/// be written ([`Store::retention`](mcds_core::Store::retention): for
/// memcached, its `stats` and a record its clients keep of when they saw
/// its last loss, **2 more round trips per server**, 3 when the record is
/// written: the first read of a server, and after each new loss). The aggregates over a range
/// ([`aggregate`](Self::aggregate), [`count`](Self::count),
/// [`sum`](Self::sum), [`avg`](Self::avg), [`min`](Self::min),
/// [`max`](Self::max)) and the merges of several series
/// ([`union`](Self::union), [`intersection`](Self::intersection)) are one
/// such read too. A read covers at most [`MAX_RANGE_BUCKETS`] buckets
/// within retention, else [`Error::InvalidArgument`].
///
/// memcached loses items without a reply that says so: a restart or
/// `flush_all` loses all of them, eviction any. A lost bucket reads as an
/// empty one, and a bucket lost and re-created by later records holds only
/// the samples since; neither can be told from the item alone. So a read
/// returns a bucket (or its absence) only when the server holding it has
/// lost nothing since twice the clock skew (2 minutes by default) before
/// the bucket starts (a sample can be recorded up to the skew early, and
/// clocks differ by up to the skew): then every
/// sample ever recorded into it is there. Otherwise the read is an
/// [`Error::Lost`] that names the bucket, the time of the loss, and
/// the first time a read can vouch for. That includes buckets older than
/// the server process: after a restart, and when a series is first
/// recorded into a new server with samples from before it started
/// ([`with_loss_check(false)`](Self::with_loss_check) reads those). A
/// server that keeps evicting makes every recent bucket unverifiable: give
/// time series servers the memory they need, or run them with `-M`, which
/// refuses writes (an error) rather than evict.
///
/// What a read cannot see: a `flush_all` with a delay (memcached counts it
/// when sent, applies it later) and a bucket deleted by another program.
/// Through a store that cannot say whether it lost items (`mcds-text`,
/// directly or behind a proxy), a read is [`Error::Unsupported`] unless the
/// check is turned off. An operator's `stats reset` or a warm restart
/// (`-e`) zeroes the counts the check reads: a count found below the one
/// its clients recorded is taken as a loss, but losses no client had read
/// before such a reset are erased with them. Bytes no record writes (another program's) are
/// `Error::Corrupt`, never a panic or a misread.
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 225 bytes less the digits of the longest step in ms and less the scope's prefix (the key `<prefix>ts:<name>:<step ms>:<bucket>` of the last bucket there is, 20 digits, fits 250 bytes): 221 for steps up to 9 999 ms, 220 for a minute; `:` and `%` are escaped to 3 bytes | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | 1 to [`MAX_RESOLUTIONS`] (8) resolutions, of distinct steps | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | steps and retentions of whole milliseconds, 1 ms to 100 years (of 366 days), a retention at least a step | [`Error::InvalidArgument`] from [`Resolution::new`] | nothing |
/// | samples: any `i64`; at most [`MAX_SAMPLES_PER_BUCKET`] (2^48) in a bucket | [`Error::InvalidArgument`] from [`record`](Self::record) | nothing: the bucket as it was |
/// | a sample at most the clock skew ([`with_max_clock_skew`](Self::with_max_clock_skew), 60 s by default) ahead of the scope's clock | [`Error::InvalidArgument`] from [`record`](Self::record) | nothing |
/// | a sample whose bucket is within retention (for a reader the clock skew behind) | no error: `Ok`, and it is written only at the resolutions whose bucket is | nothing at the others |
/// | one read ([`range`](Self::range), the aggregates, [`union`](Self::union), [`intersection`](Self::intersection)) covers at most [`MAX_RANGE_BUCKETS`] (10 000) buckets within retention, over all its series; [`range_iter`](Self::range_iter) streams any range in pages of 1 to [`MAX_RANGE_BUCKETS`] | [`Error::InvalidArgument`] (from `range_iter`, its first item) | nothing read |
/// | a union or intersection takes series of one store, each once | [`Error::InvalidArgument`] | — |
#[derive(Clone, Debug)]
pub struct TimeSeries {
    scope: Scope,
    name: String,
    resolutions: Vec<Resolution>,
    loss_check: bool,
    skew_ms: u64,
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
            loss_check: true,
            skew_ms: DEFAULT_SKEW_MS,
        };
        for &r in &series.resolutions {
            series.key(r, u64::MAX)?; // the longest key fits
        }
        Ok(series)
    }

    /// Whether reads ask the store if it lost items since the buckets they
    /// return could first be written (default `true`; see the
    /// [type docs](TimeSeries), "Reads, and lost data"). `false` reads what
    /// the servers hold without asking, 1 round trip per server less: for
    /// a store that cannot tell (a proxy), or samples imported into a
    /// server from before it started. A read may then return a bucket that
    /// lost samples, or none for one that had some, without an error.
    pub fn with_loss_check(mut self, check: bool) -> TimeSeries {
        self.loss_check = check;
        self
    }

    /// The most the clocks of the series' clients differ by (default 60 s,
    /// whole milliseconds): a sample may lie at most this far ahead of the
    /// recording client's clock, and a read vouches for a bucket only if
    /// it starts twice this long after its server's last loss. A smaller
    /// bound (clocks kept close by NTP) reads buckets sooner after a
    /// restart; every client of the series must keep within it.
    pub fn with_max_clock_skew(mut self, skew: Duration) -> TimeSeries {
        self.skew_ms = u64::try_from(skew.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The series' name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its resolutions, finest first.
    pub fn resolutions(&self) -> &[Resolution] {
        &self.resolutions
    }

    fn key(&self, r: Resolution, bucket: u64) -> Result<Key> {
        self.scope
            .key("ts", &self.name, format_args!("{}:{bucket}", r.step_ms))
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

    /// Record `value` at `ts_ms` (Unix milliseconds, at most the clock skew
    /// ahead of the scope's clock) at every resolution whose bucket is still within
    /// retention: 2 round trips per server, 2 more per lost CAS race (see
    /// the [type docs](TimeSeries) for the protocol and for what a failure
    /// may have applied).
    #[blocking_and_async(pub)]
    async fn record_io(&self, io: Io, ts_ms: u64, value: i64) -> Result<()> {
        let now = self.scope.clock().now_ms();
        refuse_early("time series", &self.name, ts_ms, now, self.skew_ms)?;
        let mut targets = Vec::with_capacity(self.resolutions.len());
        for &r in &self.resolutions {
            let bucket = ts_ms / r.step_ms;
            let Some(ttl) = ttl_for(r.end_ms(bucket), r.retention_ms, now, self.skew_ms) else {
                continue;
            };
            targets.push(Target {
                key: self.key(r, bucket)?,
                ttl,
            });
        }
        if targets.is_empty() {
            return Ok(()); // past retention at every resolution
        }
        // Refused before anything is written, not half applied (memcached
        // -C, a proxy): on a pool each bucket may live on another server,
        // and one of them may have been started with -C.
        let access = self.access(io);
        for t in &targets {
            if !access.supports_cas(&t.key).await? {
                return Err(Error::Unsupported {
                    op: "TimeSeries::record",
                    backend: access.store().backend_name(),
                    hint: "a time series writes its buckets by CAS: use a memcached started without -C, connected directly (not through a proxy)",
                });
            }
        }
        let mut failure = None;
        // Whether some bucket took the sample: then a "not applied" error
        // of another is not the record's (see `partial`).
        let mut applied = false;
        let mut pending: Vec<usize> = (0..targets.len()).collect();
        let mut backoff = Backoff::default();
        for attempt in 1..=MAX_ATTEMPTS {
            if attempt > 1 {
                access.sleep(backoff.next_delay()).await;
            }
            let gets: Vec<Op<'_>> = pending.iter().map(|&i| Op::Get(&targets[i].key)).collect();
            // (target, CAS id or None to add, new bytes)
            let mut writes = Vec::with_capacity(pending.len());
            for (&i, reply) in pending.iter().zip(run(access, &gets).await?) {
                match reply.and_then(Reply::item) {
                    Ok(item) => match merged(&targets[i].key, item.as_ref(), value) {
                        Ok(bytes) => writes.push((i, item.map(|item| item.cas), bytes)),
                        Err(e) => keep_first(&mut failure, e),
                    },
                    Err(e) => keep_first(&mut failure, e),
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
                            key: &t.key,
                            value: bytes,
                            ttl: t.ttl,
                        },
                        Some(cas) => Op::Cas {
                            key: &t.key,
                            value: bytes,
                            ttl: t.ttl,
                            cas: *cas,
                        },
                    }
                })
                .collect();
            pending.clear();
            for ((i, cas, _), reply) in writes.iter().zip(run(access, &ops).await?) {
                let stored = match cas {
                    None => reply.and_then(Reply::stored).map(|s| s.is_stored()),
                    Some(_) => reply
                        .and_then(Reply::cas_outcome)
                        .map(|c| matches!(c, CasOutcome::Stored(_))),
                };
                match stored {
                    Ok(true) => applied = true,
                    Ok(false) => pending.push(*i),
                    Err(e) => keep_first(&mut failure, e),
                }
            }
            if pending.is_empty() {
                break;
            }
            if attempt == MAX_ATTEMPTS {
                keep_first(
                    &mut failure,
                    Error::Conflict {
                        key: targets[pending[0]].key.display(),
                        attempts: MAX_ATTEMPTS,
                    },
                );
            }
        }
        failure.map_or(Ok(()), |e| Err(partial(e, applied, &targets[0].key)))
    }

    /// Record `value` now, by the scope's clock.
    #[blocking_and_async(pub)]
    async fn record_now_io(&self, io: Io, value: i64) -> Result<()> {
        self.record_io(io, self.scope.clock().now_ms(), value).await
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
            first,
            last: to_ms / resolution.step_ms,
        })
    }

    /// The non-empty buckets of `step` (one of the series' resolutions) from
    /// the one containing `from_ms` to the one containing `to_ms` (Unix ms,
    /// inclusive), oldest first. Buckets past retention are not read. One
    /// `get_multi` (1 round trip per server), then the loss check of each
    /// server read from (see the [type docs](TimeSeries)).
    #[blocking_and_async(pub)]
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

    /// [`range`](Self::range) as a stream: the same buckets, oldest first,
    /// read `page` buckets of `step` at a time (1 to
    /// [`MAX_RANGE_BUCKETS`]), each page one [`range`](Self::range) read
    /// (its `get_multi` and loss check). Memory stays bounded by a page, and
    /// a range may span any number of buckets (a whole year of seconds).
    /// A bad `step` or `page` is the first item's error.
    ///
    /// ```
    /// # let (_, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    /// use std::time::Duration;
    /// use mcds_timeseries::{Resolution, TimeSeries};
    ///
    /// let sec = Duration::from_secs(1);
    /// let series = TimeSeries::new(&scope, "rps", &[Resolution::new(sec, Duration::from_secs(86_400))?])?;
    /// let start = 1_800_000_000_000;
    /// for i in 0..30 {
    ///     series.record(start + i * 1000, 1)?;
    /// }
    /// let pages: Vec<_> = series.range_iter(start, start + 29_999, sec, 10).collect::<Result<_, _>>()?;
    /// assert_eq!(pages.len(), 3);
    /// assert_eq!(pages.iter().map(Vec::len).sum::<usize>(), 30);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn range_iter(
        &self,
        from_ms: UnixMs,
        to_ms: UnixMs,
        step: Duration,
        page: u64,
    ) -> RangeIter<'_> {
        let step_ms = u64::try_from(step.as_millis()).unwrap_or(u64::MAX).max(1);
        // From the first bucket still within retention (as `range` reads
        // it): a range from long ago does not walk the years before.
        let (next, error) = match self.plan(from_ms, to_ms, step) {
            Ok(plan) => (plan.first, None),
            Err(e) => (0, Some(e)),
        };
        RangeIter {
            series: self,
            step,
            page,
            next,
            last: to_ms / step_ms,
            step_ms,
            done: false,
            error,
        }
    }

    /// The aggregates of every sample in the range (as in
    /// [`range`](Self::range)); `None` when it has none.
    #[blocking_and_async(pub)]
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
    pub fn count(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<u64> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map_or(0, |s| s.count))
    }

    /// [`count`](TimeSeries::count) without blocking the thread.
    pub async fn count_async(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<u64> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map_or(0, |s| s.count))
    }

    /// The exact sum of the range's samples (0 when none).
    pub fn sum(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<i128> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map_or(0, |s| s.sum))
    }

    /// [`sum`](TimeSeries::sum) without blocking the thread.
    pub async fn sum_async(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<i128> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map_or(0, |s| s.sum))
    }

    /// The mean of the range's samples; `None` when none.
    pub fn avg(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<Option<f64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.avg()))
    }

    /// [`avg`](TimeSeries::avg) without blocking the thread.
    pub async fn avg_async(
        &self,
        from_ms: UnixMs,
        to_ms: UnixMs,
        step: Duration,
    ) -> Result<Option<f64>> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map(|s| s.avg()))
    }

    /// The smallest sample of the range; `None` when none.
    pub fn min(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<Option<i64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.min))
    }

    /// [`min`](TimeSeries::min) without blocking the thread.
    pub async fn min_async(
        &self,
        from_ms: UnixMs,
        to_ms: UnixMs,
        step: Duration,
    ) -> Result<Option<i64>> {
        Ok(self
            .aggregate_async(from_ms, to_ms, step)
            .await?
            .map(|s| s.min))
    }

    /// The largest sample of the range; `None` when none.
    pub fn max(&self, from_ms: UnixMs, to_ms: UnixMs, step: Duration) -> Result<Option<i64>> {
        Ok(self.aggregate(from_ms, to_ms, step)?.map(|s| s.max))
    }

    /// [`max`](TimeSeries::max) without blocking the thread.
    pub async fn max_async(
        &self,
        from_ms: UnixMs,
        to_ms: UnixMs,
        step: Duration,
    ) -> Result<Option<i64>> {
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
        let key = plan.series.key(plan.resolution, 0)?;
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

/// The bytes of bucket `key` (now `item`) with the sample `value` merged
/// in.
fn merged(key: &Key, item: Option<&Item>, value: i64) -> Result<Vec<u8>> {
    let stats = match item {
        None => Stats::of(value),
        Some(item) => {
            let mut stats = decode_bucket(&item.value).map_err(|r| corrupt(key, r))?;
            if stats.count >= MAX_SAMPLES_PER_BUCKET {
                return Err(Error::InvalidArgument(format!(
                    "bucket {} holds {MAX_SAMPLES_PER_BUCKET} samples, as many as it can; record at a finer resolution",
                    key.display()
                )));
            }
            stats.merge(&Stats::of(value));
            stats
        }
    };
    Ok(encode_bucket(&stats))
}

/// Read the buckets of `plans` in one `get_multi`, check that their
/// servers lost nothing since they could first be written, and give each
/// plan's non-empty buckets in order.
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
    // (plan, bucket, key) of every bucket.
    let mut wanted = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for (p, plan) in plans.iter().enumerate() {
        for b in plan.buckets() {
            wanted.push((p, b, plan.series.key(plan.resolution, b)?));
        }
    }
    let gets: Vec<Op<'_>> = wanted.iter().map(|(_, _, key)| Op::Get(key)).collect();
    let items = run(access, &gets)
        .await?
        .into_iter()
        .map(|r| r.and_then(Reply::item))
        .collect::<Result<Vec<_>>>()?;
    let mut found: Vec<BTreeMap<u64, Stats>> = vec![BTreeMap::new(); plans.len()];
    for ((p, b, key), item) in wanted.iter().zip(items) {
        if let Some(item) = item {
            let stats = decode_bucket(&item.value).map_err(|r| corrupt(key, r))?;
            found[*p].insert(*b, stats);
        }
    }
    // After the read: a loss before it is counted.
    let checked: Vec<Read<'_>> = wanted
        .iter()
        .filter(|(p, _, _)| plans[*p].series.loss_check)
        .map(|(p, b, key)| {
            let plan = &plans[*p];
            let start_ms = b.saturating_mul(plan.resolution.step_ms);
            Read {
                key,
                start_ms,
                what: format!(
                    "bucket {b} of time series {} (step {} ms, from {start_ms} ms)",
                    plan.series.name, plan.resolution.step_ms
                ),
            }
        })
        .collect();
    // The largest skew of the series read: the widest margin.
    let skew_ms = plans.iter().map(|p| p.series.skew_ms).max().unwrap_or(0);
    check_retained(access, "TimeSeries read", &checked, skew_ms).await?;
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

    #[test]
    fn buckets_round_trip_at_the_extremes() {
        let mut stats = Stats::of(i64::MIN);
        stats.merge(&Stats::of(i64::MAX));
        stats.merge(&Stats::of(-1));
        let bytes = encode_bucket(&stats);
        assert_eq!(bytes.len(), BUCKET_LEN);
        assert_eq!(decode_bucket(&bytes), Ok(stats));
        assert_eq!(stats.sum, i128::from(i64::MIN) + i128::from(i64::MAX) - 1);
        let one = Stats::of(7);
        assert_eq!(decode_bucket(&encode_bucket(&one)), Ok(one));
    }

    #[test]
    fn impossible_aggregates_are_refused() {
        let bad = [
            Stats {
                count: 0,
                sum: 0,
                min: 0,
                max: 0,
            },
            Stats {
                count: 1,
                sum: 5,
                min: 1,
                max: 9,
            },
            Stats {
                count: 2,
                sum: 30,
                min: 5,
                max: 10,
            },
            Stats {
                count: 2,
                sum: 10,
                min: 9,
                max: 1,
            },
            Stats {
                count: u64::MAX,
                sum: 0,
                min: 0,
                max: 0,
            },
        ];
        for stats in bad {
            assert!(decode_bucket(&encode_bucket(&stats)).is_err(), "{stats:?}");
        }
        let ok = Stats {
            count: 3,
            sum: 16,
            min: 1,
            max: 10,
        };
        assert_eq!(decode_bucket(&encode_bucket(&ok)), Ok(ok));
    }

    #[test]
    fn garbage_is_refused_never_a_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..5000 {
            let len = (next() % 50) as usize;
            let mut garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if round % 2 == 0 && garbage.len() >= 2 {
                garbage[..2].copy_from_slice(&BUCKET_MAGIC);
            }
            if let Ok(stats) = decode_bucket(&garbage) {
                assert_eq!(encode_bucket(&stats), garbage);
            }
        }
        assert!(decode_bucket(b"t1").is_err());
        assert!(decode_bucket(b"42").is_err());
    }

    #[test]
    fn a_merge_into_a_full_bucket_is_refused() {
        let key = Key::new("ts:t:1000:7").unwrap();
        let full = Stats {
            count: MAX_SAMPLES_PER_BUCKET,
            sum: 0,
            min: 0,
            max: 0,
        };
        let item = Item {
            value: encode_bucket(&full),
            flags: 0,
            cas: 1,
        };
        assert!(matches!(
            merged(&key, Some(&item), 0),
            Err(Error::InvalidArgument(_))
        ));
        let none = merged(&key, None, -4).unwrap();
        assert_eq!(decode_bucket(&none), Ok(Stats::of(-4)));
    }
}

/// The stream of [`TimeSeries::range_iter`]: one page of buckets per item.
#[derive(Debug)]
pub struct RangeIter<'s> {
    series: &'s TimeSeries,
    step: Duration,
    page: u64,
    /// The next bucket number to read, and the last.
    next: u64,
    last: u64,
    step_ms: u64,
    done: bool,
    /// A bad `step`: the first item.
    error: Option<Error>,
}

impl RangeIter<'_> {
    /// The next page of the range, and advance; `None` past its end.
    fn window(&mut self) -> Option<Result<(u64, u64)>> {
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        if self.done || self.next > self.last {
            return None;
        }
        if !(1..=MAX_RANGE_BUCKETS).contains(&self.page) {
            self.done = true;
            return Some(Err(Error::InvalidArgument(format!(
                "a range page is 1 to {MAX_RANGE_BUCKETS} buckets; got {}",
                self.page
            ))));
        }
        let end = self.next.saturating_add(self.page - 1).min(self.last);
        let from = self.next.saturating_mul(self.step_ms);
        let to = end
            .saturating_mul(self.step_ms)
            .saturating_add(self.step_ms - 1);
        match end.checked_add(1) {
            Some(next) => self.next = next,
            None => self.done = true,
        }
        Some(Ok((from, to)))
    }

    /// The next page without blocking the thread: `None` past the end.
    pub async fn next_async(&mut self) -> Option<Result<Vec<Bucket>>> {
        let (from, to) = match self.window()? {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        let page = self.series.range_async(from, to, self.step).await;
        if page.is_err() {
            self.done = true;
        }
        Some(page)
    }
}

impl Iterator for RangeIter<'_> {
    type Item = Result<Vec<Bucket>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (from, to) = match self.window()? {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        let page = self.series.range(from, to, self.step);
        if page.is_err() {
            self.done = true;
        }
        Some(page)
    }
}
