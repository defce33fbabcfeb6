//! The command line: clap's types for `mcds`, its global options, the
//! list of commands and the exit codes. Each command's own types (its
//! subcommands and the shape options its structure is built from) are
//! beside its code, in `commands/`. Their doc comments are the `--help`
//! text.

use clap::{Parser, Subcommand};

use crate::commands::PoolCmd;

/// Distributed data structures on memcached, from the shell.
///
/// Without --servers (or MCDS_SERVERS) mcds uses an embedded in-process
/// store whose state ends with the command: fine for `mcds demo`, useless
/// for anything else.
#[derive(Parser, Debug)]
#[command(name = "mcds", version, after_help = exit_codes_help())]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,

    #[command(subcommand)]
    pub(crate) command: Cmd,
}

/// The exit codes and what they mean, for `--help` and the man pages'
/// EXIT STATUS (main.rs's constants, kept in step by the test
/// `help_lists_the_exit_codes_and_flock_options`).
pub(crate) const EXIT_CODES: &[(&str, &str)] = &[
    ("0", "done"),
    (
        "1",
        "a negative answer (a miss, not a member, denied); lock run: the lock stayed held (-n, -w; see -E)",
    ),
    ("2", "usage error"),
    (
        "3",
        "invalid input: a bad key, value or option; unusable stored data; a command that cannot start",
    ),
    (
        "4",
        "unavailable: connection, timeout or server error (retrying may help)",
    ),
    (
        "76",
        "lock run: the lease was lost while the command ran (the command was stopped)",
    ),
    (
        "78",
        "configuration: --servers/MCDS_SERVERS does not parse or open, the store does not support this (memcached -C, a proxy), or the command needs memcached servers (retrying will not help)",
    ),
    (
        "*",
        "lock run: the command's own exit code, or 128+N if signal N killed it",
    ),
];

/// [`EXIT_CODES`] as `--help` prints them after the options.
pub(crate) fn exit_codes_help() -> String {
    let mut text = String::from("Exit codes:");
    for (code, meaning) in EXIT_CODES {
        text.push_str(&format!("\n  {code:<3} {meaning}"));
    }
    text
}

/// The options every command takes.
#[derive(clap::Args, Debug)]
pub(crate) struct Global {
    /// memcached servers, host:port[,host:port...], or a store URL:
    /// memcached://host:port[,...]?ketama&timeout_ms=500&prefix=app: or
    /// memory://?memory_limit=64m (options in the guide's store URL table)
    #[arg(long, env = "MCDS_SERVERS", global = true, value_name = "LIST|URL")]
    pub(crate) servers: Option<String>,

    /// Prefix for every key, e.g. "myapp/"
    #[arg(long, default_value = "", global = true)]
    pub(crate) prefix: String,

    /// Connect and request timeout in milliseconds
    #[arg(long, default_value_t = 1000, global = true, value_name = "MS")]
    pub(crate) timeout_ms: u64,

    /// Print results as JSON, one object per line; errors, warnings and -v
    /// messages go to stderr as JSON objects too. A CAS id is always a
    /// string, and any other integer beyond 2^53 − 1 (a fencing token, a
    /// large counter or sum) is a string of its digits, which readers that
    /// parse numbers as doubles (jq, JavaScript) cannot round
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Say what is happening on stderr (connecting, waiting for a lock,
    /// acquiring it, running the command, releasing)
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Cmd {
    /// A short tour of every structure on the embedded store
    Demo,
    // The commands of the structures (and `kv`): one group each, listed
    // and run in `commands/mod.rs`.
    #[command(flatten)]
    Structure(crate::commands::StructureCmd),
    /// Print a shell completion script (scripts/install-cli.sh installs it)
    ///
    /// bash: `source <(mcds completions bash)`, or save it as
    /// ~/.local/share/bash-completion/completions/mcds
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Print the man page, mcds(1), or write a page per command into DIR
    Man {
        /// Write mcds.1 and one page per subcommand (mcds-lock-run.1, ...)
        /// into this directory (created if missing) instead of printing
        /// mcds.1
        #[arg(value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// The same as DIR
        #[arg(long = "dir", value_name = "DIR", hide = true, conflicts_with = "dir")]
        dir_option: Option<std::path::PathBuf>,
    },
    /// Print each memcached server's statistics (`stats`)
    ///
    /// One line per server with its address, version, uptime, curr_items,
    /// bytes, get_hits, get_misses, evictions and curr_connections; --json
    /// gives every statistic of every server (integers as numbers, other
    /// values as strings). Exit 4 if a server did not answer (the others
    /// are still printed); exit 3 without --servers: the embedded store has
    /// no servers.
    Stats,
    /// The server list the pool's servers record, and changing it
    ///
    /// Every memcached server records the server list its clients use,
    /// and a client whose --servers list differs refuses every command
    /// (two such clients could hold one lock). To change the list, start
    /// the clients of the new list, run `mcds pool adopt` with it, then
    /// stop the old ones (see RELIABILITY.md).
    #[command(subcommand)]
    Pool(PoolCmd),
}

/// A duration above zero: a TTL of 0 would mean "never" to memcached and
/// "one second" to mcds, so neither is guessed; leave --ttl out for never.
pub(crate) fn positive_duration(text: &str) -> Result<std::time::Duration, String> {
    let d = crate::duration::parse(text)?;
    if d.is_zero() {
        return Err("a TTL must be above 0; leave --ttl out for an item that never expires".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument and option of every command says what it is in
    /// `--help`.
    #[test]
    fn every_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.get_help().is_none() && !matches!(id, "help" | "version") {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let cmd = Cli::command();
        cmd.clone().debug_assert();
        let mut missing = Vec::new();
        walk(&cmd, "mcds", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }
}
