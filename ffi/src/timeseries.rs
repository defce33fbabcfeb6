//! The time series: `mcds_timeseries` (count, exact sum, min and max of
//! `int64_t` samples per bucket, at up to 8 resolutions) and
//! `mcds_packed_series` (dense `u8`/`u16`/`u32` counters per time slot,
//! packed many to an item). Their plain values (`mcds_resolution`,
//! `mcds_i128`, `mcds_stats`, `mcds_bucket`, `mcds_slot`) are `#[repr(C)]`
//! structs the caller owns; reads that return many buckets or slots answer
//! with a result list (`mcds_bucket_list`, `mcds_slot_list`, see `list`),
//! since the caller cannot know beforehand how many come back (retention
//! trims a range, empty buckets are left out).
//!
//! Times are Unix milliseconds (`uint64_t`), as in the Rust crate; steps,
//! slots and retentions are whole milliseconds. Records and reads take
//! "now" from the system clock.

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_timeseries::{Bucket, PackedSeries, Resolution, Slot, SlotWidth, Stats, TimeSeries};

use crate::boundary::{
    Fail, MAX_HANDLES, array, boundary, c_string, create, free, handle, null, out_array, out_ptr,
    query, write, write_array,
};
use crate::list::{mcds_bucket_list, mcds_slot_list};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// One resolution of a time series: buckets of `step_ms`, readable for
/// `retention_ms` after each bucket's end (at least one step, at most 100
/// years).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_resolution {
    /// The bucket length, whole milliseconds (at least 1).
    pub step_ms: u64,
    /// How long a bucket stays readable after its end, milliseconds.
    pub retention_ms: u64,
}

/// A signed 128-bit integer in two halves, for the exact sums of a time
/// series (C has no portable 128-bit type). The value is
/// `hi * 2^64 + lo`: with GCC or Clang,
/// `(__int128)x.hi * ((__int128)1 << 64) + x.lo` (not `x.hi << 64`, which
/// is undefined for a negative `hi`). It fits an `int64_t` exactly when
/// `hi` is the sign of `lo` read as an `int64_t`
/// (`x.hi == ((int64_t)x.lo < 0 ? -1 : 0)`), and is then `(int64_t)x.lo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_i128 {
    /// The high 64 bits, signed: the value divided by 2^64, rounded down.
    pub hi: i64,
    /// The low 64 bits: the value modulo 2^64.
    pub lo: u64,
}

impl From<i128> for mcds_i128 {
    fn from(v: i128) -> mcds_i128 {
        // Both casts keep exactly the bits of their half.
        mcds_i128 {
            hi: (v >> 64) as i64,
            lo: v as u64,
        }
    }
}

/// The aggregates of the samples of a bucket or a range: how many, their
/// exact sum, the smallest and the largest. All zeros when a read found no
/// sample (its `out_found` says so).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_stats {
    /// How many samples.
    pub count: u64,
    /// Their exact sum (see `mcds_i128`).
    pub sum: mcds_i128,
    /// The smallest sample.
    pub min: i64,
    /// The largest sample.
    pub max: i64,
}

impl From<Stats> for mcds_stats {
    fn from(s: Stats) -> mcds_stats {
        mcds_stats {
            count: s.count,
            sum: s.sum.into(),
            min: s.min,
            max: s.max,
        }
    }
}

/// One non-empty bucket of a time series read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_bucket {
    /// The bucket's start, Unix milliseconds (a multiple of the step).
    pub start_ms: u64,
    /// Its samples' aggregates.
    pub stats: mcds_stats,
}

impl From<Bucket> for mcds_bucket {
    fn from(b: Bucket) -> mcds_bucket {
        mcds_bucket {
            start_ms: b.start_ms,
            stats: b.stats.into(),
        }
    }
}

/// One slot of a packed series read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_slot {
    /// The slot's start, Unix milliseconds (a multiple of the slot length).
    pub start_ms: u64,
    /// Its count (0 when nothing was counted).
    pub value: u32,
}

impl From<Slot> for mcds_slot {
    fn from(s: Slot) -> mcds_slot {
        mcds_slot {
            start_ms: s.start_ms,
            value: s.value,
        }
    }
}

