//! `mcds counter`, `mcds window`, `mcds limit`, `mcds shadow` and `mcds
//! view`: the mcds-counter structures (exact counters, sliding-window
//! counters, rate limiters, shadow counters, view counters).

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Ttl};
use mcds_counter::{Counter, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter};
use serde_json::json;

use crate::args::{CounterCmd, LimitCmd, LimitShape, ShadowCmd, ViewCmd, WindowCmd, WindowShape};
use crate::context::{CliResult, Ctx, Target, line};
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
                line(json!({ "view": name, "invalidated": true }));
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
                line(json!({ "view": name, "value": null }));
            }
            Ok(NEGATIVE)
        }
        Err(e) => Err(e.into()),
    }
}
