//! `mcds log`: an event log (mcds-eventlog), and `log since --follow`, a
//! `tail -f` for it.

use clap::{Args, Subcommand};
use std::io::{self, Write};
use std::time::Duration;

use mcds_core::Error;
use mcds_eventlog::{Cursor, Event, EventLog};
use serde_json::json;

use crate::context::{CliResult, Ctx, Failure, json_line};
use crate::{INVALID_INPUT, OK, UNAVAILABLE};

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
                json_line(json!({ "log": name, "at_ms": at, "payload": payload }));
            }
            Ok(OK)
        }
        LogCmd::Fetch {
            name,
            from_ms,
            to_ms,
            shape,
        } => {
            let log = open(ctx, &name, &shape)?;
            // Streams: 4 chunks per batch, printed as they come.
            for e in log.fetch_iter(from_ms.unwrap_or(0), to_ms.unwrap_or(u64::MAX), 4) {
                let e = e?;
                let payload = String::from_utf8_lossy(&e.payload);
                ctx.print(
                    format!("{} {payload}", e.at_ms),
                    json!({ "log": name, "at_ms": e.at_ms, "payload": payload }),
                );
            }
            Ok(OK)
        }
        LogCmd::Since {
            name,
            cursor,
            follow,
            interval,
            print_cursor,
            shape,
        } => {
            let log = open(ctx, &name, &shape)?;
            let cursor = match cursor {
                None => Cursor::start(),
                Some(CursorArg::At(cursor)) => cursor,
                Some(CursorArg::Now) => Cursor::after(ctx.scope.clock().now_ms()),
            };
            if follow && interval.is_zero() {
                return Err(Failure {
                    code: INVALID_INPUT,
                    message: "--interval must be above 0 (e.g. 500ms, 1s)".into(),
                });
            }
            let follow = follow.then_some(interval);
            let json = ctx.json.then_some(name.as_str());
            match since(json, &log, cursor, follow, print_cursor) {
                Ok(()) => Ok(OK),
                // The reader went away (`| head -1`): the end, not a failure.
                Err(Stop::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(OK),
                Err(Stop::Output(e)) => Err(Failure {
                    code: UNAVAILABLE,
                    message: format!("cannot write the events to stdout: {e}"),
                }),
                Err(Stop::Log(e)) => Err(e.into()),
            }
        }
    }
}

/// Why [`since`] stopped.
enum Stop {
    /// Reading the log failed.
    Log(Error),
    /// Writing to stdout failed (a closed pipe: the reader is gone).
    Output(io::Error),
}

/// `log since`: print the events after `cursor`, then with `follow` poll
/// every interval for more, until stdout is closed. Written with `writeln!`
/// on the locked stdout, so a closed pipe is an error to return (Rust
/// ignores SIGPIPE, and `println!` would panic), and flushed after each
/// batch.
fn since(
    json: Option<&str>,
    log: &EventLog,
    mut cursor: Cursor,
    follow: Option<Duration>,
    print_cursor: bool,
) -> Result<(), Stop> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut failing = false;
    loop {
        match log.since(&cursor) {
            Ok((events, next)) => {
                failing = false;
                let show_cursor = print_cursor && (follow.is_none() || !events.is_empty());
                print_batch(&mut out, json, &events, cursor, show_cursor.then_some(next))
                    .map_err(Stop::Output)?;
                cursor = next;
            }
            Err(e) if follow.is_some() && e.is_retryable() => {
                if !failing {
                    eprintln!("mcds: warning: {e}; polling on");
                }
                failing = true;
            }
            Err(e) => return Err(Stop::Log(e)),
        }
        let Some(interval) = follow else {
            return Ok(());
        };
        if wait(interval) {
            return Ok(()); // nobody reads any more
        }
    }
}

/// Sleep `interval`, or less if stdout is a pipe whose reader went away:
/// whether it did. poll(2) reports that as POLLERR on the write end even
/// when no events are asked for; files and terminals just time out.
fn wait(interval: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    let timeout = Timespec::try_from(interval).ok();
    let started = std::time::Instant::now();
    match poll(&mut fds, timeout.as_ref()) {
        Ok(0) => false,
        Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => true,
        // A closed descriptor (POLLNVAL), or a signal: sleep what is left.
        _ => {
            std::thread::sleep(interval.saturating_sub(started.elapsed()));
            false
        }
    }
}

/// The text of a cursor: `MS:N`, which `--cursor` reads back.
fn cursor_text(cursor: Cursor) -> String {
    format!("{}:{}", cursor.at_ms, cursor.seen_at_ms)
}

/// Print `events` (read after `from`) as `<ms> <payload>` lines, or with
/// `json` (the log's name) as JSON lines each with the cursor to resume
/// after it; then the cursor `last` if given; then flush.
fn print_batch(
    out: &mut impl Write,
    json: Option<&str>,
    events: &[Event],
    from: Cursor,
    last: Option<Cursor>,
) -> io::Result<()> {
    let mut cursor = from;
    for e in events {
        let payload = String::from_utf8_lossy(&e.payload);
        if let Some(name) = json {
            // The same step as EventLog::since's next cursor.
            cursor = if e.at_ms == cursor.at_ms {
                Cursor {
                    seen_at_ms: cursor.seen_at_ms + 1,
                    ..cursor
                }
            } else {
                Cursor {
                    at_ms: e.at_ms,
                    seen_at_ms: 1,
                }
            };
            let line = json!({ "log": name, "at_ms": e.at_ms, "payload": payload, "cursor": cursor_text(cursor) });
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{} {payload}", e.at_ms)?;
        }
    }
    if let Some(last) = last {
        if let Some(name) = json {
            writeln!(
                out,
                "{}",
                json!({ "log": name, "cursor": cursor_text(last) })
            )?;
        } else {
            writeln!(out, "cursor {}", cursor_text(last))?;
        }
    }
    out.flush()
}

