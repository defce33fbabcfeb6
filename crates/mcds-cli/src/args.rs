//! The command line: clap's types for `mcds`, its global options, and every
//! subcommand with the shape options its structure is built from. Their doc
//! comments are the `--help` text.

use clap::{Args, Parser, Subcommand};

/// Distributed data structures on memcached, from the shell.
///
/// Without --servers (or MCDS_SERVERS) mcds uses an embedded in-process
/// store whose state ends with the command: fine for `mcds demo`, useless
/// for anything else.
#[derive(Parser, Debug)]
#[command(name = "mcds", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,

    #[command(subcommand)]
    pub(crate) command: Cmd,
}

/// The exit codes, for `--help` (main.rs's constants, kept in step by the
/// test `help_lists_the_exit_codes`).
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0   done
  1   a negative answer (a miss, not a member, denied); lock run: the lock stayed held (-n, -w; see -E)
  2   usage error
  3   invalid input: a bad key, value, option or address; unusable stored data; a command that cannot start
  4   unavailable: connection, timeout or server error
  76  lock run: the lease was lost while the command ran (the command was stopped)
  *   lock run: the command's own exit code, or 128+N if signal N killed it";

/// The options every command takes.
#[derive(clap::Args, Debug)]
pub(crate) struct Global {
    /// memcached servers, host:port[,host:port...]
    #[arg(long, env = "MCDS_SERVERS", global = true, value_name = "LIST")]
    pub(crate) servers: Option<String>,

    /// Prefix for every key, e.g. "myapp/"
    #[arg(long, default_value = "", global = true)]
    pub(crate) prefix: String,

    /// Connect and request timeout in milliseconds
    #[arg(long, default_value_t = 1000, global = true, value_name = "MS")]
    pub(crate) timeout_ms: u64,

