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
#[command(name = "mcds", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,

    #[command(subcommand)]
    pub(crate) command: Cmd,
}

/// The options every command takes.
#[derive(clap::Args, Debug)]
pub(crate) struct Global {
    /// memcached servers, host:port[,host:port...]
    #[arg(long, env = "MCDS_SERVERS", global = true)]
    pub(crate) servers: Option<String>,

    /// Prefix for every key, e.g. "myapp/"
    #[arg(long, default_value = "", global = true)]
    pub(crate) prefix: String,

    /// Connect and request timeout in milliseconds
    #[arg(long, default_value_t = 1000, global = true)]
    pub(crate) timeout_ms: u64,

    /// Print results as JSON
    #[arg(long, global = true)]
    pub(crate) json: bool,
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
}

#[derive(Subcommand, Debug)]
pub(crate) enum HllCmd {
    /// Add elements; prints 1 if the estimate may have changed, else 0
    Add {
        name: String,
        #[arg(required = true)]
        elements: Vec<String>,
    },
    /// Print the estimated number of distinct elements (of the union, for
    /// several names)
    Count {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Write the union of TARGET and SOURCES into TARGET
    Merge {
        target: String,
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
        name: String,
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: BloomShape,
    },
    /// Exit 0 if ELEMENT may have been added, 1 if it certainly was not
    Check {
        name: String,
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
        name: String,
        first: u64,
        last: u64,
        #[command(flatten)]
        shape: BitmapShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum CounterCmd {
    /// Add DELTA (default 1) and print the new value
    Incr { name: String, delta: Option<u64> },
    /// Subtract DELTA (default 1, stops at 0) and print the new value
    Decr { name: String, delta: Option<u64> },
    /// Print the value (0 if absent)
    Get { name: String },
}

#[derive(Subcommand, Debug)]
pub(crate) enum LockCmd {
    /// Run CMD while holding lock NAME; exit with CMD's code, or 75 if the
    /// lock was not acquired in time.
    ///
    /// CMD runs in a process group of its own (so it is not in the
    /// terminal's foreground: lock run is for commands that do not read the
    /// terminal, as cron jobs do not); the lease is renewed every
    /// ttl/3 until CMD exits, and then whatever CMD left running in its group
    /// is killed before the lock is released. SIGTERM, SIGINT and SIGHUP
    /// sent to mcds are passed on to CMD's group; if mcds itself is killed
    /// (even with SIGKILL), CMD's group is killed with it. If the lease is
    /// lost all the same (the server restarted or evicted it, or renewals
    /// failed until the next would come too late), CMD's group gets SIGTERM,
    /// then SIGKILL after ttl/6 (0.1 to 5 s), and mcds exits 76. Needs
    /// --servers or MCDS_SERVERS: an embedded lock would exclude nobody.
    Run {
        name: String,
        /// Lease length (1.5, 500ms, 30s, 5m); renewed every ttl/3 while CMD runs
        #[arg(long, value_parser = crate::duration::parse)]
        ttl: std::time::Duration,
        /// Wait up to this long for the lock (default: try once)
        #[arg(long, value_parser = crate::duration::parse, default_value = "0")]
        wait: std::time::Duration,
        /// Pass a fencing token to CMD in MCDS_FENCING_TOKEN
        #[arg(long)]
        fencing: bool,
        /// The command and its arguments
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum SetCmd {
    /// Add members
    Add {
        name: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Remove members
    Remove {
        name: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Print the members, one per line, in insertion order
    Members { name: String },
    /// Exit 0 if MEMBER is in the set, 1 if not
    Contains { name: String, member: String },
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
        name: String,
        payload: String,
        /// Event time in Unix milliseconds (default now)
        #[arg(long)]
        at_ms: Option<u64>,
        #[command(flatten)]
        shape: LogShape,
    },
    /// Print events as `<unix ms> <payload>`, in time order
    Fetch {
        name: String,
        #[arg(long)]
        from_ms: Option<u64>,
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
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
    /// Print the events of the last slots - 1 slots
    Get {
        name: String,
        #[command(flatten)]
        shape: WindowShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum LimitCmd {
    /// Count a request; exit 0 if allowed, 1 if denied
    Check {
        name: String,
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
