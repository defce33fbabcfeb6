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
fn exit_codes_help() -> String {
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
        /// into this directory (created if missing) instead of printing
        /// mcds.1
        #[arg(value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// The same as DIR
        #[arg(long = "dir", value_name = "DIR", hide = true, conflicts_with = "dir")]
        dir_option: Option<std::path::PathBuf>,
    },
    /// Tables: a member set with a value per member (a distributed map)
    #[command(subcommand)]
    Table(TableCmd),
    /// Shadow counters: the count of the previous period (visitors last hour)
    #[command(subcommand)]
    Shadow(ShadowCmd),
    /// View counters: a cached count seeded from your database's total
    #[command(subcommand)]
    View(ViewCmd),
    /// Sets spread over several keys, for sets too large for one item
    #[command(subcommand)]
    ShardedSet(ShardedSetCmd),
    /// Time series: count, sum, min, max and average of integer samples
    /// per time bucket, at several resolutions
    #[command(subcommand)]
    Series(SeriesCmd),
    /// Packed series: a small counter per time slot, many slots to one
    /// item (Redis BITFIELD counters)
    #[command(subcommand)]
    Packed(PackedCmd),
    /// Counter maps: named fields, each an atomic signed counter (HINCRBY,
    /// HINCRBYFLOAT, HGETALL, HDEL)
    #[command(subcommand)]
    Map(MapCmd),
    /// Leaderboards: the top members by count (ZINCRBY, ZREVRANGE), exact
    /// up to --capacity members
    #[command(subcommand)]
    Leaderboard(LeaderboardCmd),
    /// Scalable Bloom filters: "seen before?" that grows with the elements
    /// added, keeping its false-positive rate
    #[command(subcommand)]
    Sbloom(SbloomCmd),
    /// Raw store operations on single keys (--prefix applies), for operators
    ///
    /// `kv` rather than top-level get/set/delete: `mcds set` is the set
    /// structure. The key is KEY with --prefix prepended, used as it is
    /// (no escaping, unlike structure names).
    #[command(subcommand)]
    Kv(KvCmd),
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