/// A time series: count, exact sum, min and max of `int64_t` samples per
/// time bucket, at one or more resolutions.
pub struct mcds_timeseries {
    series: TimeSeries,
}

/// Create the time series `name`, recording at each of the `count`
/// resolutions at `resolutions` (1 to 8, distinct steps; the array is
/// borrowed for the call). Every process recording into or reading the
/// series must give the same resolutions. `MCDS_INVALID_ARGUMENT` for no
/// resolution or more than 8, a step or retention of 0 ms or beyond 100
/// years, a retention shorter than its step, or a step given twice;
/// `MCDS_INVALID_KEY` if the name makes a bad key. `*out` is a new handle
/// the caller owns: free it with `mcds_timeseries_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `resolutions` NULL
/// or `count` readable structs; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_new(
    store: *const mcds_store,
    name: *const c_char,
    resolutions: *const mcds_resolution,
    count: usize,
    out: *mut *mut mcds_timeseries,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the array is read inside the
    // boundary, after the other NULL checks).
    unsafe {
        create(store, name, out, |scope, name| {
            let given = array(resolutions, count, MAX_HANDLES, "resolutions")?;
            let resolutions = given
                .iter()
                .map(|r| {
                    Resolution::new(
                        Duration::from_millis(r.step_ms),
                        Duration::from_millis(r.retention_ms),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(mcds_timeseries {
                series: TimeSeries::new(scope, name, &resolutions)?,
            })
        })
    }
}

/// A handle on the same series whose reads ask the store whether it lost
/// items since the buckets they return could first be written (`check`
/// true, the default) or not (false: a read may then return a bucket
/// short of samples, or none for one that had some, without an error —
/// for a store that cannot tell, or samples imported into a server from
/// before it started). See the Rust `TimeSeries` docs, "Reads, and lost
/// data". `ts` is unchanged and borrowed for the call. `*out` is a new
/// handle the caller owns: free it with `mcds_timeseries_free`.
///
/// # Safety
/// `ts` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_with_loss_check(
    ts: *const mcds_timeseries,
    check: bool,
    out: *mut *mut mcds_timeseries,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out, "out", |ts| {
            let series = ts.series.clone().with_loss_check(check);
            Ok(Box::into_raw(Box::new(mcds_timeseries { series })))
        })
    }
}

/// A handle on the same series with `skew_ms` as the most the clocks of
/// its clients differ by (default 60 000): a sample may lie at most this
/// far ahead of the recording client's clock (`MCDS_INVALID_ARGUMENT`
/// otherwise), and a read vouches for a bucket only if it starts twice
/// this long after its server's last loss. `ts` is unchanged and borrowed
/// for the call. `*out` is a new handle the caller owns: free it with
/// `mcds_timeseries_free`.
///
/// # Safety
/// `ts` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_with_max_clock_skew(
    ts: *const mcds_timeseries,
    skew_ms: u64,
    out: *mut *mut mcds_timeseries,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out, "out", |ts| {
            let series = ts
                .series
                .clone()
                .with_max_clock_skew(Duration::from_millis(skew_ms));
            Ok(Box::into_raw(Box::new(mcds_timeseries { series })))
        })
    }
}

/// The series' name, as a new NUL-terminated string in `*out_name` that
/// the caller owns: free it with `mcds_string_free`.
///
/// # Safety
/// `ts` NULL or live; `out_name` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_name(
    ts: *const mcds_timeseries,
    out_name: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out_name, "out_name", |ts| {
            Ok(c_string(ts.series.name()))
        })
    }
}

/// The series' resolutions, finest first: written to the first of the
/// `capacity` structs at `out` (8 always suffice), their number in
/// `*out_len`. `MCDS_INVALID_ARGUMENT` (nothing written) if `capacity` is
/// below that number.
///
/// # Safety
/// `ts` NULL or live; `out` NULL or `capacity` writable structs; `out_len`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_resolutions(
    ts: *const mcds_timeseries,
    out: *mut mcds_resolution,
    capacity: usize,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let ts = unsafe { handle(ts, "timeseries") }?;
        let (out, out_len) = (
            out_array(out, capacity, "out")?,
            out_ptr(out_len, "out_len")?,
        );
        let resolutions = ts.series.resolutions();
        if resolutions.len() > capacity {
            return Err(Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "time series {} has {} resolutions; out has room for {capacity} — pass an array of 8",
                    ts.series.name(),
                    resolutions.len()
                ),
            ));
        }
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let values = resolutions.iter().map(|r| mcds_resolution {
            step_ms: ms(r.step()),
            retention_ms: ms(r.retention()),
        });
        // SAFETY: `out` checked for `capacity` slots, at least as many as
        // the values; `out_len` checked non-NULL.
        unsafe {
            write_array(out, capacity, values);
            write(out_len, resolutions.len());
        }
        Ok(())
    })
}