    /// Print results as JSON, one object per line; errors, warnings and -v
    /// messages go to stderr as JSON objects too
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
    /// Exact counters
    #[command(subcommand)]
    Counter(CounterCmd),
    /// A distributed lock; `lock run` works like flock(1)
    #[command(subcommand)]
    Lock(LockCmd),
    /// Sets of strings
    #[command(subcommand)]
    Set(SetCmd),
    /// An event log
    #[command(subcommand)]
    Log(LogCmd),
    /// Sliding-window counters (e.g. users online in the last 5 minutes)
    #[command(subcommand)]
    Window(WindowCmd),
    /// Rate limits
    #[command(subcommand)]
    Limit(LimitCmd),
    /// HyperLogLog distinct counts (PFADD, PFCOUNT, PFMERGE)
    #[command(subcommand)]
    Hll(HllCmd),
    /// Bloom filters: "seen before?" with a bounded false-positive rate
    #[command(subcommand)]
    Bloom(BloomCmd),
    /// Activity bitmaps: one bit per time unit (SETBIT, BITCOUNT)
    #[command(subcommand)]
    Bitmap(BitmapCmd),
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
        /// into this directory instead of printing mcds.1
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum HllCmd {
    /// Add elements; prints 1 if the estimate may have changed, else 0
    Add {
        /// The HyperLogLog's name
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
    },
    /// Print the estimated number of distinct elements (of the union, for
    /// several names)
    Count {
        /// The HyperLogLogs to count (the union of several)
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Write the union of TARGET and SOURCES into TARGET
    Merge {
        /// The HyperLogLog to merge into
        target: String,
        /// The HyperLogLogs to merge from
        #[arg(required = true)]
        sources: Vec<String>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct BloomShape {
    /// Expected number of elements (every client must use the same)
    #[arg(long)]
    pub(crate) capacity: u64,
    /// False-positive rate at capacity, e.g. 0.01
    #[arg(long, default_value_t = 0.01)]
    pub(crate) fpr: f64,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BloomCmd {
    /// Add elements; prints how many were new
    Add {
        /// The filter's name
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: BloomShape,
    },
    /// Exit 0 if ELEMENT may have been added, 1 if it certainly was not
    Check {
        /// The filter's name
        name: String,
        /// The element to check
        element: String,
        #[command(flatten)]
        shape: BloomShape,
    },
}

#[derive(Args, Debug)]
pub(crate) struct BitmapShape {
    /// Unix seconds of bit 0
    #[arg(long, default_value_t = 0)]
    pub(crate) start: u64,
    /// Seconds per bit
    #[arg(long, default_value_t = 86_400)]
    pub(crate) unit: u64,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BitmapCmd {
    /// Set the bit of the unit containing --at-ms (default now), or bit
    /// --index; prints the previous bit
    Mark {
        /// The bitmap's name
        name: String,
        /// Unix milliseconds (default now)
        #[arg(long, conflicts_with = "index")]
        at_ms: Option<u64>,
        /// A bit index instead of a time
        #[arg(long)]
        index: Option<u64>,
        #[command(flatten)]
        shape: BitmapShape,
    },
    /// Print how many bits are set in FIRST..=LAST (bit indexes)
    Count {
        /// The bitmap's name
        name: String,
        /// The first bit index
        first: u64,
        /// The last bit index (inclusive)
        last: u64,
        #[command(flatten)]
        shape: BitmapShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum CounterCmd {
    /// Add DELTA (default 1) and print the new value
    Incr {
        /// The counter's name
        name: String,
        /// How much to add (default 1)
        delta: Option<u64>,
    },
    /// Subtract DELTA (default 1, stops at 0) and print the new value
    Decr {
        /// The counter's name
        name: String,
        /// How much to subtract (default 1)
        delta: Option<u64>,
    },
    /// Print the value (0 if absent)
    Get {
        /// The counter's name
        name: String,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum LockCmd {
    /// Run a command while holding lock NAME, like flock(1) across machines
    ///
    /// Blocks until the lock is free, unless -n or -w say otherwise. When
    /// the lock stays held, exits 1 (or the -E code) silently: cron mails
    /// nothing for an overlap. Otherwise exits with the command's own code.
    ///
    /// The lease lasts --ttl and is renewed every ttl/3 while the command
    /// runs, so --ttl only bounds how long the lock outlives a crashed
    /// host. The command runs in a process group of its own (it is not in
    /// the terminal's foreground: lock run is for commands that do not read
    /// the terminal, as cron jobs do not); when it exits, whatever it left
    /// running in its group is killed before the lock is released. SIGTERM,
    /// SIGINT and SIGHUP sent to mcds are passed on to the group; if mcds is
    /// killed (even with SIGKILL), the group is killed with it. If the lease
    /// is lost all the same (the server restarted or evicted it, or renewals
    /// failed until the next would come too late), the group gets SIGTERM,
    /// then SIGKILL after ttl/6 (0.1 to 5 s), and mcds exits 76. Needs
    /// --servers or MCDS_SERVERS: an embedded lock would exclude nobody.
    ///
    /// Examples:
    ///   mcds lock run nightly ./report.sh                 # wait for the lock
    ///   mcds lock run -n nightly ./report.sh              # skip if running
    ///   mcds lock run -w 5m -E 75 nightly -- make -j2     # wait 5 min, exit 75
    ///   mcds lock run -n nightly -c 'backup && prune'     # a shell command
    #[command(after_help = EXIT_CODES, verbatim_doc_comment)]
    Run(RunArgs),
    /// Show who holds lock NAME and how long its lease has left
    ///
    /// Prints `held by <owner> for <time left>` and exits 0, or prints
    /// `free` and exits 1. The owner is `host=<hostname> pid=<pid>` of the
    /// `mcds lock run` holding it, then the lease's random token.
    Status {
        /// The lock's name
        name: String,
    },
}

/// The options of `lock run`, named as flock(1) names them.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// Do not wait: if the lock is held, exit at once with the conflict
    /// code (1), printing nothing (flock -n)
    #[arg(short = 'n', long, conflicts_with = "wait")]
    pub(crate) nonblock: bool,

    /// Wait at most this long for the lock (1.5, 500ms, 30s, 5m), then exit
    /// with the conflict code, printing nothing (flock -w). Default: wait
    /// for as long as it takes
    #[arg(short = 'w', long, alias = "timeout", value_name = "DURATION",
          value_parser = crate::duration::parse)]
    pub(crate) wait: Option<std::time::Duration>,

    /// The exit code when the lock was not acquired (flock -E)
    #[arg(short = 'E', long, default_value_t = 1, value_name = "CODE")]
    pub(crate) conflict_exit_code: u8,

    /// Run this shell command with `/bin/sh -c` instead of CMD (flock -c)
    #[arg(
        short = 'c',
        long = "command",
        value_name = "SHELL_COMMAND",
        conflicts_with = "cmd"
    )]
    pub(crate) shell: Option<String>,

    /// Lease length (1.5, 500ms, 30s, 5m); renewed every ttl/3 while the
    /// command runs, so it only bounds how long the lock outlives a host
    /// that died holding it
    #[arg(long, default_value = "30s", value_name = "DURATION",
          value_parser = crate::duration::parse)]
    pub(crate) ttl: std::time::Duration,

    /// Pass a fencing token to the command in MCDS_FENCING_TOKEN: a number
    /// that grows with every acquire, for the resource to reject writes
    /// from an older holder
    #[arg(long)]
    pub(crate) fencing: bool,

    /// The lock's name: every host that runs the job must use the same one
    pub(crate) name: String,

    /// The command and its arguments (a `--` before it is optional)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present = "shell",
        value_name = "CMD"
    )]
    pub(crate) cmd: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SetCmd {
    /// Add members
    Add {
        /// The set's name
        name: String,
        /// The members (any text; spaces allowed)
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Remove members
    Remove {
        /// The set's name
        name: String,
        /// The members (any text; spaces allowed)
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Print the members, one per line, in insertion order
    Members {
        /// The set's name
        name: String,
    },
    /// Exit 0 if MEMBER is in the set, 1 if not
    Contains {
        /// The set's name
        name: String,
        /// The member to look for
        member: String,
    },
}

#[derive(Args, Debug)]
pub(crate) struct LogShape {
    /// Chunk length in seconds
    #[arg(long, default_value_t = 60)]
    pub(crate) chunk: u64,
    /// Number of chunks (the log keeps (chunks - 1) * chunk seconds)
    #[arg(long, default_value_t = 61)]
    pub(crate) chunks: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LogCmd {
    /// Append an event
    Put {
        /// The log's name
        name: String,
        /// The event payload
        payload: String,
        /// Event time in Unix milliseconds (default now)
        #[arg(long)]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: LogShape,
    },
    /// Print events as `<unix ms> <payload>`, in time order
    Fetch {
        /// The log's name
        name: String,
        /// Start of the range, Unix milliseconds (default: the oldest kept)
        #[arg(long)]
        from_ms: Option<u64>,
        /// End of the range, Unix milliseconds (default: the newest)
        #[arg(long)]
        to_ms: Option<u64>,
        #[command(flatten)]
        shape: LogShape,
    },
}

#[derive(Args, Debug)]
pub(crate) struct WindowShape {
    /// Slot length in seconds
    #[arg(long)]
    pub(crate) slot: u64,
    /// Number of slots (the value counts the last slots - 1)
    #[arg(long)]
    pub(crate) slots: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum WindowCmd {
    /// Count one event now
    Incr {
        /// The window counter's name
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
    /// Print the events of the last slots - 1 slots
    Get {
        /// The window counter's name
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum LimitCmd {
    /// Count a request; exit 0 if allowed, 1 if denied
    Check {
        /// The limiter's name (e.g. api:ann)
        name: String,
        /// Requests allowed per window
        #[arg(long)]
        limit: u64,
        /// Window length in seconds
        #[arg(long)]
        window: u64,
        /// Use the sliding-window estimate instead of a fixed window
        #[arg(long)]
        sliding: bool,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every command, option and positional argument has help text.
    #[test]
    fn every_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            if cmd.get_about().is_none() && path != "mcds" && !path.ends_with(" help") {
                missing.push(format!("{path} (command)"));
            }
            for arg in cmd.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if arg.get_help().is_none() && arg.get_long_help().is_none() && !builtin {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