#[derive(Subcommand, Debug)]
pub(crate) enum PoolCmd {
    /// Print this client's list as the servers record it
    Show,
    /// Make the --servers list the pool's, in effect after --grace
    ///
    /// Clients of the old list refuse every command from their next
    /// recheck (30 s by default) on; clients of this list work once the
    /// grace has passed (until then they exit 4: unavailable). Choose a
    /// grace of at least 30 s plus the longest lock TTL plus 3 s, so that
    /// no lock is ever held by an old and a new client at once; 0 makes
    /// it take effect at once (stop every old client first).
    Adopt {
        /// How long until the new list takes effect (e.g. 90s, 5m)
        #[arg(long, value_parser = crate::duration::parse)]
        grace: std::time::Duration,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum HllCmd {
    /// Add elements; prints 1 if the estimate may have changed, else 0
    Add {
        /// The sketch
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
    },
    /// Print the estimated number of distinct elements (of the union, for
    /// several names)
    Count {
        /// The sketches (several: the count of their union)
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Write the union of TARGET and SOURCES into TARGET
    Merge {
        /// The sketch to merge into (it keeps its own elements)
        target: String,
        /// The sketches to merge
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
        /// The filter
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: BloomShape,
    },
    /// Exit 0 if ELEMENT may have been added, 1 if it certainly was not
    Check {
        /// The filter
        name: String,
        /// The element to look for
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
    /// Time per bit (86400, 1d, 1h, 500ms)
    #[arg(long, value_parser = crate::duration::parse, default_value = "1d")]
    pub(crate) unit: std::time::Duration,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BitmapCmd {
    /// Set the bit of the unit containing --at-ms (default now), or bit
    /// --index; prints the previous bit
    Mark {
        /// The bitmap
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
        /// The bitmap
        name: String,
        /// The first bit index counted
        first: u64,
        /// The last bit index counted
        last: u64,
        #[command(flatten)]
        shape: BitmapShape,
    },
}

/// `--key` of the counter commands: an exact key instead of NAME.
#[derive(Args, Debug)]
pub(crate) struct CounterKey {
    /// Use this exact memcached key instead of the counter NAME (whose key
    /// is PREFIX + counter:NAME:value), for a counter another application
    /// already uses, e.g. PHP's Memcached::increment('hits'): `mcds counter
    /// incr --key hits 5`. NAME is then left out, and --prefix does not
    /// apply (a prefix the other application uses belongs in KEY)
    #[arg(long, value_name = "KEY")]
    pub(crate) key: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum CounterCmd {
    /// Add DELTA (default 1) and print the new value
    #[command(override_usage = "mcds counter incr [OPTIONS] <NAME|--key KEY> [DELTA]")]
    Incr {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        /// How much to add (default 1)
        delta: Option<u64>,
        #[command(flatten)]
        exact: CounterKey,
    },
    /// Subtract DELTA (default 1, stops at 0) and print the new value
    #[command(override_usage = "mcds counter decr [OPTIONS] <NAME|--key KEY> [DELTA]")]
    Decr {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        /// How much to subtract (default 1)
        delta: Option<u64>,
        #[command(flatten)]
        exact: CounterKey,
    },
    /// Print the value (0 if absent)
    #[command(override_usage = "mcds counter get [OPTIONS] <NAME|--key KEY>")]
    Get {
        /// The counter (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        #[command(flatten)]
        exact: CounterKey,
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
    ///   mcds lock run -n --key report-lock ./report.sh    # the key PHP add()s
    #[command(
        after_help = exit_codes_help(),
        verbatim_doc_comment,
        override_usage = "mcds lock run [OPTIONS] <NAME|--key KEY> <CMD>...\n       \
                          mcds lock run [OPTIONS] <NAME|--key KEY> -c <SHELL_COMMAND>"
    )]
    Run(RunArgs),
    /// Show who holds lock NAME (or the lock on --key KEY) and how long its
    /// lease has left
    ///
    /// Prints `held by <owner> for <time left>` and exits 0, or prints
    /// `free` and exits 1. The owner is `host=<hostname> pid=<pid>` of the
    /// `mcds lock run` holding it, then the lease's random token (or what
    /// another application stored under the key).
    #[command(override_usage = "mcds lock status [OPTIONS] <NAME|--key KEY>")]
    Status {
        /// The lock's name (left out with --key)
        #[arg(required_unless_present = "key")]
        name: Option<String>,
        #[command(flatten)]
        exact: LockKey,
    },
}

/// `--key` of the lock commands: an exact key instead of NAME.
#[derive(Args, Debug)]
pub(crate) struct LockKey {
    /// Use this exact memcached key instead of the lock NAME (whose key is
    /// PREFIX + lock:NAME:owner), for a lock other applications take by
    /// adding the key, as Symfony Lock's MemcachedStore does: each side
    /// waits while the other holds it. NAME is then left out (with lock
    /// run, the command follows --key KEY), and --prefix does not apply (a
    /// prefix the other application uses belongs in KEY). At most 244
    /// bytes: the fencing counter is KEY:fence
    #[arg(long, value_name = "KEY")]
    pub(crate) key: Option<String>,
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

    #[command(flatten)]
    pub(crate) exact: LockKey,

    /// The lock's name: every host that runs the job must use the same one
    /// (left out with --key)
    #[arg(required_unless_present = "key")]
    pub(crate) name: Option<String>,

    /// The command and its arguments (a `--` before it is optional)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present_any = ["shell", "key"],
        value_name = "CMD"
    )]
    pub(crate) cmd: Vec<String>,

    /// Options given after the word clap took for NAME (set by
    /// [`RunArgs::note_option_order`]): with --key that word is the
    /// command's first, so they were meant for the command.
    #[arg(skip)]
    pub(crate) options_after_name: Vec<String>,
}

impl RunArgs {
    /// Record in `options_after_name` the options of `lock run` (`command`
    /// and `matches` are its own) that the command line gave after NAME.
    /// Only the parsed matches know the order.
    pub(crate) fn note_option_order(
        &mut self,
        command: &clap::Command,
        matches: &clap::ArgMatches,
    ) {
        let Some(name_at) = matches.index_of("name") else {
            return;
        };
        self.options_after_name = matches
            .ids()
            .map(|id| id.as_str())
            .filter(|&id| !matches!(id, "name" | "cmd"))
            .filter(|&id| {
                matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
                    && matches.index_of(id).is_some_and(|at| at > name_at)
            })
            .map(|id| {
                let long = command
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .and_then(clap::Arg::get_long);
                format!("--{}", long.unwrap_or(id))
            })
            .collect();
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum SetCmd {
    /// Add members
    Add {
        /// The set
        name: String,
        /// The members to add (any strings)
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Remove members
    Remove {
        /// The set
        name: String,
        /// The members to remove
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Print the members, one per line, in insertion order
    Members {
        /// The set
        name: String,
    },
    /// Exit 0 if MEMBER is in the set, 1 if not (prints true or false)
    Contains {
        /// The set
        name: String,
        /// The member
        member: String,
    },
    /// Rewrite the set without the tokens of removed members; prints
    /// whether it was rewritten
    ///
    /// false: there was nothing to drop, or another client wrote meanwhile
    /// (nothing is lost; run it again).
    Compact {
        /// The set
        name: String,
    },
}

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
fn parse_cursor(text: &str) -> Result<CursorArg, String> {
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

#[derive(Args, Debug)]
pub(crate) struct WindowShape {
    /// Slot length, whole seconds (60, 1m, 1h)
    #[arg(long, value_parser = crate::duration::parse)]
    pub(crate) slot: std::time::Duration,
    /// Number of slots (the value counts the last slots - 1)
    #[arg(long)]
    pub(crate) slots: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum WindowCmd {
    /// Count one event now
    Incr {
        /// The counter
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
    /// Print the events of the last slots - 1 slots
    Get {
        /// The counter
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
}

/// The shape of a rate limit: every client of one limit must use the same.
#[derive(Args, Debug)]
pub(crate) struct LimitShape {
    /// Requests allowed per window
    #[arg(long)]
    pub(crate) limit: u64,
    /// Window length, whole seconds (60, 1m, 1h)
    #[arg(long, value_parser = crate::duration::parse)]
    pub(crate) window: std::time::Duration,
    /// Use the sliding-window estimate instead of a fixed window
    #[arg(long)]
    pub(crate) sliding: bool,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LimitCmd {
    /// Count a request; exit 0 if allowed, 1 if denied
    Check {
        /// The limit
        name: String,
        #[command(flatten)]
        shape: LimitShape,
    },
    /// Whether a request would be allowed now, without counting one; exit 0
    /// if it would, 1 if not
    Peek {
        /// The limit
        name: String,
        #[command(flatten)]
        shape: LimitShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum TableCmd {
    /// Set MEMBER's value, adding the member if it is new
    Set {
        /// The table
        name: String,
        /// The member (any string)
        member: String,
        /// Its value
        value: String,
    },
    /// Print MEMBER's value; exit 1 (printing nothing) if it is absent
    Get {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Print true and exit 0 if MEMBER is present, else false and exit 1
    Has {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Remove MEMBER; exit 1 if it was absent
    Delete {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Print `member<TAB>value` per member, in insertion order
    ///
    /// Members and values are printed as they are (invalid UTF-8 lossily);
    /// for text with tabs or newlines use --json, which prints one array of
    /// {"member": …, "value": …} objects.
    Entries {
        /// The table
        name: String,
    },
    /// Print the members, one per line, in insertion order
    Keys {
        /// The table
        name: String,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ShadowCmd {
    /// Count DELTA (default 1) events in this period; prints this period's
    /// count so far
    Incr {
        /// The counter
        name: String,
        /// How many events (default 1)
        delta: Option<u64>,
        /// Period length, whole seconds (60, 1h, 1d; every client the same)
        #[arg(long, value_parser = crate::duration::parse)]
        period: std::time::Duration,
    },
    /// Print the count of the previous period (constant for a whole period)
    Get {
        /// The counter
        name: String,
        /// Period length, whole seconds (60, 1h, 1d; every client the same)
        #[arg(long, value_parser = crate::duration::parse)]
        period: std::time::Duration,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ViewCmd {
    /// Count DELTA (default 1) views; prints the new total
    ///
    /// When the cache is empty, the total is seeded from --initial plus
    /// DELTA (race-free: two first views at once are both counted). Without
    /// --initial, an empty cache counts nothing and exits 1: fetch the total
    /// from your database and run it again with --initial, e.g.
    /// `mcds view incr photo:9 || mcds view incr photo:9 --initial "$(psql …)"`.
    Incr {
        /// The counter
        name: String,
        /// How many views (default 1)
        delta: Option<u64>,
        /// The true total from your database, used only when the cache is empty
        #[arg(long)]
        initial: Option<u64>,
        /// Let the cached total expire (and be seeded again) after this long
        /// (default: never)
        #[arg(long, value_parser = crate::duration::parse)]
        ttl: Option<std::time::Duration>,
    },
    /// Print the total: the cached one, or --initial (which then seeds the
    /// cache)
    ///
    /// Without --initial an empty cache exits 1, printing nothing.
    Get {
        /// The counter
        name: String,
        /// The true total from your database, used only when the cache is empty
        #[arg(long)]
        initial: Option<u64>,
        /// Let the cached total expire (and be seeded again) after this long
        /// (default: never)
        #[arg(long, value_parser = crate::duration::parse)]
        ttl: Option<std::time::Duration>,
    },
    /// Drop the cached total (the next incr or get seeds it again)
    Invalidate {
        /// The counter
        name: String,
    },
}

/// The shape of a sharded set.
#[derive(Args, Debug)]
pub(crate) struct ShardedShape {
    /// Number of shards, 1 to 4096. Every client must use the same number:
    /// with another one, members are looked for in other shards and seem
    /// missing
    #[arg(long)]
    pub(crate) shards: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ShardedSetCmd {
    /// Add members (one append per shard touched)
    Add {
        /// The set
        name: String,
        /// The members to add
        #[arg(required = true)]
        members: Vec<String>,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Remove members
    Remove {
        /// The set
        name: String,
        /// The members to remove
        #[arg(required = true)]
        members: Vec<String>,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Print the members, one per line, shard by shard
    Members {
        /// The set
        name: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Exit 0 if MEMBER is in the set, 1 if not (prints true or false)
    Contains {
        /// The set
        name: String,
        /// The member
        member: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Rewrite every shard that holds tokens of removed members
    Compact {
        /// The set
        name: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
}

/// The time range of a read: Unix milliseconds, inclusive, or the last
/// DURATION.
#[derive(Args, Debug)]
pub(crate) struct TimeRange {
    /// A Unix millisecond in the first bucket (or slot) read: reads take
    /// whole buckets (default: the oldest kept, at most the newest 10000
    /// buckets or 100000 slots a read takes)
    #[arg(long, value_name = "MS", conflicts_with = "last")]
    pub(crate) from_ms: Option<u64>,
    /// A Unix millisecond in the last bucket (or slot) read (default: now)
    #[arg(long, value_name = "MS")]
    pub(crate) to_ms: Option<u64>,
    /// Read from DURATION before --to-ms (or now) instead of from --from-ms
    /// (5m, 1h, 1d)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) last: Option<std::time::Duration>,
}

impl TimeRange {
    /// `(from_ms, to_ms)`, with `now_ms` for what is left out. Without a
    /// start, the read starts `max_units - 1` units of `unit` before its end
    /// (the most one read takes; the library skips what is past retention).
    /// A start after the end is an error, not an empty range.
    pub(crate) fn resolve(
        &self,
        now_ms: u64,
        unit: std::time::Duration,
        max_units: u64,
    ) -> Result<(u64, u64), mcds_core::Error> {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let to = self.to_ms.unwrap_or(now_ms);
        let from = match (self.last, self.from_ms) {
            (Some(last), _) => to.saturating_sub(ms(last)),
            (None, Some(from)) => from,
            (None, None) => {
                let unit = ms(unit).max(1);
                (to / unit).saturating_sub(max_units.saturating_sub(1)) * unit
            }
        };
        if from > to {
            return Err(mcds_core::Error::InvalidArgument(format!(
                "--from-ms {from} is after --to-ms {to}: give the earlier time first"
            )));
        }
        Ok((from, to))
    }
}

/// `--resolution STEP:RETENTION` of `series`.
fn parse_resolution(text: &str) -> Result<mcds_timeseries::Resolution, String> {
    let Some((step, retention)) = text.split_once(':') else {
        return Err(format!(
            "invalid resolution {text:?}: use STEP:RETENTION, e.g. 1m:1d (buckets of a minute, kept a day)"
        ));
    };
    let step = crate::duration::parse(step)?;
    let retention = crate::duration::parse(retention)?;
    mcds_timeseries::Resolution::new(step, retention).map_err(|e| e.to_string())
}

/// The shape of a time series: every client of one series must give the
/// same resolutions.
#[derive(Args, Debug)]
pub(crate) struct SeriesShape {
    /// A resolution: buckets of STEP, readable for RETENTION after they end
    /// (1s:1h, 1m:1d, 1h:30d). Repeat it to record at several at once (up
    /// to 8, distinct steps); every client of a series gives the same ones
    #[arg(long = "resolution", value_name = "STEP:RETENTION", required = true,
          value_parser = parse_resolution)]
    pub(crate) resolutions: Vec<mcds_timeseries::Resolution>,
    #[command(flatten)]
    pub(crate) trust: LossCheck,
}

/// How a time series' reads tell lost data, and the clock skew they allow.
#[derive(Args, Debug)]
pub(crate) struct LossCheck {
    /// Read what the servers hold without asking whether they lost items
    /// (a restart, flush or eviction) since the data was written. By
    /// default a read fails (exit 3, "may have lost data") for a bucket
    /// its server cannot vouch for, including one from before the server
    /// started; with this, such a bucket may read short or empty
    #[arg(long)]
    pub(crate) no_loss_check: bool,
    /// The most the clocks of the series' clients differ by: a sample may
    /// lie at most this far ahead of now, and a read vouches for a bucket
    /// that starts twice this long after its server's last loss
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::duration::parse)]
    pub(crate) max_clock_skew: std::time::Duration,
}

/// What a read of a time series covers, and at which resolution.
#[derive(Args, Debug)]
pub(crate) struct SeriesRead {
    #[command(flatten)]
    pub(crate) range: TimeRange,
    /// The bucket length read: one of the --resolution steps (default: the
    /// finest)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) step: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) shape: SeriesShape,
}

/// A read of one time series.
#[derive(Args, Debug)]
pub(crate) struct SeriesQuery {
    /// The series
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) read: SeriesRead,
}

/// A read of several time series at once.
#[derive(Args, Debug)]
pub(crate) struct SeriesMulti {
    /// The series (all recorded at --step)
    #[arg(required = true)]
    pub(crate) names: Vec<String>,
    #[command(flatten)]
    pub(crate) read: SeriesRead,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SeriesCmd {
    /// Record a sample VALUE at --at-ms (default now), at every resolution
    ///
    /// Prints nothing (--json: the sample, and "recorded": false when it is
    /// past every retention). Counts, sums, min and max are exact under any
    /// number of concurrent recorders: each bucket is updated by CAS, which
    /// needs a memcached reached directly (not through a proxy). A sample
    /// older than every resolution's retention is not recorded (a warning
    /// says so; exit 0); one more than --max-clock-skew ahead of now is
    /// refused (exit 3).
    Record {
        /// The series
        name: String,
        /// The sample, an integer (negative ones too)
        #[arg(allow_negative_numbers = true)]
        value: i64,
        /// Sample time in Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: SeriesShape,
    },
    /// Print the non-empty buckets of the range, oldest first, one line
    /// each: `START_MS COUNT SUM MIN MAX AVG`
    ///
    /// --json: one object per bucket and line (as everywhere under --json,
    /// a number beyond 2^53 − 1 is a string).
    Range(SeriesQuery),
    /// Print the aggregates of every sample in the range: `COUNT SUM MIN MAX
    /// AVG`; exit 1 (printing nothing) when it has none
    Aggregate(SeriesQuery),
    /// Print how many samples the range holds
    Count(SeriesQuery),
    /// Print the exact sum of the range's samples (0 when none)
    Sum(SeriesQuery),
    /// Print the mean of the range's samples; exit 1 (printing nothing)
    /// when it has none
    Avg(SeriesQuery),
    /// Print the smallest sample of the range; exit 1 (printing nothing)
    /// when it has none
    Min(SeriesQuery),
    /// Print the largest sample of the range; exit 1 (printing nothing)
    /// when it has none
    Max(SeriesQuery),
    /// Print the buckets where any of the series has samples, each merging
    /// their samples there (as `range` prints them)
    ///
    /// Say the latency of every server of a fleet, per minute: `mcds series
    /// union latency:web1 latency:web2 --step 1m --last 1h --resolution 1m:1d`.
    /// The series are read in one batch.
    Union(SeriesMulti),
    /// Print the buckets where every one of the series has samples, each
    /// merging their samples there (as `range` prints them)
    Intersection(SeriesMulti),
}

/// How wide a packed series' slots are.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum Width {
    /// 1 byte, counts to 255
    U8,
    /// 2 bytes, counts to 65535
    U16,
    /// 4 bytes, counts to 4294967295
    U32,
}

impl From<Width> for mcds_timeseries::SlotWidth {
    fn from(width: Width) -> Self {
        match width {
            Width::U8 => mcds_timeseries::SlotWidth::U8,
            Width::U16 => mcds_timeseries::SlotWidth::U16,
            Width::U32 => mcds_timeseries::SlotWidth::U32,
        }
    }
}

/// The shape of a packed series: every client of one series must give the
/// same --slot, --period and --width.
#[derive(Args, Debug)]
pub(crate) struct PackedShape {
    /// Slot length: each slot counts the events of this long (1m, 1h, 500ms)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) slot: std::time::Duration,
    /// How long one item covers: a whole number of slots, 1 to 65536 of them
    /// (--period 1d with --slot 1m: 1440 slots per item)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) period: std::time::Duration,
    /// Slot width; a slot's count saturates at its largest value
    #[arg(long, value_enum, default_value = "u32")]
    pub(crate) width: Width,
    /// How long a period stays readable after it ends (default: one period)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub(crate) retention: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) trust: LossCheck,
}

#[derive(Subcommand, Debug)]
pub(crate) enum PackedCmd {
    /// Add DELTA (default 1) to the slot of --at-ms (default now); prints
    /// the slot's new count
    ///
    /// The count saturates at the width's largest value (255 for u8). A slot
    /// past retention is refused (exit 3).
    Incr {
        /// The series
        name: String,
        /// How much to add (default 1)
        delta: Option<u32>,
        /// A time in the slot, Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print the count of the slot of --at-ms (default now)
    Get {
        /// The series
        name: String,
        /// A time in the slot, Unix milliseconds (default now)
        #[arg(long, value_name = "MS")]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print every slot of the range within retention, oldest first, zeros
    /// included: `START_MS COUNT` per line (at most 100000 slots)
    Range {
        /// The series
        name: String,
        #[command(flatten)]
        range: TimeRange,
        #[command(flatten)]
        shape: PackedShape,
    },
    /// Print the sum of the slots of the range
    Sum {
        /// The series
        name: String,
        #[command(flatten)]
        range: TimeRange,
        #[command(flatten)]
        shape: PackedShape,
    },
}

/// The scale of a counter map.
#[derive(Args, Debug)]
pub(crate) struct MapScale {
    /// Decimal places: the map counts units of 10^-PLACES exactly, no float
    /// stored (2: cents, 0.10 added ten times is 1.00), 0 to 18. Every
    /// client of a map must use the same
    #[arg(long, value_name = "PLACES", default_value_t = 0)]
    pub(crate) scale: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum MapCmd {
    /// Add BY (default 1; negative to subtract) to FIELD, creating it;
    /// prints the new value
    ///
    /// BY is exact at --scale places: more places are refused (exit 3)
    /// unless --round. Values stay within ±2^61 (decrements stop at -2^61);
    /// one call adds at most 2^56 - 1 units.
    Incr {
        /// The map
        name: String,
        /// The field (any string of 1 to 1024 bytes)
        field: String,
        /// How much to add: an integer, or a decimal with --scale (-1.25)
        #[arg(allow_negative_numbers = true)]
        by: Option<String>,
        /// Round BY half away from zero to --scale places instead of refusing
        /// more places
        #[arg(long)]
        round: bool,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print FIELD's value (0 if it does not exist)
    Get {
        /// The map
        name: String,
        /// The field
        field: String,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print `field<TAB>value` per field, in the order they were first
    /// counted
    ///
    /// Fields are printed as they are; for fields with tabs or newlines use
    /// --json, which prints one array of {"field": …, "value": …} objects
    /// (values as numbers, or with --scale as exact decimal strings).
    GetAll {
        /// The map
        name: String,
        #[command(flatten)]
        scale: MapScale,
    },
    /// Print the fields, one per line, in the order they were first counted
    Fields {
        /// The map
        name: String,
    },
    /// Print how many fields the map has (0: it is empty)
    Len {
        /// The map
        name: String,
    },
    /// Remove FIELD (its value is gone); exit 1 if it did not exist
    Remove {
        /// The map
        name: String,
        /// The field
        field: String,
    },
}

/// The shape of a leaderboard.
#[derive(Args, Debug)]
pub(crate) struct BoardShape {
    /// Members the board keeps: counts are exact up to this many members,
    /// then each overestimates by at most total/capacity (shown as its
    /// error). Every client of a board must use the same
    #[arg(long)]
    pub(crate) capacity: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LeaderboardCmd {
    /// Add BY (default 1) to MEMBER's count; prints its new count
    Incr {
        /// The board
        name: String,
        /// The member (at most 128 bytes; the empty member is one too)
        member: String,
        /// How much to add, at least 1 (default 1)
        by: Option<u64>,
        /// Let the board expire this long after its last increment (30, 5m,
        /// 1d; default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print the K members with the largest counts, largest first:
    /// `member<TAB>count<TAB>error` per line
    ///
    /// The error is how much the count may overestimate (0 while the board
    /// is exact). --json prints one array of {"member", "count", "error"}
    /// objects.
    Top {
        /// The board
        name: String,
        /// How many members
        #[arg(short = 'k', value_name = "K", default_value_t = 10)]
        k: usize,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print MEMBER's count; exit 1 (printing nothing) if it is not on the
    /// board
    ///
    /// --json adds its error (how much the count may overestimate). A
    /// member off the board has a true count of at most the board's
    /// max_error (see `summary`).
    Score {
        /// The board
        name: String,
        /// The member
        member: String,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print the board's state: `members=N capacity=C total=T exact=BOOL
    /// max_error=E`
    ///
    /// total is the sum of every increment counted; max_error how much a
    /// count may overestimate, and the most a member off the board can have
    /// (0 while exact).
    Summary {
        /// The board
        name: String,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Delete the board
    Clear {
        /// The board
        name: String,
    },
}

/// The shape of a scalable Bloom filter: every client of one filter must
/// use the same.
#[derive(Args, Debug)]
pub(crate) struct SbloomShape {
    /// Elements the first layer takes; when it is full a layer --growth
    /// times larger is added, and so on
    #[arg(long)]
    pub(crate) capacity: u64,
    /// False-positive rate of the whole filter, however many layers it
    /// grows, e.g. 0.01
    #[arg(long, default_value_t = 0.01)]
    pub(crate) fpr: f64,
    /// How many times larger each layer is than the one before, 1 to 16
    #[arg(long, default_value_t = 2)]
    pub(crate) growth: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SbloomCmd {
    /// Add elements; prints how many were new
    Add {
        /// The filter
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Exit 0 if every ELEMENT may have been added, 1 if one certainly was
    /// not
    ///
    /// Prints nothing; --json prints one object per element, with
    /// "maybe_present".
    Check {
        /// The filter
        name: String,
        /// The elements to look for (one round trip for all)
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Print how many layers the filter has grown to
    Layers {
        /// The filter
        name: String,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Delete the filter, every layer of it
    Clear {
        /// The filter
        name: String,
        #[command(flatten)]
        shape: SbloomShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum KvCmd {
    /// Print KEY's value (lossy UTF-8, then a newline); exit 1 if absent
    ///
    /// --json gives the value, its flags and its CAS id (as mcds clients
    /// see it, masked per server incarnation, not memcached's raw id).
    Get {
        /// The key (after --prefix)
        key: String,
    },
    /// Store VALUE under KEY, replacing any value
    Set {
        /// The key (after --prefix)
        key: String,
        /// The value
        value: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
    },
    /// Store VALUE under KEY only if KEY is absent; exit 1 if it exists
    Add {
        /// The key (after --prefix)
        key: String,
        /// The value
        value: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
    },
    /// Delete KEY; exit 1 if it was absent
    Delete {
        /// The key (after --prefix)
        key: String,
    },
    /// Add DELTA (default 1) to the number under KEY and print the result;
    /// exit 1 if KEY is absent
    ///
    /// memcached's incr: nothing is created when KEY is absent, a value that
    /// is not a decimal number exits 3, and the result wraps around at 2^64.
    Incr {
        /// The key (after --prefix)
        key: String,
        /// How much to add (default 1)
        delta: Option<u64>,
    },
    /// Replace KEY's value by what a command makes of it, atomically (CAS)
    ///
    /// Runs `/bin/sh -c SHELL_COMMAND` with KEY's value on standard input
    /// (nothing when absent; MCDS_KV_EXISTS is 1 or 0) and writes exactly
    /// what it prints on standard output (a trailing newline included: use
    /// printf) as the new value, only if nobody changed
    /// KEY meanwhile; if someone did, runs it again on the new value (up to
    /// --max-attempts times, then exit 5). The command may run several
    /// times: it must only compute. If it exits non-zero, nothing is
    /// written and mcds exits 1. Refused (exit 3) on a store without CAS.
    ///
    ///   mcds kv update config:version -c 'printf %s $(( $(cat) + 0 + 1 ))'
    #[command(verbatim_doc_comment)]
    Update {
        /// The key (after --prefix)
        key: String,
        /// The command: run with /bin/sh -c, KEY's value on standard input
        #[arg(short = 'c', long = "command", value_name = "SHELL_COMMAND")]
        shell: String,
        /// Expire after this long, rounded up to whole seconds (30, 5m, 1d;
        /// default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
        /// How many reads (and runs of the command) before giving up on a
        /// key other clients keep changing
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
        max_attempts: u32,
    },
    /// Make KEY expire --ttl from now, value unchanged; exit 1 if absent
    Touch {
        /// The key (after --prefix)
        key: String,
        /// The new time to live, rounded up to whole seconds (30, 5m, 1d)
        #[arg(long, value_parser = positive_duration)]
        ttl: std::time::Duration,
    },
}

/// A duration above zero: a TTL of 0 would mean "never" to memcached and
/// "one second" to mcds, so neither is guessed; leave --ttl out for never.
fn positive_duration(text: &str) -> Result<std::time::Duration, String> {
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

    #[test]
    fn resolutions_are_step_colon_retention() {
        use std::time::Duration;
        let r = parse_resolution("1m:1d").unwrap();
        assert_eq!(
            (r.step(), r.retention()),
            (Duration::from_secs(60), Duration::from_secs(86_400))
        );
        let r = parse_resolution("500ms:1h30m").unwrap();
        assert_eq!(
            (r.step(), r.retention()),
            (Duration::from_millis(500), Duration::from_secs(5400))
        );
        for (bad, says) in [
            ("1m", "STEP:RETENTION"),
            ("", "STEP:RETENTION"),
            ("1m:", "500ms"),
            ("x:1d", "500ms"),
            ("1m:1s", "raise it"),
            ("0:1d", "step"),
        ] {
            let e = parse_resolution(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn time_ranges_default_to_the_most_one_read_takes_up_to_now() {
        use std::time::Duration;
        let range = |from_ms, to_ms, last: Option<u64>| TimeRange {
            from_ms,
            to_ms,
            last: last.map(Duration::from_secs),
        };
        let resolve = |r: TimeRange| r.resolve(5000, Duration::from_millis(10), 1000).unwrap();
        assert_eq!(resolve(range(None, None, None)), (0, 5000));
        assert_eq!(
            range(None, None, None)
                .resolve(5000, Duration::from_millis(10), 100)
                .unwrap(),
            (4010, 5000),
            "100 units of 10 ms, the last one 5000's"
        );
        assert_eq!(resolve(range(Some(10), Some(20), None)), (10, 20));
        assert_eq!(resolve(range(None, None, Some(2))), (3000, 5000));
        assert_eq!(resolve(range(None, Some(4000), Some(2))), (2000, 4000));
        assert_eq!(resolve(range(None, None, Some(60))), (0, 5000));
        let reversed =
            range(Some(30), Some(20), None).resolve(5000, Duration::from_millis(10), 1000);
        assert!(reversed.unwrap_err().to_string().contains("after --to-ms"));
    }

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