/// The event log NAME, in the shape the command line gives.
fn open(ctx: &Ctx, name: &str, shape: &LogShape) -> Result<EventLog, Error> {
    EventLog::new(&ctx.scope, name, shape.chunk, shape.chunks)
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

#[derive(Args, Debug)]
pub(crate) struct LogShape {
    /// Chunk length, whole seconds (60, 1m, 1h)
    #[arg(long, value_parser = crate::duration::parse, default_value = "60")]
    pub(crate) chunk: std::time::Duration,
    /// Number of chunks (the log keeps (chunks - 1) * chunk seconds)
    #[arg(long, default_value_t = 61)]
    pub(crate) chunks: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LogCmd {
    /// Append an event
    Put {
        /// The log
        name: String,
        /// The event's text
        payload: String,
        /// Event time in Unix milliseconds (default now)
        #[arg(long)]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: LogShape,
    },
    /// Print events as `<unix ms> <payload>`, in time order
    Fetch {
        /// The log
        name: String,
        /// The first Unix millisecond (default: the oldest event kept)
        #[arg(long)]
        from_ms: Option<u64>,
        /// The last Unix millisecond (default: now)
        #[arg(long)]
        to_ms: Option<u64>,
        #[command(flatten)]
        shape: LogShape,
    },
    /// Print the events after a cursor, as `<unix ms> <payload>` lines; with
    /// --follow keep polling for new ones, like `tail -f`
    ///
    /// A cursor is `MS:N` (after the first N events at Unix millisecond MS,
    /// and everything before MS), as mcds prints it, or `MS` alone (after
    /// every event up to and including MS), or `now`. Without --cursor:
    /// every event still in the log.
    ///
    /// To resume where a run stopped, pass the cursor it printed: with
    /// --print-cursor a last line `cursor MS:N` follows the events (with
    /// --follow, after each batch); under --json every event line carries
    /// the cursor to resume after it, and --print-cursor adds a line
    /// {"cursor":"MS:N"}.
    ///
    /// With --follow, mcds polls every --interval until it is killed or its
    /// output is closed (exit 0 either way, e.g. `| head -1`); stdout is
    /// flushed after each batch. An unavailable server is reported on
    /// stderr once and polling goes on.
    Since {
        /// The log
        name: String,
        /// Where to start: MS:N, MS or now (default: the oldest event kept)
        #[arg(long, value_parser = parse_cursor)]
        cursor: Option<CursorArg>,
        /// Keep polling for new events until killed
        #[arg(long)]
        follow: bool,
        /// With --follow, how often to poll (1.5, 500ms, 5s)
        #[arg(long, value_parser = crate::duration::parse, default_value = "1s", requires = "follow")]
        interval: std::time::Duration,
        /// After the events, print the cursor to resume from: `cursor MS:N`
        #[arg(long)]
        print_cursor: bool,
        #[command(flatten)]
        shape: LogShape,
    },
}

/// A `--cursor` of `log since`: a position, or `now` (resolved when the
/// command runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CursorArg {
    /// After the first `seen_at_ms` events at `at_ms`.
    At(mcds_eventlog::Cursor),
    /// After every event up to the current time.
    Now,
}

/// Parse `MS:N`, `MS` or `now` (see `log since --help`).
pub(crate) fn parse_cursor(text: &str) -> Result<CursorArg, String> {
    let bad = || {
        format!(
            "invalid cursor {text:?}: use MS:N as mcds prints it (e.g. 1767225600123:1), a Unix time in ms (after every event up to it), or now"
        )
    };
    let text = text.trim();
    if text == "now" {
        return Ok(CursorArg::Now);
    }
    Ok(CursorArg::At(match text.split_once(':') {
        Some((ms, n)) => mcds_eventlog::Cursor {
            at_ms: ms.parse().map_err(|_| bad())?,
            seen_at_ms: n.parse().map_err(|_| bad())?,
        },
        None => mcds_eventlog::Cursor::after(text.parse().map_err(|_| bad())?),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_what_log_since_prints() {
        use mcds_eventlog::Cursor;
        let at = |at_ms, seen_at_ms| Ok(CursorArg::At(Cursor { at_ms, seen_at_ms }));
        assert_eq!(parse_cursor("1767225600123:2"), at(1_767_225_600_123, 2));
        assert_eq!(parse_cursor("0:0"), at(0, 0));
        // A bare time: after every event up to and including it.
        assert_eq!(parse_cursor("1000"), at(1001, 0));
        assert_eq!(parse_cursor("now"), Ok(CursorArg::Now));
        for bad in ["", "x", "1:", ":1", "1:2:3", "-5", "1.5"] {
            let e = parse_cursor(bad).unwrap_err();
            assert!(e.contains("MS:N"), "{bad}: {e}");
        }
    }
}
