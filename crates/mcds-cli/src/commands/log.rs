//! `mcds log`: an event log (mcds-eventlog).

use std::time::Duration;

use mcds_core::Error;
use mcds_eventlog::EventLog;
use serde_json::json;

use crate::OK;
use crate::args::{LogCmd, LogShape};
use crate::context::{CliResult, Ctx};

pub(crate) fn log(ctx: &Ctx, cmd: LogCmd) -> CliResult {
    match cmd {
        LogCmd::Put {
            name,
            payload,
            at_ms,
            shape,
        } => {
            let log = open(ctx, &name, &shape)?;
            let at = match at_ms {
                Some(at) => {
                    log.put_at(at, payload.as_bytes())?;
                    at
                }
                None => log.put(payload.as_bytes())?.at_ms,
            };
            if ctx.json {
                println!(
                    "{}",
                    json!({ "log": name, "at_ms": at, "payload": payload })
                );
            }
            Ok(OK)
        }
        LogCmd::Fetch {
            name,
            from_ms,
            to_ms,
            shape,
        } => {
            let events =
                open(ctx, &name, &shape)?.fetch(from_ms.unwrap_or(0), to_ms.unwrap_or(u64::MAX))?;
            for e in events {
                let payload = String::from_utf8_lossy(&e.payload);
                ctx.print(
                    format!("{} {payload}", e.at_ms),
                    json!({ "at_ms": e.at_ms, "payload": payload }),
                );
            }
            Ok(OK)
        }
    }
}

/// The event log NAME, in the shape the command line gives.
fn open(ctx: &Ctx, name: &str, shape: &LogShape) -> Result<EventLog, Error> {
    EventLog::new(
        &ctx.scope,
        name,
        Duration::from_secs(shape.chunk),
        shape.chunks,
    )
}
