//! `mcds series` and `mcds packed`: the mcds-timeseries structures (time
//! series of integer samples, packed per-slot counters).

use std::time::Duration;

use mcds_core::Error;
use mcds_timeseries::{Bucket, PackedSeries, Stats, TimeSeries};
use serde_json::{Value, json};

use crate::args::{
    PackedCmd, PackedShape, SeriesCmd, SeriesMulti, SeriesQuery, SeriesRead, SeriesShape,
};
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
            let (series, from, to, step) =
                open(ctx, &q.name, &q.read, mcds_timeseries::MAX_RANGE_BUCKETS)?;
            for bucket in series.range(from, to, step)? {
                print_bucket(ctx, json!(q.name), &bucket);
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
}