/// Record `value` at `ts_ms` (Unix ms, at most the clock skew — 60 s by
/// default — ahead of the system clock, else `MCDS_INVALID_ARGUMENT`) at
/// every resolution whose bucket is still within retention (none is not
/// an error: nothing is written). Each bucket is one item, changed by CAS:
/// 2 round trips per server, 2 more per lost CAS race (up to 64 attempts,
/// then `MCDS_CONFLICT`). `MCDS_UNSUPPORTED` on a store without CAS
/// (memcached `-C`, a proxy). A failure wrote nothing, or is
/// `MCDS_AMBIGUOUS` when some resolutions took the sample: see the Rust
/// `TimeSeries` docs.
///
/// # Safety
/// `ts` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_record(
    ts: *const mcds_timeseries,
    ts_ms: u64,
    value: i64,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let ts = unsafe { handle(ts, "timeseries") }?;
        Ok(ts.series.record(ts_ms, value)?)
    })
}

/// Record `value` now, by the system clock (as `mcds_timeseries_record`).
///
/// # Safety
/// `ts` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_record_now(
    ts: *const mcds_timeseries,
    value: i64,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let ts = unsafe { handle(ts, "timeseries") }?;
        Ok(ts.series.record_now(value)?)
    })
}

/// The step of a read (the series checks that it is one of its own).
fn step(step_ms: u64) -> Duration {
    Duration::from_millis(step_ms)
}

/// The non-empty buckets of resolution `step_ms` (one of the series'
/// steps, else `MCDS_INVALID_ARGUMENT`) from the one containing `from_ms`
/// to the one containing `to_ms` (Unix ms, inclusive), oldest first, as a
/// new list in `*out` that the caller owns: free it with
/// `mcds_bucket_list_free`. Buckets past retention are not read; `from_ms`
/// after `to_ms` gives an empty list. At most 10 000 buckets within
/// retention, else `MCDS_INVALID_ARGUMENT`. `MCDS_LOST` for a bucket
/// whose server lost items (a restart, flush or eviction) since it could
/// first be written, so that it may be short or missing (see
/// `mcds_timeseries_with_loss_check`); `MCDS_CORRUPT` for bytes no record
/// wrote;
/// `MCDS_UNSUPPORTED` through a store that cannot say whether it lost
/// items (a proxy). One round trip per server for the buckets, then two
/// more per server (memcached's `stats` and its loss record) for the loss
/// check.
///
/// # Safety
/// `ts` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_range(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out: *mut *mut mcds_bucket_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out, "out", |ts| {
            let buckets = ts.series.range(from_ms, to_ms, step(step_ms))?;
            Ok(mcds_bucket_list::boxed(buckets))
        })
    }
}

/// An aggregate that may find no sample: `*out_found` says whether it did,
/// and `*out_value` is the value (`T`'s default when none).
///
/// # Safety
/// `ts` NULL or live; `out_found` and `out_value` NULL or writable.
unsafe fn maybe<T: Default>(
    ts: *const mcds_timeseries,
    out_found: *mut bool,
    out_value: *mut T,
    f: impl FnOnce(&TimeSeries) -> Result<Option<T>, Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let ts = unsafe { handle(ts, "timeseries") }?;
        let (out_found, out_value) = (
            out_ptr(out_found, "out_found")?,
            out_ptr(out_value, "out_value")?,
        );
        let value = f(&ts.series)?;
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_found, value.is_some());
            write(out_value, value.unwrap_or_default());
        }
        Ok(())
    })
}

