//! `mc-stress-worker SERVERS WORKLOAD ARGS...` — one worker process.
//!
//! * `counter NAME THREADS N`
//! * `lock NAME ROUNDS`
//! * `set NAME ID ROUNDS`
//! * `mixed NAME ID SECS`
//! * `history NAME ID SECS RESOURCE_SERVER`: the fenced lock workload of
//!   [`mc_stress::history`]; prints its history.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mc-stress-worker SERVERS (counter NAME THREADS N | lock NAME ROUNDS | set NAME ID ROUNDS | mixed NAME ID SECS | history NAME ID SECS RESOURCE_SERVER)";
    let number = |i: usize| args.get(i).and_then(|v| v.parse::<u64>().ok());
    let result = match (args.first(), args.get(1).map(String::as_str), args.get(2)) {
        (Some(servers), Some("counter"), Some(name)) => match (number(3), number(4)) {
            (Some(threads), Some(n)) => mc_stress::connect(servers)
                .and_then(|s| mc_stress::counter(s, name, threads as usize, n)),
            _ => Err(mc_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("lock"), Some(name)) => match number(3) {
            Some(rounds) => {
                mc_stress::connect(servers).and_then(|s| mc_stress::lock(s, name, rounds as usize))
            }
            None => Err(mc_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("set"), Some(name)) => match (number(3), number(4)) {
            (Some(id), Some(rounds)) => {
                mc_stress::connect(servers).and_then(|s| mc_stress::set(s, name, id, rounds))
            }
            _ => Err(mc_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("mixed"), Some(name)) => match (number(3), number(4)) {
            (Some(id), Some(secs)) => mc_stress::connect(servers)
                .and_then(|s| mc_stress::mixed(s, name, id, secs))
                .map(|r| r.line()),
            _ => Err(mc_core::Error::InvalidArgument(usage.into())),
        },
        (Some(servers), Some("history"), Some(name)) => match (number(3), number(4), args.get(5)) {
            (Some(id), Some(secs), Some(resource)) => mc_stress::connect_impatient(servers)
                .and_then(|lock| Ok((lock, mc_stress::connect(resource)?)))
                .and_then(|(lock, resource)| {
                    mc_stress::history::run(lock, resource, name, id, secs)
                })
                .map(|h| h.trim_end().to_string()),
            _ => Err(mc_core::Error::InvalidArgument(usage.into())),
        },
        _ => Err(mc_core::Error::InvalidArgument(usage.into())),
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mc-stress-worker: {e}");
            ExitCode::FAILURE
        }
    }
}
