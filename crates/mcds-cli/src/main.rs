//! `mcds`: every mcds structure from the shell.
//!
//! Run `mcds --help`, or see the README's CLI section.
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
//! | 1     | [`NEGATIVE`]          | a negative answer: denied, not a member, certainly not in a bloom filter |
//! | 2     | [`USAGE`]             | usage errors, as clap exits for them; `lock run` without servers |
//! | 3     | [`INVALID_INPUT`]     | invalid input: a bad key, value, option or server address, stored data the command cannot use, a `lock run` command that cannot be started |
//! | 4     | [`UNAVAILABLE`]       | connection, timeout or server error                         |
//! | 75    | [`LOCK_NOT_ACQUIRED`] | `lock run`: the lock was not acquired in time               |
//! | 76    | [`LEASE_LOST`]        | `lock run`: the lease was lost while the command ran        |
//! | other |                       | `lock run`: the command's own exit code, or 128 + N if signal N killed it |
//!
//! Which [`mcds_core::Error`] gets 3 and which 4 is decided in
//! [`context::Failure`]'s `From<Error>`.

mod args;
mod commands;
mod context;
mod demo;
mod duration;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Cmd};
use context::{CliResult, Failure, open};

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
/// `lock run`: the lock was not acquired in time; the command did not run.
const LOCK_NOT_ACQUIRED: u8 = 75;
/// `lock run`: the lease was lost while the command ran; it was sent SIGTERM.
const LEASE_LOST: u8 = 76;

fn run(cli: Cli) -> CliResult {
    let Cli { global, command } = cli;
    let ctx = || open(&global, false);
    match command {
        Cmd::Demo => {
            demo::run();
            Ok(OK)
        }
        Cmd::Lock(cmd) => commands::lock(&open(&global, true)?, cmd),
        Cmd::Counter(cmd) => commands::counter(&ctx()?, cmd),
        Cmd::Set(cmd) => commands::set(&ctx()?, cmd),
        Cmd::Log(cmd) => commands::log(&ctx()?, cmd),
        Cmd::Window(cmd) => commands::window(&ctx()?, cmd),
        Cmd::Limit(cmd) => commands::limit(&ctx()?, cmd),
        Cmd::Hll(cmd) => commands::hll(&ctx()?, cmd),
        Cmd::Bloom(cmd) => commands::bloom(&ctx()?, cmd),
        Cmd::Bitmap(cmd) => commands::bitmap(&ctx()?, cmd),
        Cmd::Table(cmd) => commands::table(&ctx()?, cmd),
        Cmd::Shadow(cmd) => commands::shadow(&ctx()?, cmd),
        Cmd::View(cmd) => commands::view(&ctx()?, cmd),
        Cmd::ShardedSet(cmd) => commands::sharded_set(&ctx()?, cmd),
        Cmd::Kv(cmd) => commands::kv(&ctx()?, cmd),
        Cmd::Stats => commands::stats(&global),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with code 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(Failure { code, message }) => {
            eprintln!("mcds: error: {message}");
            ExitCode::from(code)
        }
    }
}