/// The aggregates of every sample in the range (as in
/// `mcds_timeseries_range`, one read) in `*out_value`, and whether there
/// is any in `*out_found` (when none, `*out_value` is all zeros). The sum
/// is exact, in two halves (`mcds_i128`).
///
/// # Safety
/// `ts` NULL or live; `out_found` and `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_aggregate(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_found: *mut bool,
    out_value: *mut mcds_stats,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        maybe(ts, out_found, out_value, |s| {
            Ok(s.aggregate(from_ms, to_ms, step(step_ms))?.map(Into::into))
        })
    }
}

/// How many samples the range holds (as in `mcds_timeseries_range`), in
/// `*out_count`.
///
/// # Safety
/// `ts` NULL or live; `out_count` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_count(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_count: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out_count, "out_count", |ts| {
            Ok(ts.series.count(from_ms, to_ms, step(step_ms))?)
        })
    }
}

/// The exact sum of the range's samples (0 when none; as in
/// `mcds_timeseries_range`), in `*out_sum`: two halves, never truncated
/// (see `mcds_i128` for rebuilding it).
///
/// # Safety
/// `ts` NULL or live; `out_sum` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_sum(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_sum: *mut mcds_i128,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ts, "timeseries", out_sum, "out_sum", |ts| {
            Ok(ts.series.sum(from_ms, to_ms, step(step_ms))?.into())
        })
    }
}

/// The mean of the range's samples (the sum rounded to a `double`, over the
/// count: as Rust's `Stats::avg`, so within an ulp of the exact mean) in `*out_value`, and whether there is any sample in
/// `*out_found` (when none, `*out_value` is 0).
///
/// # Safety
/// `ts` NULL or live; `out_found` and `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_avg(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_found: *mut bool,
    out_value: *mut f64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        maybe(ts, out_found, out_value, |s| {
            Ok(s.avg(from_ms, to_ms, step(step_ms))?)
        })
    }
}

/// The smallest sample of the range in `*out_value`, and whether there is
/// any in `*out_found` (when none, `*out_value` is 0).
///
/// # Safety
/// `ts` NULL or live; `out_found` and `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_min(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_found: *mut bool,
    out_value: *mut i64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        maybe(ts, out_found, out_value, |s| {
            Ok(s.min(from_ms, to_ms, step(step_ms))?)
        })
    }
}

/// The largest sample of the range in `*out_value`, and whether there is
/// any in `*out_found` (when none, `*out_value` is 0).
///
/// # Safety
/// `ts` NULL or live; `out_found` and `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_max(
    ts: *const mcds_timeseries,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out_found: *mut bool,
    out_value: *mut i64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        maybe(ts, out_found, out_value, |s| {
            Ok(s.max(from_ms, to_ms, step(step_ms))?)
        })
    }
}

/// Borrow the `count` series at `series` (NULL when `count` is 0; at most
/// 100 000).
///
/// # Safety
/// `series` NULL or `count` readable pointers, each NULL or live.
unsafe fn many<'a>(
    series: *const *const mcds_timeseries,
    count: usize,
) -> Result<Vec<&'a TimeSeries>, Fail> {
    // SAFETY: forwarded caller contract.
    let list = unsafe { array(series, count, MAX_HANDLES, "series") }?;
    list.iter()
        .enumerate()
        .map(|(i, &p)| {
            // SAFETY: each NULL or live. The index goes into the message
            // only on failure.
            unsafe { handle(p, "series") }
                .map(|h| &h.series)
                .map_err(|_| null(&format!("series[{i}]")))
        })
        .collect()
}

/// Union or intersection, by `f`.
///
/// # Safety
/// As [`many`]; `out` NULL or writable.
unsafe fn combined(
    series: *const *const mcds_timeseries,
    count: usize,
    out: *mut *mut mcds_bucket_list,
    f: impl FnOnce(&[&TimeSeries]) -> ::mcds_core::Result<Vec<Bucket>>,
) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: forwarded caller contract.
        let series = unsafe { many(series, count) }?;
        let buckets = f(&series)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, mcds_bucket_list::boxed(buckets)) };
        Ok(())
    })
}

