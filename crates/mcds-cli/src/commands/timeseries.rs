//! `mcds series` and `mcds packed`: the mcds-timeseries structures (time
//! series of integer samples, packed per-slot counters).

use clap::{Args, Subcommand};
use std::time::Duration;

use mcds_core::Error;
use mcds_timeseries::{Bucket, PackedSeries, Stats, TimeSeries};
use serde_json::{Value, json};

use crate::context::{CliResult, Ctx, Failure, json_line};
use crate::{INVALID_INPUT, NEGATIVE, OK};

pub(crate) fn series(ctx: &Ctx, cmd: SeriesCmd) -> CliResult {
    let query = match cmd {
        SeriesCmd::Record {
            name,
            value,
            at_ms,
            shape,
        } => {
            let series = open_series(ctx, &name, &shape)?;
            let now = ctx.scope.clock().now_ms();
            let at = at_ms.unwrap_or(now);
            series.record(at, value)?;
            let skew = shape.trust.max_clock_skew;
            let recorded = series.resolutions().iter().any(|r| kept(r, at, now, skew));
            if !recorded {
                // TimeSeries::record skips such a sample without an error:
                // no read would see it.
                ctx.report.warn(
                    &format!(
                        "the sample at {at} ms is older than every resolution's retention: nothing was recorded"
                    ),
                    json!({ "series": name, "at_ms": at, "recorded": false }),
                );
            }
            if ctx.json {
                json_line(
                    json!({ "series": name, "at_ms": at, "value": value, "recorded": recorded }),
                );
            }
            return Ok(OK);
        }
        SeriesCmd::Union(multi) => return combine(ctx, multi, TimeSeries::union),
        SeriesCmd::Intersection(multi) => return combine(ctx, multi, TimeSeries::intersection),
        SeriesCmd::Range(q) => {
            // Streamed a page at a time: an explicit range of any number of
            // buckets, in bounded memory (the default window stays the
            // last MAX_RANGE_BUCKETS).
            let (series, from, to, step) =
                open(ctx, &q.name, &q.read, mcds_timeseries::MAX_RANGE_BUCKETS)?;
            for page in series.range_iter(from, to, step, 1000) {
                for bucket in page? {
                    print_bucket(ctx, json!(q.name), &bucket);
                }
            }
            return Ok(OK);
        }
        SeriesCmd::Aggregate(q) => (Aggregate::All, q),
        SeriesCmd::Count(q) => (Aggregate::Count, q),
        SeriesCmd::Sum(q) => (Aggregate::Sum, q),
        SeriesCmd::Avg(q) => (Aggregate::Avg, q),
        SeriesCmd::Min(q) => (Aggregate::Min, q),
        SeriesCmd::Max(q) => (Aggregate::Max, q),
    };
    aggregate(ctx, query)
}

/// Whether a sample at `at_ms` lands in a bucket of `r` still readable at
/// `now_ms`: one that ended less than the retention ago (as
/// [`mcds_timeseries::Resolution`] documents it).
fn kept(r: &mcds_timeseries::Resolution, at_ms: u64, now_ms: u64, skew: Duration) -> bool {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let step = ms(r.step()).max(1);
    let end = (at_ms / step).saturating_add(1).saturating_mul(step);
    // As TimeSeries::record: a reader the clock skew behind still reads it.
    end.saturating_add(ms(r.retention()))
        .saturating_add(ms(skew))
        > now_ms
}

