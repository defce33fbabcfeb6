//! `mcds`: every mcds structure from the shell.
//!
//! Run `mcds --help`, or see the guide's chapter on the command line (docs/src/cli.md).
//!
//! This file holds the exit-code policy and the dispatch; [`args`] is the
//! command line, [`context`] opens the store and maps errors to exit codes,
//! [`commands`] has one handler per command group, and [`demo`] is the tour.
//!
//! # Exit codes
//!
//! | Code  | Constant              | Meaning                                                     |
//! |-------|-----------------------|-------------------------------------------------------------|
//! | 0     | [`OK`]                | done; also `--help` and `--version`                         |
//! | 1     | [`NEGATIVE`]          | a negative answer: denied, not a member, certainly not in a bloom filter; `lock run`: the lock stayed held (flock's code; `-E` sets another) |
//! | 2     | [`USAGE`]             | usage errors, as clap exits for them                        |
//! | 3     | [`INVALID_INPUT`]     | invalid input: a bad key, value, option or server address, stored data the command cannot use, a `lock run` command that cannot be started |
//! | 4     | [`UNAVAILABLE`]       | connection, timeout or server error: retrying may help      |
//! | 78    | [`CONFIG`]            | the store as configured cannot do this: a `--servers`/`MCDS_SERVERS` that does not parse or open, an operation the store does not support (memcached `-C`, a proxy), a command that needs memcached servers run without them. Retrying will not help (sysexits' `EX_CONFIG`) |
//! | 76    | [`LEASE_LOST`]        | `lock run`: the lease was lost while the command ran        |
//! | other |                       | `lock run`: the command's own exit code, or 128 + N if signal N killed it |
//!
//! Which [`mcds_core::Error`] gets 3, 4 or 78 is decided in
//! [`context::Failure`]'s `From<Error>`. `--help` lists the same codes
//! ([`args::EXIT_CODES`]), and so does each man page's EXIT STATUS.

mod args;
mod commands;
mod context;
mod demo;
mod docs;
mod duration;
mod report;

use std::process::ExitCode;

use args::{Cli, Cmd};
use context::{CliResult, Failure};
use report::Report;

/// Done.
const OK: u8 = 0;
/// A negative answer: denied, not a member, certainly not in a bloom filter.
const NEGATIVE: u8 = 1;
/// Usage errors, as clap exits for them.
const USAGE: u8 = 2;
/// Bad input, or stored data the command cannot use: the same call fails
/// again.
const INVALID_INPUT: u8 = 3;
/// The service: connection, timeout or server error.
const UNAVAILABLE: u8 = 4;
/// `lock run`: the lease was lost while the command ran; it was sent SIGTERM.
const LEASE_LOST: u8 = 76;
/// The store as configured cannot do this (sysexits' `EX_CONFIG`): the
/// store URL does not parse or open, the store does not support the
/// operation, or the command needs memcached servers. Retrying will not
/// help; a cron wrapper that retries on 4 stops on this.
const CONFIG: u8 = 78;

fn run(cli: Cli) -> CliResult {
    let Cli { global, command } = cli;
    match command {
        Cmd::Demo => {
            demo::run();
            Ok(OK)
        }
        Cmd::Structure(cmd) => cmd.run(&global),
        Cmd::Completions { shell } => {
            docs::completions(shell);
            Ok(OK)
        }
        Cmd::Man { dir, dir_option } => docs::man(dir.or(dir_option).as_deref()),
        Cmd::Stats => commands::stats(&global),
        Cmd::Pool(cmd) => commands::pool(&global, &cmd),
    }
}

/// Parse the command line, as `Cli::parse` would, noting for `lock run`
/// which options came after NAME (only the matches know the order).
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(std::env::args_os())?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let Cmd::Structure(commands::StructureCmd::Lock(commands::LockCmd::Run(run))) =
        &mut cli.command
    {
        // The parse built `command`: the global options are in `run`'s too.
        let sub = command
            .find_subcommand("lock")
            .and_then(|c| c.find_subcommand("run"));
        let sub_matches = matches
            .subcommand_matches("lock")
            .and_then(|m| m.subcommand_matches("run"));
        if let (Some(sub), Some(m)) = (sub, sub_matches) {
            run.note_option_order(sub, m);
        }
    }
    Ok(cli)
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let report = Report::new(cli.global.json, cli.global.verbose);
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            report.error(&failure);
            ExitCode::from(failure.code)
        }
    }
}

/// Help and version go to stdout with code 0, as clap prints them; usage
/// errors exit 2, as one JSON object on stderr when `--json` is among the
/// options (clap could not parse the rest, so the arguments are scanned).
fn usage_error(e: clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(USAGE);
    let json = std::env::args()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if code == OK || !json {
        let _ = e.print();
    } else {
        let message = e.render().to_string();
        let first = message.lines().next().unwrap_or_default();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        Report::new(true, false).error(&Failure {
            code,
            message: first.to_string(),
        });
    }
    ExitCode::from(code)
}