/// The buckets of resolution `step_ms` where *any* of the `count` series at
/// `series` has samples, each the merge of their samples there (counts and
/// sums add, min and max widen), oldest first, as a new list in `*out` that
/// the caller owns: free it with `mcds_bucket_list_free`. The series must
/// all be made from one store handle (or handles made from it with
/// `mcds_store_with_prefix`) and record at `step_ms`, else
/// `MCDS_INVALID_ARGUMENT`; they are read in one round trip per server,
/// then checked for lost data as in `mcds_timeseries_range`.
/// The array is borrowed for the call and may be NULL when `count` is 0
/// (an empty list).
///
/// # Safety
/// `series` NULL or `count` readable pointers, each NULL or live; `out`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_union(
    series: *const *const mcds_timeseries,
    count: usize,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out: *mut *mut mcds_bucket_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        combined(series, count, out, |s| {
            TimeSeries::union(s, from_ms, to_ms, step(step_ms))
        })
    }
}

/// The buckets where *every* one of the `count` series at `series` has
/// samples, each the merge of their samples there; otherwise as
/// `mcds_timeseries_union` (no series gives an empty list).
///
/// # Safety
/// `series` NULL or `count` readable pointers, each NULL or live; `out`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_intersection(
    series: *const *const mcds_timeseries,
    count: usize,
    from_ms: u64,
    to_ms: u64,
    step_ms: u64,
    out: *mut *mut mcds_bucket_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        combined(series, count, out, |s| {
            TimeSeries::intersection(s, from_ms, to_ms, step(step_ms))
        })
    }
}

/// Free a time series handle (NULL is a no-op); the data stays in the store.
///
/// # Safety
/// `ts` must be NULL or a live time series, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_timeseries_free(ts: *mut mcds_timeseries) {
    // SAFETY: forwarded caller contract.
    unsafe { free(ts) }
}

/// A packed series: a saturating counter per time slot, many slots packed
/// into one item per period.
pub struct mcds_packed_series {
    series: PackedSeries,
}

/// Create the packed series `name`: slots of `slot_ms` (whole ms, at least
/// 1), `slots_per_period` (1 to 65 536) of them per item, each
/// `width_bytes` wide (1, 2 or 4: counts saturate at 255, 65 535 or
/// 4 294 967 295), readable for `retention_ms` (at least one period, at
/// most 100 years) after their period ends. `MCDS_INVALID_ARGUMENT` for
/// any of these out of range; `MCDS_VALUE_TOO_LARGE` if a period's item
/// would not fit the store's item size limit (use fewer slots per period);
/// `MCDS_INVALID_KEY` if the name makes a bad key. `*out` is a new handle
/// the caller owns: free it with `mcds_packed_series_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_new(
    store: *const mcds_store,
    name: *const c_char,
    slot_ms: u64,
    slots_per_period: usize,
    width_bytes: u32,
    retention_ms: u64,
    out: *mut *mut mcds_packed_series,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let width = match width_bytes {
                1 => SlotWidth::U8,
                2 => SlotWidth::U16,
                4 => SlotWidth::U32,
                other => {
                    return Err(Fail(
                        MCDS_INVALID_ARGUMENT,
                        format!("a packed series slot is 1, 2 or 4 bytes wide; got {other}"),
                    ));
                }
            };
            let series = PackedSeries::new(
                scope,
                name,
                Duration::from_millis(slot_ms),
                slots_per_period,
                width,
                Duration::from_millis(retention_ms),
            )?;
            Ok(mcds_packed_series { series })
        })
    }
}

/// A handle on the same packed series whose reads ask the store whether
/// it lost items (`check` true, the default) or not: as
/// `mcds_timeseries_with_loss_check`. `ps` is unchanged and borrowed for
/// the call. `*out` is a new handle the caller owns: free it with
/// `mcds_packed_series_free`.
///
/// # Safety
/// `ps` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_with_loss_check(
    ps: *const mcds_packed_series,
    check: bool,
    out: *mut *mut mcds_packed_series,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out, "out", |ps| {
            let series = ps.series.clone().with_loss_check(check);
            Ok(Box::into_raw(Box::new(mcds_packed_series { series })))
        })
    }
}

/// A handle on the same packed series with `skew_ms` as the most the
/// clocks of its clients differ by (default 60 000): as
/// `mcds_timeseries_with_max_clock_skew`. `ps` is unchanged and borrowed
/// for the call. `*out` is a new handle the caller owns: free it with
/// `mcds_packed_series_free`.
///
/// # Safety
/// `ps` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_with_max_clock_skew(
    ps: *const mcds_packed_series,
    skew_ms: u64,
    out: *mut *mut mcds_packed_series,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out, "out", |ps| {
            let series = ps
                .series
                .clone()
                .with_max_clock_skew(Duration::from_millis(skew_ms));
            Ok(Box::into_raw(Box::new(mcds_packed_series { series })))
        })
    }
}