/// Which aggregate of a range a command prints.
#[derive(Clone, Copy)]
enum Aggregate {
    All,
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// `series aggregate`, `count`, `sum`, `avg`, `min` and `max`: one read of
/// the range (as `TimeSeries::aggregate`), printed as the command asks.
/// `count` and `sum` of an empty range are 0; the others have no value and
/// exit 1, printing nothing (`--json`: nulls).
fn aggregate(ctx: &Ctx, (what, q): (Aggregate, SeriesQuery)) -> CliResult {
    let (series, from, to, step) = open(ctx, &q.name, &q.read, mcds_timeseries::MAX_RANGE_BUCKETS)?;
    let stats = series.aggregate(from, to, step)?;
    let name = q.name;
    let (text, value, field) = match (what, stats) {
        (Aggregate::All, Some(s)) => {
            let mut out = stats_json(&s);
            out["series"] = json!(name);
            ctx.print(stats_text(&s), out);
            return Ok(OK);
        }
        (Aggregate::All, None) => {
            if ctx.json {
                json_line(json!({
                    "series": name, "count": 0, "sum": 0, "min": null, "max": null, "avg": null
                }));
            }
            return Ok(NEGATIVE);
        }
        (Aggregate::Count, s) => {
            let count = s.map_or(0, |s| s.count);
            (Some(count.to_string()), json!(count), "count")
        }
        (Aggregate::Sum, s) => {
            let sum = s.map_or(0, |s| s.sum);
            (Some(sum.to_string()), sum_json(sum), "sum")
        }
        (Aggregate::Avg, s) => (
            s.map(|s| s.avg().to_string()),
            json_of(s, |s| json!(s.avg())),
            "avg",
        ),
        (Aggregate::Min, s) => (
            s.map(|s| s.min.to_string()),
            json_of(s, |s| json!(s.min)),
            "min",
        ),
        (Aggregate::Max, s) => (
            s.map(|s| s.max.to_string()),
            json_of(s, |s| json!(s.max)),
            "max",
        ),
    };
    let found = text.is_some();
    let mut out = json!({ "series": name });
    out[field] = value;
    match text {
        Some(text) => ctx.print(text, out),
        None if ctx.json => json_line(out),
        None => {}
    }
    Ok(if found { OK } else { NEGATIVE })
}

/// `f` of the stats, or JSON null without them.
fn json_of(stats: Option<Stats>, f: impl Fn(&Stats) -> Value) -> Value {
    stats.as_ref().map_or(Value::Null, f)
}

/// [`TimeSeries::union`] or [`TimeSeries::intersection`].
type Combine = fn(&[&TimeSeries], u64, u64, Duration) -> mcds_core::Result<Vec<Bucket>>;

/// `series union` and `series intersection`: the merged buckets of several
/// series, read in one batch.
fn combine(ctx: &Ctx, multi: SeriesMulti, read: Combine) -> CliResult {
    let mut series = Vec::with_capacity(multi.names.len());
    let mut window = None;
    // A read takes at most MAX_RANGE_BUCKETS over all its series.
    let budget = mcds_timeseries::MAX_RANGE_BUCKETS / multi.names.len().max(1) as u64;
    for name in &multi.names {
        let (s, from, to, step) = open(ctx, name, &multi.read, budget)?;
        window = Some((from, to, step));
        series.push(s);
    }
    let Some((from, to, step)) = window else {
        return Ok(OK); // clap requires a name
    };
    let refs: Vec<&TimeSeries> = series.iter().collect();
    for bucket in read(&refs, from, to, step)? {
        print_bucket(ctx, json!(multi.names), &bucket);
    }
    Ok(OK)
}

/// The series NAME in the shape the command line gives, and the range and
/// step to read it at (the finest resolution unless --step says).
fn open(
    ctx: &Ctx,
    name: &str,
    read: &SeriesRead,
    budget: u64,
) -> Result<(TimeSeries, u64, u64, Duration), Error> {
    let series = open_series(ctx, name, &read.shape)?;
    let step = match read.step {
        Some(step) => step,
        None => series.resolutions()[0].step(),
    };
    let (from, to) = read
        .range
        .resolve(ctx.scope.clock().now_ms(), step, budget)?;
    Ok((series, from, to, step))
}

/// `COUNT SUM MIN MAX AVG`.
fn stats_text(s: &Stats) -> String {
    format!("{} {} {} {} {}", s.count, s.sum, s.min, s.max, s.avg())
}

/// The stats as JSON fields.
fn stats_json(s: &Stats) -> Value {
    json!({
        "count": s.count,
        "sum": sum_json(s.sum),
        "min": s.min,
        "max": s.max,
        "avg": s.avg(),
    })
}

/// An exact sum as a JSON number, or as a decimal string beyond 64 bits
/// (where JSON readers lose precision, and serde_json has no number).
fn sum_json(sum: i128) -> Value {
    i64::try_from(sum).map_or_else(|_| json!(sum.to_string()), |s| json!(s))
}

/// One bucket: `START_MS COUNT SUM MIN MAX AVG`, or a JSON line naming the
/// series it is of.
fn print_bucket(ctx: &Ctx, series: Value, b: &Bucket) {
    let mut out = stats_json(&b.stats);
    out["series"] = series;
    out["start_ms"] = json!(b.start_ms);
    ctx.print(format!("{} {}", b.start_ms, stats_text(&b.stats)), out);
}

pub(crate) fn packed(ctx: &Ctx, cmd: PackedCmd) -> CliResult {
    let now = || ctx.scope.clock().now_ms();
    match cmd {
        PackedCmd::Incr {
            name,
            delta,
            at_ms,
            shape,
        } => {
            let at = at_ms.unwrap_or_else(now);
            let value = open_packed(ctx, &name, &shape)?.incr(at, delta.unwrap_or(1))?;
            ctx.print(
                value,
                json!({ "packed": name, "at_ms": at, "value": value }),
            );
        }
        PackedCmd::Get { name, at_ms, shape } => {
            let at = at_ms.unwrap_or_else(now);
            let value = open_packed(ctx, &name, &shape)?.get(at)?;
            ctx.print(
                value,
                json!({ "packed": name, "at_ms": at, "value": value }),
            );
        }
        PackedCmd::Range { name, range, shape } => {
            let (from, to) = range.resolve(now(), shape.slot, mcds_timeseries::MAX_RANGE_SLOTS)?;
            for slot in open_packed(ctx, &name, &shape)?.range(from, to)? {
                ctx.print(
                    format!("{} {}", slot.start_ms, slot.value),
                    json!({ "packed": name, "start_ms": slot.start_ms, "value": slot.value }),
                );
            }
        }
        PackedCmd::Sum { name, range, shape } => {
            let (from, to) = range.resolve(now(), shape.slot, mcds_timeseries::MAX_RANGE_SLOTS)?;
            let sum = open_packed(ctx, &name, &shape)?.sum(from, to)?;
            ctx.print(
                sum,
                json!({ "packed": name, "from_ms": from, "to_ms": to, "sum": sum }),
            );
        }
    }
    Ok(OK)
}

/// The packed series NAME, in the shape the command line gives: --period
/// must be a whole number of --slot slots.
fn open_packed(ctx: &Ctx, name: &str, shape: &PackedShape) -> Result<PackedSeries, Failure> {
    let (slot, period) = (shape.slot.as_nanos(), shape.period.as_nanos());
    if slot == 0 || period == 0 || period % slot != 0 {
        return Err(Failure {
            code: INVALID_INPUT,
            message: format!(
                "--period {} is not a whole number of --slot {} slots: give a period that is a multiple of the slot, e.g. --slot 1m --period 1d (1440 slots per item)",
                crate::duration::show(shape.period),
                crate::duration::show(shape.slot)
            ),
        });
    }
    let slots = usize::try_from(period / slot).unwrap_or(usize::MAX);
    let retention = shape.retention.unwrap_or(shape.period);
    Ok(PackedSeries::new(
        &ctx.scope,
        name,
        shape.slot,
        slots,
        shape.width.into(),
        retention,
    )?
    .with_loss_check(!shape.trust.no_loss_check)
    .with_max_clock_skew(shape.trust.max_clock_skew))
}

/// The time series NAME in the shape the command line gives.
fn open_series(ctx: &Ctx, name: &str, shape: &SeriesShape) -> Result<TimeSeries, Error> {
    Ok(TimeSeries::new(&ctx.scope, name, &shape.resolutions)?
        .with_loss_check(!shape.trust.no_loss_check)
        .with_max_clock_skew(shape.trust.max_clock_skew))
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

/// The time range of a read: Unix milliseconds, inclusive, or the last
/// DURATION.
#[derive(Args, Debug)]
pub(crate) struct TimeRange {
    /// A Unix millisecond in the first bucket (or slot) read: reads take
    /// whole buckets (default: the oldest kept, at most the newest 10000
    /// buckets or 100000 slots a read takes)
    #[arg(long, value_name = "MS", conflicts_with = "last")]
    pub(crate) from_ms: Option<u64>,
    /// A Unix millisecond in the last bucket (or slot) read (default: now)
    #[arg(long, value_name = "MS")]
    pub(crate) to_ms: Option<u64>,
    /// Read from DURATION before --to-ms (or now) instead of from --from-ms
    /// (5m, 1h, 1d)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) last: Option<std::time::Duration>,
}

impl TimeRange {
    /// `(from_ms, to_ms)`, with `now_ms` for what is left out. Without a
    /// start, the read starts `max_units - 1` units of `unit` before its end
    /// (the most one read takes; the library skips what is past retention).
    /// A start after the end is an error, not an empty range.
    pub(crate) fn resolve(
        &self,
        now_ms: u64,
        unit: std::time::Duration,
        max_units: u64,
    ) -> Result<(u64, u64), mcds_core::Error> {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let to = self.to_ms.unwrap_or(now_ms);
        let from = match (self.last, self.from_ms) {
            (Some(last), _) => to.saturating_sub(ms(last)),
            (None, Some(from)) => from,
            (None, None) => {
                let unit = ms(unit).max(1);
                (to / unit).saturating_sub(max_units.saturating_sub(1)) * unit
            }
        };
        if from > to {
            return Err(mcds_core::Error::InvalidArgument(format!(
                "--from-ms {from} is after --to-ms {to}: give the earlier time first"
            )));
        }
        Ok((from, to))
    }
}

/// `--resolution STEP:RETENTION` of `series`.
pub(crate) fn parse_resolution(text: &str) -> Result<mcds_timeseries::Resolution, String> {
    let Some((step, retention)) = text.split_once(':') else {
        return Err(format!(
            "invalid resolution {text:?}: use STEP:RETENTION, e.g. 1m:1d (buckets of a minute, kept a day)"
        ));
    };
    let step = crate::duration::parse(step)?;
    let retention = crate::duration::parse(retention)?;
    mcds_timeseries::Resolution::new(step, retention).map_err(|e| e.to_string())
}

/// The shape of a time series: every client of one series must give the
/// same resolutions.
#[derive(Args, Debug)]
pub(crate) struct SeriesShape {
    /// A resolution: buckets of STEP, readable for RETENTION after they end
    /// (1s:1h, 1m:1d, 1h:30d). Repeat it to record at several at once (up
    /// to 8, distinct steps); every client of a series gives the same ones
    #[arg(long = "resolution", value_name = "STEP:RETENTION", required = true,
          value_parser = parse_resolution)]
    pub(crate) resolutions: Vec<mcds_timeseries::Resolution>,
    #[command(flatten)]
    pub(crate) trust: LossCheck,
}

