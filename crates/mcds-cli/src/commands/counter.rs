//! `mcds counter`, `mcds window` and `mcds limit`: the mcds-counter
//! structures (exact counters, sliding-window counters, rate limiters).

use std::time::Duration;

use mcds_core::Error;
use mcds_counter::{Counter, RateLimiter, Window, WindowCounter};
use serde_json::json;

use crate::args::{CounterCmd, LimitCmd, WindowCmd, WindowShape};
use crate::context::{CliResult, Ctx};
use crate::{NEGATIVE, OK};

pub(crate) fn counter(ctx: &Ctx, cmd: CounterCmd) -> CliResult {
    let (CounterCmd::Incr { name, .. } | CounterCmd::Decr { name, .. } | CounterCmd::Get { name }) =
        &cmd;
    let c = Counter::new(&ctx.scope, name)?;
    let value = match &cmd {
        CounterCmd::Incr { delta, .. } => c.incr(delta.unwrap_or(1))?,
        CounterCmd::Decr { delta, .. } => c.decr(delta.unwrap_or(1))?,
        CounterCmd::Get { .. } => c.get()?,
    };
    ctx.print(value, json!({ "counter": name, "value": value }));
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
    WindowCounter::new(
        &ctx.scope,
        name,
        Duration::from_secs(shape.slot),
        shape.slots,
    )
}

pub(crate) fn limit(ctx: &Ctx, cmd: LimitCmd) -> CliResult {
    let LimitCmd::Check {
        name,
        limit,
        window,
        sliding,
    } = cmd;
    let mode = if sliding {
        Window::Sliding
    } else {
        Window::Fixed
    };
    let limiter = RateLimiter::new(&ctx.scope, &name, limit, Duration::from_secs(window), mode)?;
    let d = limiter.check()?;
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