/// Add `delta` to the slot containing `ts_ms` (Unix ms), saturating at the
/// width's maximum; the slot's new value in `*out_value`. 2 round trips
/// (1 when the slot does not change), 2 more per lost CAS race (up to 64
/// attempts, then `MCDS_CONFLICT`). `MCDS_INVALID_ARGUMENT` if the slot is
/// past retention or more than the clock skew (60 s by default) ahead of
/// the system clock; `MCDS_CORRUPT` if the period's item is not one of
/// this series (another width, foreign bytes).
///
/// # Safety
/// `ps` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_incr(
    ps: *const mcds_packed_series,
    ts_ms: u64,
    delta: u32,
    out_value: *mut u32,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out_value, "out_value", |ps| {
            Ok(ps.series.incr(ts_ms, delta)?)
        })
    }
}

/// `mcds_packed_series_incr` the slot of now, by the system clock.
///
/// # Safety
/// `ps` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_incr_now(
    ps: *const mcds_packed_series,
    delta: u32,
    out_value: *mut u32,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out_value, "out_value", |ps| {
            Ok(ps.series.incr_now(delta)?)
        })
    }
}

/// The count of the slot containing `ts_ms`, in `*out_value`: a read as
/// `mcds_packed_series_range` of one slot (0 when past retention, without
/// reading).
///
/// # Safety
/// `ps` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_get(
    ps: *const mcds_packed_series,
    ts_ms: u64,
    out_value: *mut u32,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out_value, "out_value", |ps| {
            Ok(ps.series.get(ts_ms)?)
        })
    }
}

/// Every slot from the one containing `from_ms` to the one containing
/// `to_ms` (Unix ms, inclusive) whose period is within retention, oldest
/// first, zeros included, as a new list in `*out` that the caller owns:
/// free it with `mcds_slot_list_free`. `from_ms` after `to_ms` gives an
/// empty list. At most 100 000 slots, else `MCDS_INVALID_ARGUMENT`. One
/// round trip per server, then two more per server for the loss check:
/// `MCDS_LOST` for a slot whose server lost items since it could first be
/// counted (see `mcds_packed_series_with_loss_check`); `MCDS_CORRUPT` for
/// bytes no increment wrote; `MCDS_UNSUPPORTED` through a store that cannot tell
/// (a proxy).
///
/// # Safety
/// `ps` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_range(
    ps: *const mcds_packed_series,
    from_ms: u64,
    to_ms: u64,
    out: *mut *mut mcds_slot_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out, "out", |ps| {
            Ok(mcds_slot_list::boxed(ps.series.range(from_ms, to_ms)?))
        })
    }
}

/// The sum of the slots of the range (as in `mcds_packed_series_range`),
/// in `*out_sum`.
///
/// # Safety
/// `ps` NULL or live; `out_sum` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_sum(
    ps: *const mcds_packed_series,
    from_ms: u64,
    to_ms: u64,
    out_sum: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(ps, "packed_series", out_sum, "out_sum", |ps| {
            Ok(ps.series.sum(from_ms, to_ms)?)
        })
    }
}

/// Free a packed series handle (NULL is a no-op); the data stays in the
/// store.
///
/// # Safety
/// `ps` must be NULL or a live packed series, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_packed_series_free(ps: *mut mcds_packed_series) {
    // SAFETY: forwarded caller contract.
    unsafe { free(ps) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_keep_every_bit_in_their_halves() {
        for v in [
            0i128,
            1,
            -1,
            i128::from(i64::MAX) + 1,
            i128::from(i64::MIN) - 1,
            i128::MAX,
            i128::MIN,
        ] {
            let h = mcds_i128::from(v);
            assert_eq!((i128::from(h.hi) << 64) | i128::from(h.lo), v, "{v}");
        }
        assert_eq!(
            mcds_i128::from(-1),
            mcds_i128 {
                hi: -1,
                lo: u64::MAX
            }
        );
    }
}