/// How a time series' reads tell lost data, and the clock skew they allow.
#[derive(Args, Debug)]
pub(crate) struct LossCheck {
    /// Read what the servers hold without asking whether they lost items
    /// (a restart, flush or eviction) since the data was written. By
    /// default a read fails (exit 3, "may have lost data") for a bucket
    /// its server cannot vouch for, including one from before the server
    /// started; with this, such a bucket may read short or empty
    #[arg(long)]
    pub(crate) no_loss_check: bool,
    /// The most the clocks of the series' clients differ by: a sample may
    /// lie at most this far ahead of now, and a read vouches for a bucket
    /// that starts twice this long after its server's last loss
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::duration::parse)]
    pub(crate) max_clock_skew: std::time::Duration,
}

/// What a read of a time series covers, and at which resolution.
#[derive(Args, Debug)]
pub(crate) struct SeriesRead {
    #[command(flatten)]
    pub(crate) range: TimeRange,
    /// The bucket length read: one of the --resolution steps (default: the
    /// finest)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) step: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) shape: SeriesShape,
}

/// A read of one time series.
#[derive(Args, Debug)]
pub(crate) struct SeriesQuery {
    /// The series
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) read: SeriesRead,
}

/// A read of several time series at once.
#[derive(Args, Debug)]
pub(crate) struct SeriesMulti {
    /// The series (all recorded at --step)
    #[arg(required = true)]
    pub(crate) names: Vec<String>,
    #[command(flatten)]
    pub(crate) read: SeriesRead,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SeriesCmd {
    /// Record a sample VALUE at --at-ms (default now), at every resolution
    ///
    /// Prints nothing (--json: the sample, and "recorded": false when it is
    /// past every retention). Counts, sums, min and max are exact under any
    /// number of concurrent recorders: each bucket is updated by CAS, which
    /// needs a memcached reached directly (not through a proxy). A sample
    /// older than every resolution's retention is not recorded (a warning
    /// says so; exit 0); one more than --max-clock-skew ahead of now is
    /// refused (exit 3).
    Record {
        /// The series
        name: String,
        /// The sample, an integer (negative ones too)
        #[arg(allow_negative_numbers = true)]
        value: i64,
        /// Sample time in Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: SeriesShape,
    },
    /// Print the non-empty buckets of the range, oldest first, one line
    /// each: `START_MS COUNT SUM MIN MAX AVG`
    ///
    /// --json: one object per bucket and line (as everywhere under --json,
    /// a number beyond 2^53 − 1 is a string).
    Range(SeriesQuery),
    /// Print the aggregates of every sample in the range: `COUNT SUM MIN MAX
    /// AVG`; exit 1 (printing nothing) when it has none
    Aggregate(SeriesQuery),
    /// Print how many samples the range holds
    Count(SeriesQuery),
    /// Print the exact sum of the range's samples (0 when none)
    Sum(SeriesQuery),
    /// Print the mean of the range's samples; exit 1 (printing nothing)
    /// when it has none
    Avg(SeriesQuery),
    /// Print the smallest sample of the range; exit 1 (printing nothing)
    /// when it has none
    Min(SeriesQuery),
    /// Print the largest sample of the range; exit 1 (printing nothing)
    /// when it has none
    Max(SeriesQuery),
    /// Print the buckets where any of the series has samples, each merging
    /// their samples there (as `range` prints them)
    ///
    /// Say the latency of every server of a fleet, per minute: `mcds series
    /// union latency:web1 latency:web2 --step 1m --last 1h --resolution 1m:1d`.
    /// The series are read in one batch.
    Union(SeriesMulti),
    /// Print the buckets where every one of the series has samples, each
    /// merging their samples there (as `range` prints them)
    Intersection(SeriesMulti),
}

/// How wide a packed series' slots are.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum Width {
    /// 1 byte, counts to 255
    U8,
    /// 2 bytes, counts to 65535
    U16,
    /// 4 bytes, counts to 4294967295
    U32,
}

