//! `mcds counter`, `mcds window`, `mcds limit`, `mcds shadow`, `mcds view`
//! and `mcds map`: the mcds-counter structures (exact counters,
//! sliding-window counters, rate limiters, shadow counters, view counters,
//! counter maps).

use clap::{Args, Subcommand};
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Ttl};
use mcds_counter::{
    Counter, CounterMap, Decimal, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};
use serde_json::{Value, json};

use crate::context::{CliResult, Ctx, Target, json_line, line};
use crate::{NEGATIVE, OK};

pub(crate) fn counter(ctx: &Ctx, cmd: CounterCmd) -> CliResult {
    /// What to do with the counter.
    enum Op {
        Incr,
        Decr,
        Get,
    }
    let (op, name, delta, key) = match cmd {
        CounterCmd::Incr { name, delta, exact } => (Op::Incr, name, delta, exact.key),
        CounterCmd::Decr { name, delta, exact } => (Op::Decr, name, delta, exact.key),
        CounterCmd::Get { name, exact } => (Op::Get, name, None, exact.key),
    };
    let usage = match op {
        Op::Incr => "mcds counter incr <NAME|--key KEY> [DELTA]",
        Op::Decr => "mcds counter decr <NAME|--key KEY> [DELTA]",
        Op::Get => "mcds counter get <NAME|--key KEY>",
    };
    // With --key, NAME is left out, so the one positional clap took for
    // NAME is DELTA: `counter incr --key hits 5`.
    let (name, delta) = match (&op, &key, name, delta) {
        (Op::Incr | Op::Decr, Some(_), Some(n), None) if n.parse::<u64>().is_ok() => {
            (None, n.parse().ok())
        }
        (_, _, name, delta) => (name, delta),
    };
    let target = Target::new(ctx, name, key, usage)?;
    let c = match &target {
        Target::Name(name) => Counter::new(&ctx.scope, name)?,
        Target::Key(key) => Counter::with_key(Arc::clone(ctx.scope.store()), key.clone()),
    };
    let value = match op {
        Op::Incr => c.incr(delta.unwrap_or(1))?,
        Op::Decr => c.decr(delta.unwrap_or(1))?,
        Op::Get => c.get()?,
    };
    ctx.print(value, target.json("counter", json!({ "value": value })));
    Ok(OK)
}

pub(crate) fn window(ctx: &Ctx, cmd: WindowCmd) -> CliResult {
    let (name, value) = match &cmd {
        WindowCmd::Incr { name, shape } => (name, open(ctx, name, shape)?.incr(1)?),
        WindowCmd::Get { name, shape } => (name, open(ctx, name, shape)?.value()?),
    };
    ctx.print(value, json!({ "window": name, "value": value }));
    Ok(OK)
}

/// The window counter NAME, in the shape the command line gives.
fn open(ctx: &Ctx, name: &str, shape: &WindowShape) -> Result<WindowCounter, Error> {
    WindowCounter::new(&ctx.scope, name, shape.slot, shape.slots)
}

pub(crate) fn limit(ctx: &Ctx, cmd: LimitCmd) -> CliResult {
    let (name, shape, peek) = match cmd {
        LimitCmd::Check { name, shape } => (name, shape, false),
        LimitCmd::Peek { name, shape } => (name, shape, true),
    };
    let LimitShape {
        limit,
        window,
        sliding,
    } = shape;
    let mode = if sliding {
        Window::Sliding
    } else {
        Window::Fixed
    };
    let limiter = RateLimiter::new(&ctx.scope, &name, limit, window, mode)?;
    let d = if peek {
        limiter.peek()?
    } else {
        limiter.check()?
    };
    let retry_ms = d.retry_after.as_millis();
    ctx.print(
        format!(
            "{} remaining={} retry_after_ms={retry_ms}",
            if d.allowed { "allowed" } else { "denied" },
            d.remaining
        ),
        json!({ "limit": name, "allowed": d.allowed, "remaining": d.remaining, "retry_after_ms": retry_ms }),
    );
    Ok(if d.allowed { OK } else { NEGATIVE })
}

