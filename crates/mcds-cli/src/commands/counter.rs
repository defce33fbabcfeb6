//! `mcds counter`, `mcds window`, `mcds limit`, `mcds shadow`, `mcds view`
//! and `mcds map`: the mcds-counter structures (exact counters,
//! sliding-window counters, rate limiters, shadow counters, view counters,
//! counter maps).

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Ttl};
use mcds_counter::{
    Counter, CounterMap, Decimal, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};
use serde_json::{Value, json};

use crate::args::{
    CounterCmd, LimitCmd, LimitShape, MapCmd, ShadowCmd, ViewCmd, WindowCmd, WindowShape,
};
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
            let all = open(&name, scale.scale)?.get_all_decimal()?;
            if ctx.json {
                let objects: Vec<Value> = all
                    .iter()
                    .map(|(field, value)| json!({ "field": field, "value": map_value(*value) }))
                    .collect();
                json_line(json!({ "map": name, "entries": objects }));
            } else {
                for (field, value) in all {
                    line(format!("{field}\t{value}"));
                }
            }
        }
        MapCmd::Fields { name } => {
            let fields = open(&name, 0)?.fields()?;
            if ctx.json {
                json_line(json!({ "map": name, "fields": fields }));
            } else {
                for field in fields {
                    line(field);
                }
            }
        }
        MapCmd::Len { name } => {
            let len = open(&name, 0)?.len()?;
            ctx.print(len, json!({ "map": name, "len": len }));
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
