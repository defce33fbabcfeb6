//! `mcds-stress-worker SERVERS WORKLOAD ARGS...` — one worker process.
//!
//! * `counter NAME THREADS N`
//! * `lock NAME ROUNDS`
//! * `set NAME ID ROUNDS`
//! * `events NAME ID MILLIS ITEM_LIMIT [CHUNK_SECS]`: [`mcds_stress::events`].
//! * `events-check NAME ITEM_LIMIT CHUNK_SECS ID:N...`:
//!   [`mcds_stress::events_check`], what the `events` writers put, read back.
//! * `grow set|table|board|map NAME ID ROUNDS`: [`mcds_stress::grow`], a structure
//!   whose buckets split while 4 writers run.
//! * `mixed NAME ID SECS`
//! * `cmap-race NAME ID ROUNDS`: [`mcds_stress::counter_map_race`].
//! * `timeseries NAME ID T0_MS THREADS N`: records into a time series; prints
//!   the count, sum, min and max of the acknowledged records.
//! * `history NAME ID SECS RESOURCE_SERVER`: the fenced lock workload of
//!   [`mcds_stress::history`]; prints its history. SERVERS `quorum:a,b,c`
//!   takes the lock on a quorum of them, and its holders pause past their
//!   lease now and then.
//! * `matrix ID T_MS MILLIS LOG ITEM_LIMIT`: a writer of the fault matrix,
//!   [`mcds_stress::matrix::write_run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mcds-stress-worker SERVERS (counter NAME THREADS N | lock NAME ROUNDS | set NAME ID ROUNDS | grow set|table|board|map NAME ID ROUNDS | events NAME ID MILLIS ITEM_LIMIT [CHUNK_SECS] | events-check NAME ITEM_LIMIT CHUNK_SECS ID:N... | mixed NAME ID SECS | cmap-race NAME ID ROUNDS | timeseries NAME ID T0_MS THREADS N | history NAME ID SECS RESOURCE_SERVER | matrix ID T_MS MILLIS LOG ITEM_LIMIT)";
    let number = |i: usize| args.get(i).and_then(|v| v.parse::<u64>().ok());
    let result = match (args.first(), args.get(1).map(String::as_str), args.get(2)) {
        (Some(servers), Some("counter"), Some(name)) => match (number(3), number(4)) {
            (Some(threads), Some(n)) => mcds_stress::connect(servers)
                .and_then(|s| mcds_stress::counter(s, name, threads as usize, n)),
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("lock"), Some(name)) => match number(3) {
            Some(rounds) => mcds_stress::connect(servers)
                .and_then(|s| mcds_stress::lock(s, name, rounds as usize)),
            None => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("set"), Some(name)) => match (number(3), number(4)) {
            (Some(id), Some(rounds)) => {
                mcds_stress::connect(servers).and_then(|s| mcds_stress::set(s, name, id, rounds))
            }
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("events"), Some(name)) => match (number(3), number(4), number(5)) {
            (Some(id), Some(millis), Some(limit)) => {
                let chunk_secs = number(6).unwrap_or(3600);
                mcds_stress::events(servers, name, id, millis, limit as usize, chunk_secs)
            }
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("events-check"), Some(name)) => {
            let puts: Option<Vec<(u64, u64)>> = args
                .iter()
                .skip(5)
                .map(|w| {
                    let (id, n) = w.split_once(':')?;
                    Some((id.parse().ok()?, n.parse().ok()?))
                })
                .collect();
            match (number(3), number(4), puts) {
                (Some(limit), Some(chunk_secs), Some(puts)) => {
                    mcds_stress::events_check(servers, name, limit as usize, chunk_secs, &puts)
                }
                _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
            }
        }
        (Some(servers), Some("grow"), Some(what)) => {
            let what = match what.as_str() {
                "set" => Some(mcds_stress::Grown::Set),
                "table" => Some(mcds_stress::Grown::Table),
                "board" => Some(mcds_stress::Grown::Leaderboard),
                "map" => Some(mcds_stress::Grown::CounterMap),
                _ => None,
            };
            match (what, args.get(3), number(4), number(5)) {
                (Some(what), Some(name), Some(id), Some(rounds)) => mcds_stress::connect(servers)
                    .and_then(|s| mcds_stress::grow(s, what, name, id, rounds)),
                _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
            }
        }
        (Some(servers), Some("mixed"), Some(name)) => match (number(3), number(4)) {
            (Some(id), Some(secs)) => mcds_stress::connect(servers)
                .and_then(|s| mcds_stress::mixed(s, name, id, secs))
                .map(|r| r.line()),
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("cmap-race"), Some(name)) => match (number(3), number(4)) {
            (Some(id), Some(rounds)) => mcds_stress::connect(servers)
                .and_then(|s| mcds_stress::counter_map_race(s, name, id, rounds)),
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("timeseries"), Some(name)) => {
            match (number(3), number(4), number(5), number(6)) {
                (Some(id), Some(t0), Some(threads), Some(n)) => mcds_stress::connect(servers)
                    .and_then(|s| mcds_stress::timeseries(s, name, id, t0, threads, n)),
                _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
            }
        }
        (Some(servers), Some("matrix"), Some(id)) => {
            match (
                id.parse::<u64>().ok(),
                number(3),
                number(4),
                args.get(5),
                number(6),
            ) {
                (Some(id), Some(t_ms), Some(millis), Some(log), Some(limit)) => {
                    mcds_stress::matrix::write_run(
                        servers,
                        id,
                        t_ms,
                        millis,
                        std::path::Path::new(log),
                        limit as usize,
                    )
                }
                _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
            }
        }
        (Some(servers), Some("history"), Some(name)) => match (number(3), number(4), args.get(5)) {
            (Some(id), Some(secs), Some(resource)) => mcds_stress::connect_lock_store(servers)
                .and_then(|lock| Ok((lock, mcds_stress::connect(resource)?)))
                .and_then(|(lock, resource)| {
                    // A quorum's holders also pause past their lease now
                    // and then (a GC pause, a stopped process).
                    let pauses = servers.starts_with("quorum:");
                    mcds_stress::history::run(lock, resource, name, id, secs, pauses)
                })
                .map(|h| h.trim_end().to_string()),
            _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
        },
        _ => Err(mcds_core::Error::InvalidArgument(usage.into())),
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcds-stress-worker: {e}");
            ExitCode::FAILURE
        }
    }
}