pub(crate) fn shadow(ctx: &Ctx, cmd: ShadowCmd) -> CliResult {
    let (name, value) = match cmd {
        ShadowCmd::Incr {
            name,
            delta,
            period,
        } => {
            let value = ShadowCounter::new(&ctx.scope, &name, period)?.incr(delta.unwrap_or(1))?;
            (name, value)
        }
        ShadowCmd::Get { name, period } => {
            let value = ShadowCounter::new(&ctx.scope, &name, period)?.value()?;
            (name, value)
        }
    };
    ctx.print(value, json!({ "shadow": name, "value": value }));
    Ok(OK)
}

/// `view incr` and `view get`: the loader is `--initial`; without it, an
/// empty cache is a negative answer (exit 1, nothing counted or seeded).
pub(crate) fn view(ctx: &Ctx, cmd: ViewCmd) -> CliResult {
    let open = |name: &str, ttl: Option<Duration>| {
        let view = ViewCounter::new(&ctx.scope, name)?;
        Ok::<_, Error>(match ttl {
            Some(ttl) => view.with_ttl(Ttl::from(ttl)),
            None => view,
        })
    };
    // Set when the cache was empty and there was no --initial to seed it.
    let missed = std::cell::Cell::new(false);
    let loader = |initial: Option<u64>| {
        let missed = &missed;
        move || {
            initial.ok_or_else(|| {
                missed.set(true);
                Error::InvalidArgument("the view is not cached and no --initial was given".into())
            })
        }
    };
    let (name, result) = match cmd {
        ViewCmd::Incr {
            name,
            delta,
            initial,
            ttl,
        } => {
            let result = open(&name, ttl)?.view_by(delta.unwrap_or(1), loader(initial));
            (name, result)
        }
        ViewCmd::Get { name, initial, ttl } => {
            let result = open(&name, ttl)?.get(loader(initial));
            (name, result)
        }
        ViewCmd::Invalidate { name } => {
            open(&name, None)?.invalidate()?;
            if ctx.json {
                json_line(json!({ "view": name, "invalidated": true }));
            }
            return Ok(OK);
        }
    };
    match result {
        Ok(value) => {
            ctx.print(value, json!({ "view": name, "value": value }));
            Ok(OK)
        }
        Err(_) if missed.get() => {
            if ctx.json {
                json_line(json!({ "view": name, "value": null }));
            }
            Ok(NEGATIVE)
        }
        Err(e) => Err(e.into()),
    }
}

/// `mcds map`: every value goes through the map's decimal calls, which at
/// scale 0 are its integer ones (`"5"` is 5 units).
pub(crate) fn map(ctx: &Ctx, cmd: MapCmd) -> CliResult {
    let open = |name: &str, scale: u32| CounterMap::new(&ctx.scope, name)?.with_scale(scale);
    match cmd {
        MapCmd::Incr {
            name,
            field,
            by,
            round,
            scale,
        } => {
            let map = open(&name, scale.scale)?;
            let by = by.as_deref().unwrap_or("1");
            let value = if round {
                // The digits as written, rounded at the scale: never through
                // an f64 (which changed amounts past 2^53).
                let amount = mcds_counter::Decimal::parse_rounded(by, scale.scale)?;
                let units = map.incr(&field, amount.units)?;
                mcds_counter::Decimal {
                    units,
                    scale: scale.scale,
                }
            } else {
                map.incr_decimal(&field, by)?
            };
            ctx.print(
                value,
                json!({ "map": name, "field": field, "value": map_value(value) }),
            );
        }
        MapCmd::Get { name, field, scale } => {
            let value = open(&name, scale.scale)?.get_decimal(&field)?;
            ctx.print(
                value,
                json!({ "map": name, "field": field, "value": map_value(value) }),
            );
        }
        MapCmd::GetAll { name, scale } => {
            let map = open(&name, scale.scale)?;
            if !ctx.json {
                for entry in map.get_all_iter(64) {
                    let (field, units) = entry?;
                    let value = Decimal {
                        units,
                        scale: map.scale(),
                    };
                    line(format!("{field}\t{value}"));
                }
                return Ok(OK);
            }
            let objects: Vec<Value> = map
                .get_all_decimal()?
                .iter()
                .map(|(field, value)| json!({ "field": field, "value": map_value(*value) }))
                .collect();
            json_line(json!({ "map": name, "entries": objects }));
        }
        MapCmd::Fields { name } => {
            let map = open(&name, 0)?;
            if ctx.json {
                json_line(json!({ "map": name, "fields": map.fields()? }));
            } else {
                // Streams: a registry bucket at a time.
                for field in map.fields_iter(64) {
                    line(field?);
                }
            }
        }
        MapCmd::Len { name } => {
            let len = open(&name, 0)?.len()?;
            ctx.print(len, json!({ "map": name, "len": len }));
        }
        MapCmd::ClearRegistry { name } => {
            open(&name, 0)?.clear_registry()?;
            if ctx.json {
                json_line(json!({ "map": name, "registry": "cleared" }));
            }
        }
        MapCmd::Remove { name, field } => {
            let removed = open(&name, 0)?.remove(&field)?;
            if ctx.json {
                json_line(json!({ "map": name, "field": field, "removed": removed }));
            }
            return Ok(if removed { OK } else { NEGATIVE });
        }
    }
    Ok(OK)
}