impl From<Width> for mcds_timeseries::SlotWidth {
    fn from(width: Width) -> Self {
        match width {
            Width::U8 => mcds_timeseries::SlotWidth::U8,
            Width::U16 => mcds_timeseries::SlotWidth::U16,
            Width::U32 => mcds_timeseries::SlotWidth::U32,
        }
    }
}

/// The shape of a packed series: every client of one series must give the
/// same --slot, --period and --width.
#[derive(Args, Debug)]
pub(crate) struct PackedShape {
    /// Slot length: each slot counts the events of this long (1m, 1h, 500ms)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) slot: std::time::Duration,
    /// How long one item covers: a whole number of slots, 1 to 65536 of them
    /// (--period 1d with --slot 1m: 1440 slots per item)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) period: std::time::Duration,
    /// Slot width; a slot's count saturates at its largest value
    #[arg(long, value_enum, default_value = "u32")]
    pub(crate) width: Width,
    /// How long a period stays readable after it ends (default: one period)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) retention: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) trust: LossCheck,
}

#[derive(Subcommand, Debug)]
pub(crate) enum PackedCmd {
    /// Add DELTA (default 1) to the slot of --at-ms (default now); prints
    /// the slot's new count
    ///
    /// The count saturates at the width's largest value (255 for u8). A slot
    /// past retention is refused (exit 3).
    Incr {
        /// The series
        name: String,
        /// How much to add (default 1)
        delta: Option<u32>,
        /// A time in the slot, Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print the count of the slot of --at-ms (default now)
    Get {
        /// The series
        name: String,
        /// A time in the slot, Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print every slot of the range within retention, oldest first, zeros
    /// included: `START_MS COUNT` per line (at most 100000 slots)
    Range {
        /// The series
        name: String,
        #[command(flatten)]
        range: TimeRange,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print the sum of the slots of the range
    Sum {
        /// The series
        name: String,
        #[command(flatten)]
        range: TimeRange,
        #[command(flatten)]
        shape: PackedShape,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_beyond_64_bits_are_strings() {
        assert_eq!(sum_json(-5), json!(-5));
        assert_eq!(sum_json(i128::from(i64::MAX)), json!(i64::MAX));
        let big = i128::from(i64::MAX) + 1;
        assert_eq!(sum_json(big), json!("9223372036854775808"));
        assert_eq!(sum_json(-big - 1), json!("-9223372036854775809"));
    }

    #[test]
    fn a_sample_is_kept_while_its_bucket_is_within_retention() {
        let minute_for_an_hour =
            mcds_timeseries::Resolution::new(Duration::from_secs(60), Duration::from_secs(3600))
                .unwrap();
        let kept = |at, now| kept(&minute_for_an_hour, at, now, Duration::ZERO);
        // The bucket [0, 60 s) is readable until 60 s + 1 h.
        assert!(kept(0, 3_659_999));
        assert!(kept(59_999, 3_659_999));
        assert!(!kept(59_999, 3_660_000));
        assert!(kept(60_000, 3_660_000));
        assert!(kept(u64::MAX, 0));
        // ... and 30 s longer for a reader whose clock is 30 s behind.
        let skewed = |at, now| super::kept(&minute_for_an_hour, at, now, Duration::from_secs(30));
        assert!(skewed(0, 3_689_999));
        assert!(!skewed(0, 3_690_000));
    }

    #[test]
    fn stats_print_as_columns() {
        let mut s = Stats::of(10);
        s.merge(&Stats::of(-5));
        assert_eq!(stats_text(&s), "2 5 -5 10 2.5");
    }

    #[test]
    fn resolutions_are_step_colon_retention() {
        use std::time::Duration;
        let r = parse_resolution("1m:1d").unwrap();
        assert_eq!(
            (r.step(), r.retention()),
            (Duration::from_secs(60), Duration::from_secs(86_400))
        );
        let r = parse_resolution("500ms:1h30m").unwrap();
        assert_eq!(
            (r.step(), r.retention()),
            (Duration::from_millis(500), Duration::from_secs(5400))
        );
        for (bad, says) in [
            ("1m", "STEP:RETENTION"),
            ("", "STEP:RETENTION"),
            ("1m:", "500ms"),
            ("x:1d", "500ms"),
            ("1m:1s", "raise it"),
            ("0:1d", "step"),
        ] {
            let e = parse_resolution(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn time_ranges_default_to_the_most_one_read_takes_up_to_now() {
        use std::time::Duration;
        let range = |from_ms, to_ms, last: Option<u64>| TimeRange {
            from_ms,
            to_ms,
            last: last.map(Duration::from_secs),
        };
        let resolve = |r: TimeRange| r.resolve(5000, Duration::from_millis(10), 1000).unwrap();
        assert_eq!(resolve(range(None, None, None)), (0, 5000));
        assert_eq!(
            range(None, None, None)
                .resolve(5000, Duration::from_millis(10), 100)
                .unwrap(),
            (4010, 5000),
            "100 units of 10 ms, the last one 5000's"
        );
        assert_eq!(resolve(range(Some(10), Some(20), None)), (10, 20));
        assert_eq!(resolve(range(None, None, Some(2))), (3000, 5000));
        assert_eq!(resolve(range(None, Some(4000), Some(2))), (2000, 4000));
        assert_eq!(resolve(range(None, None, Some(60))), (0, 5000));
        let reversed =
            range(Some(30), Some(20), None).resolve(5000, Duration::from_millis(10), 1000);
        assert!(reversed.unwrap_err().to_string().contains("after --to-ms"));
    }
}