/// A map value in JSON: a number at scale 0, else the exact decimal as a
/// string (a JSON number would be read as a float).
fn map_value(value: Decimal) -> Value {
    if value.scale == 0 {
        json!(value.units)
    } else {
        json!(value.to_string())
    }
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

/// `--key` of the counter commands: an exact key instead of NAME.
#[derive(Args, Debug)]
pub(crate) struct CounterKey {
    /// Use this exact memcached key instead of the counter NAME (whose key
    /// is PREFIX + counter:NAME:value), for a counter another application
    /// already uses, e.g. PHP's Memcached::increment('hits'): `mcds counter
    /// incr --key hits 5`. NAME is then left out, and --prefix does not
    /// apply (a prefix the other application uses belongs in KEY)
    #[arg(long, value_name = "KEY")]
    pub(crate) key: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum CounterCmd {
    /// Add DELTA (default 1) and print the new value
    #[command(override_usage = "mcds counter incr [OPTIONS] <NAME|--key KEY> [DELTA]")]
    Incr {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        /// How much to add (default 1)
        delta: Option<u64>,
        #[command(flatten)]
        exact: CounterKey,
    },
    /// Subtract DELTA (default 1, stops at 0) and print the new value
    #[command(override_usage = "mcds counter decr [OPTIONS] <NAME|--key KEY> [DELTA]")]
    Decr {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        /// How much to subtract (default 1)
        delta: Option<u64>,
        #[command(flatten)]
        exact: CounterKey,
    },
    /// Print the value (0 if absent)
    #[command(override_usage = "mcds counter get [OPTIONS] <NAME|--key KEY>")]
    Get {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        #[command(flatten)]
        exact: CounterKey,
    },
}

#[derive(Args, Debug)]
pub(crate) struct WindowShape {
    /// Slot length, whole seconds (60, 1m, 1h)
    #[arg(long, value_parser = crate::duration::parse)]
    pub(crate) slot: std::time::Duration,
    /// Number of slots (the value counts the last slots - 1)
    #[arg(long)]
    pub(crate) slots: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum WindowCmd {
    /// Count one event now
    Incr {
        /// The counter
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
    /// Print the events of the last slots - 1 slots
    Get {
        /// The counter
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
}

/// The shape of a rate limit: every client of one limit must use the same.
#[derive(Args, Debug)]
pub(crate) struct LimitShape {
    /// Requests allowed per window
    #[arg(long)]
    pub(crate) limit: u64,
    /// Window length, whole seconds (60, 1m, 1h)
    #[arg(long, value_parser = crate::duration::parse)]
    pub(crate) window: std::time::Duration,
    /// Use the sliding-window estimate instead of a fixed window
    #[arg(long)]
    pub(crate) sliding: bool,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LimitCmd {
    /// Count a request; exit 0 if allowed, 1 if denied
    Check {
        /// The limit
        name: String,
        #[command(flatten)]
        shape: LimitShape,
    },
    /// Whether a request would be allowed now, without counting one; exit 0
    /// if it would, 1 if not
    Peek {
        /// The limit
        name: String,
        #[command(flatten)]
        shape: LimitShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ShadowCmd {
    /// Count DELTA (default 1) events in this period; prints this period's
    /// count so far
    Incr {
        /// The counter
        name: String,
        /// How many events (default 1)
        delta: Option<u64>,
        /// Period length, whole seconds (60, 1h, 1d; every client the same)
        #[arg(long, value_parser = crate::duration::parse)]
        period: std::time::Duration,
    },
    /// Print the count of the previous period (constant for a whole period)
    Get {
        /// The counter
        name: String,
        /// Period length, whole seconds (60, 1h, 1d; every client the same)
        #[arg(long, value_parser = crate::duration::parse)]
        period: std::time::Duration,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ViewCmd {
    /// Count DELTA (default 1) views; prints the new total
    ///
    /// When the cache is empty, the total is seeded from --initial plus
    /// DELTA (race-free: two first views at once are both counted). Without
    /// --initial, an empty cache counts nothing and exits 1: fetch the total
    /// from your database and run it again with --initial, e.g.
    /// `mcds view incr photo:9 || mcds view incr photo:9 --initial "$(psql …)"`.
    Incr {
        /// The counter
        name: String,
        /// How many views (default 1)
        delta: Option<u64>,
        /// The true total from your database, used only when the cache is empty
        #[arg(long)]
        initial: Option<u64>,
        /// Let the cached total expire (and be seeded again) after this long
        /// (default: never)
        #[arg(long, value_parser = crate::duration::parse)]
        ttl: Option<std::time::Duration>,
    },
    /// Print the total: the cached one, or --initial (which then seeds the
    /// cache)
    ///
    /// Without --initial an empty cache exits 1, printing nothing.
    Get {
        /// The counter
        name: String,
        /// The true total from your database, used only when the cache is empty
        #[arg(long)]
        initial: Option<u64>,
        /// Let the cached total expire (and be seeded again) after this long
        /// (default: never)
        #[arg(long, value_parser = crate::duration::parse)]
        ttl: Option<std::time::Duration>,
    },
    /// Drop the cached total (the next incr or get seeds it again)
    Invalidate {
        /// The counter
        name: String,
    },
}

/// The scale of a counter map.
#[derive(Args, Debug)]
pub(crate) struct MapScale {
    /// Decimal places: the map counts units of 10^-PLACES exactly, no float
    /// stored (2: cents, 0.10 added ten times is 1.00), 0 to 18. Every
    /// client of a map must use the same
    #[arg(long, value_name = "PLACES", default_value_t = 0)]
    pub(crate) scale: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum MapCmd {
    /// Add BY (default 1; negative to subtract) to FIELD, creating it;
    /// prints the new value
    ///
    /// BY is exact at --scale places: more places are refused (exit 3)
    /// unless --round. Values stay within ±2^61 (decrements stop at -2^61);
    /// one call adds at most 2^56 - 1 units.
    Incr {
        /// The map
        name: String,
        /// The field (any string of 1 to 1024 bytes)
        field: String,
        /// How much to add: an integer, or a decimal with --scale (-1.25)
        #[arg(allow_negative_numbers = true)]
        by: Option<String>,
        /// Round BY half away from zero to --scale places instead of refusing
        /// more places
        #[arg(long)]
        round: bool,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print FIELD's value (0 if it does not exist)
    Get {
        /// The map
        name: String,
        /// The field
        field: String,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print `field<TAB>value` per field, a registry bucket at a time
    /// (each bucket's fields in the order they were first counted)
    ///
    /// Streams: a map of millions of fields is printed with bounded memory.
    /// Fields are printed as they are; for fields with tabs or newlines use
    /// --json, which prints one array of {"field": …, "value": …} objects
    /// (values as numbers, or with --scale as exact decimal strings).
    GetAll {
        /// The map
        name: String,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print the fields, one per line, a registry bucket at a time (each
    /// bucket's in the order they were first counted)
    ///
    /// Streams: a map of millions of fields is printed with bounded memory
    /// (--json prints one array, read whole).
    Fields {
        /// The map
        name: String,
    },
    /// Print how many fields the map has (0: it is empty)
    Len {
        /// The map
        name: String,
    },
    /// Delete the field registry (not the values): the way out when a
    /// read reports a registry bucket lost (evicted, or its server
    /// restarted); fields are listed again from their next first count
    ClearRegistry {
        /// The map
        name: String,
    },
    /// Remove FIELD (its value is gone); exit 1 if it did not exist
    Remove {
        /// The map
        name: String,
        /// The field
        field: String,
    },
}
