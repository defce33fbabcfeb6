//! `mcds`: every mcds structure from the shell.
//!
//! Run `mcds --help`, or see the README's CLI section. Exit codes: 0 ok;
//! 1 a negative answer (denied, not a member); 2 usage; 3 invalid input
//! (bad key or value); 4 connection, timeout or server error; 75 lock not
//! acquired.

mod demo;

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mc_core::{Error, MemoryStore, Scope, Store};
use mc_counter::{Counter, RateLimiter, Window, WindowCounter};
use mc_eventlog::EventLog;
use mc_lock::{Lock, Release};
use mc_memcached::MemcachedStore;
use mc_set::Set;
use mc_sketch::{ActivityBitmap, BloomFilter, HyperLogLog};
use serde_json::json;

/// Exit codes.
const OK: u8 = 0;
const NEGATIVE: u8 = 1;
/// Usage errors, as clap exits for them.
const USAGE: u8 = 2;
const INVALID_INPUT: u8 = 3;
const UNAVAILABLE: u8 = 4;
const LOCK_NOT_ACQUIRED: u8 = 75;
/// `lock run`: the lease was lost while the command ran; it was sent SIGTERM.
const LEASE_LOST: u8 = 76;

/// Distributed data structures on memcached, from the shell.
///
/// Without --servers (or MCDS_SERVERS) mcds uses an embedded in-process
/// store whose state ends with the command: fine for `mcds demo`, useless
/// for anything else.
#[derive(Parser, Debug)]
#[command(name = "mcds", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    global: Global,

    #[command(subcommand)]
    command: Cmd,
}

/// The options every command takes.
#[derive(clap::Args, Debug)]
struct Global {
    /// memcached servers, host:port[,host:port...]
    #[arg(long, env = "MCDS_SERVERS", global = true)]
    servers: Option<String>,

    /// Prefix for every key, e.g. "myapp/"
    #[arg(long, default_value = "", global = true)]
    prefix: String,

    /// Connect and request timeout in milliseconds
    #[arg(long, default_value_t = 1000, global = true)]
    timeout_ms: u64,

    /// Print results as JSON
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum Cmd {
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
enum HllCmd {
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
struct BloomShape {
    /// Expected number of elements (every client must use the same)
    #[arg(long)]
    capacity: u64,
    /// False-positive rate at capacity, e.g. 0.01
    #[arg(long, default_value_t = 0.01)]
    fpr: f64,
}

#[derive(Subcommand, Debug)]
enum BloomCmd {
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
struct BitmapShape {
    /// Unix seconds of bit 0
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Seconds per bit
    #[arg(long, default_value_t = 86_400)]
    unit: u64,
}

#[derive(Subcommand, Debug)]
enum BitmapCmd {
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
enum CounterCmd {
    /// Add DELTA (default 1) and print the new value
    Incr { name: String, delta: Option<u64> },
    /// Subtract DELTA (default 1, stops at 0) and print the new value
    Decr { name: String, delta: Option<u64> },
    /// Print the value (0 if absent)
    Get { name: String },
}

#[derive(Subcommand, Debug)]
enum LockCmd {
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
        /// Lease length in seconds; renewed every ttl/3 while CMD runs
        #[arg(long)]
        ttl: u64,
        /// Wait up to SECS for the lock (default: try once)
        #[arg(long, default_value_t = 0.0)]
        wait: f64,
        /// Pass a fencing token to CMD in MCDS_FENCING_TOKEN
        #[arg(long)]
        fencing: bool,
        /// The command and its arguments
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
enum SetCmd {
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
struct LogShape {
    /// Chunk length in seconds
    #[arg(long, default_value_t = 60)]
    chunk: u64,
    /// Number of chunks (the log keeps (chunks - 1) * chunk seconds)
    #[arg(long, default_value_t = 61)]
    chunks: usize,
}

#[derive(Subcommand, Debug)]
enum LogCmd {
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
struct WindowShape {
    /// Slot length in seconds
    #[arg(long)]
    slot: u64,
    /// Number of slots (the value counts the last slots - 1)
    #[arg(long)]
    slots: usize,
}

#[derive(Subcommand, Debug)]
enum WindowCmd {
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
enum LimitCmd {
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

/// A failure: what to print and which code to exit with.
struct Failure {
    code: u8,
    message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        // Bad input, or stored bytes the command cannot use: the same
        // call fails again. Everything else is the service's state.
        let stored_data = matches!(e, Error::NonNumeric { .. } | Error::Corrupt { .. });
        let code = if e.is_invalid_input() || stored_data {
            INVALID_INPUT
        } else {
            UNAVAILABLE
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

type CliResult = Result<u8, Failure>;

struct Ctx {
    scope: Scope,
    json: bool,
}

impl Ctx {
    fn print(&self, text: impl std::fmt::Display, value: serde_json::Value) {
        if self.json {
            println!("{value}");
        } else {
            println!("{text}");
        }
    }

    fn set(&self, name: &str) -> Result<Set, Error> {
        Set::new(&self.scope, name)
    }

    fn log(&self, name: &str, shape: &LogShape) -> Result<EventLog, Error> {
        EventLog::new(
            &self.scope,
            name,
            Duration::from_secs(shape.chunk),
            shape.chunks,
        )
    }

    fn window(&self, name: &str, shape: &WindowShape) -> Result<WindowCounter, Error> {
        WindowCounter::new(
            &self.scope,
            name,
            Duration::from_secs(shape.slot),
            shape.slots,
        )
    }
}

fn connect(cli: &Global) -> Result<Arc<dyn Store>, Failure> {
    match cli
        .servers
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(servers) => {
            let timeout = Duration::from_millis(cli.timeout_ms.max(1));
            let store = MemcachedStore::builder()
                .connect_timeout(timeout)
                .io_timeout(timeout)
                .connect(servers.split(',').filter(|s| !s.trim().is_empty()))
                .map_err(|e| Failure {
                    code: INVALID_INPUT,
                    message: e.to_string(),
                })?;
            Ok(Arc::new(store))
        }
        None => Ok(Arc::new(MemoryStore::new())),
    }
}

/// The store and output settings of one command, opened only for the
/// commands that use a store. `lock` refuses the embedded store: a lock
/// there excludes nobody, so every host would run the command.
fn open(cli: &Global, for_lock: bool) -> Result<Ctx, Failure> {
    let embedded = cli.servers.as_deref().is_none_or(|s| s.trim().is_empty());
    if embedded && for_lock {
        return Err(Failure {
            code: USAGE,
            message: "mcds lock run needs memcached servers: a lock on the embedded store excludes nobody, so every host would run the command. Set --servers or MCDS_SERVERS (e.g. 127.0.0.1:11211)".into(),
        });
    }
    if embedded {
        eprintln!(
            "mcds: warning: no --servers (or MCDS_SERVERS) given: using an embedded store whose state ends with this command"
        );
    }
    Ok(Ctx {
        scope: Scope::new(connect(cli)?).with_prefix(&cli.prefix)?,
        json: cli.json,
    })
}

fn run(cli: Cli) -> CliResult {
    let Cli { global, command } = cli;
    let ctx = || open(&global, false);
    match command {
        Cmd::Demo => {
            demo::run();
            Ok(OK)
        }
        Cmd::Lock(cmd) => lock(&open(&global, true)?, cmd),
        Cmd::Counter(cmd) => counter(&ctx()?, cmd),
        Cmd::Set(cmd) => set(&ctx()?, cmd),
        Cmd::Log(cmd) => log(&ctx()?, cmd),
        Cmd::Window(cmd) => window(&ctx()?, cmd),
        Cmd::Limit(cmd) => limit(&ctx()?, cmd),
        Cmd::Hll(cmd) => hll(&ctx()?, cmd),
        Cmd::Bloom(cmd) => bloom(&ctx()?, cmd),
        Cmd::Bitmap(cmd) => bitmap(&ctx()?, cmd),
    }
}

fn hll(ctx: &Ctx, cmd: HllCmd) -> CliResult {
    let open = |name: &str| HyperLogLog::new(&ctx.scope, name);
    match cmd {
        HllCmd::Add { name, elements } => {
            let changed = open(&name)?.add_many(&elements)?;
            ctx.print(
                u8::from(changed),
                json!({ "hll": name, "changed": changed }),
            );
        }
        HllCmd::Count { names } => {
            let sketches = names
                .iter()
                .map(|n| open(n))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&HyperLogLog> = sketches.iter().collect();
            let count = HyperLogLog::count_union(&refs)?;
            ctx.print(count, json!({ "hll": names, "count": count }));
        }
        HllCmd::Merge { target, sources } => {
            let sketches = sources
                .iter()
                .map(|n| open(n))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&HyperLogLog> = sketches.iter().collect();
            let target_hll = open(&target)?;
            target_hll.merge(&refs)?;
            let count = target_hll.count()?;
            ctx.print(
                count,
                json!({ "hll": target, "merged": sources, "count": count }),
            );
        }
    }
    Ok(OK)
}

fn bloom(ctx: &Ctx, cmd: BloomCmd) -> CliResult {
    let open = |name: &str, shape: &BloomShape| {
        BloomFilter::new(&ctx.scope, name, shape.capacity, shape.fpr)
    };
    match cmd {
        BloomCmd::Add {
            name,
            elements,
            shape,
        } => {
            let new = open(&name, &shape)?.add_many(&elements)?;
            ctx.print(new, json!({ "bloom": name, "new": new }));
            Ok(OK)
        }
        BloomCmd::Check {
            name,
            element,
            shape,
        } => {
            let found = open(&name, &shape)?.contains(&element)?;
            if ctx.json {
                println!(
                    "{}",
                    json!({ "bloom": name, "element": element, "maybe_present": found })
                );
            }
            Ok(if found { OK } else { NEGATIVE })
        }
    }
}

fn bitmap(ctx: &Ctx, cmd: BitmapCmd) -> CliResult {
    let open = |name: &str, shape: &BitmapShape| {
        ActivityBitmap::new(
            &ctx.scope,
            name,
            shape.start,
            Duration::from_secs(shape.unit),
        )
    };
    match cmd {
        BitmapCmd::Mark {
            name,
            at_ms,
            index,
            shape,
        } => {
            let b = open(&name, &shape)?;
            let previous = match (index, at_ms) {
                (Some(i), _) => b.set(i)?,
                (None, Some(at)) => b.mark(at)?,
                (None, None) => b.mark_now()?,
            };
            ctx.print(
                u8::from(previous),
                json!({ "bitmap": name, "previous": previous }),
            );
        }
        BitmapCmd::Count {
            name,
            first,
            last,
            shape,
        } => {
            let count = open(&name, &shape)?.count_bits(first, last)?;
            ctx.print(
                count,
                json!({ "bitmap": name, "first": first, "last": last, "count": count }),
            );
        }
    }
    Ok(OK)
}

fn counter(ctx: &Ctx, cmd: CounterCmd) -> CliResult {
    let (CounterCmd::Incr { name, .. } | CounterCmd::Decr { name, .. } | CounterCmd::Get { name }) =
        &cmd;
    let c = Counter::new(&ctx.scope, name)?;
    let value = match &cmd {
        CounterCmd::Incr { delta, .. } => c.incr(delta.unwrap_or(1))?,
        CounterCmd::Decr { delta, .. } => c.decr(delta.unwrap_or(1))?,
        CounterCmd::Get { .. } => c.get()?,
    };
    ctx.print(value, json!({ "counter": name, "value": value }));
    Ok(OK)
}

fn lock(ctx: &Ctx, cmd: LockCmd) -> CliResult {
    let LockCmd::Run {
        name,
        ttl,
        wait,
        fencing,
        cmd,
    } = cmd;
    if !(wait.is_finite() && wait >= 0.0) {
        return Err(Failure {
            code: INVALID_INPUT,
            message: format!("--wait must be a number of seconds >= 0, got {wait}"),
        });
    }
    let ttl = Duration::from_secs(ttl);
    let lock = Lock::new(&ctx.scope, &name, ttl)?.with_fencing(fencing);
    let guard = if wait == 0.0 {
        lock.try_acquire()?
    } else {
        match lock.acquire(Duration::from_secs_f64(wait)) {
            Ok(guard) => Some(guard),
            Err(Error::WaitTimeout { .. }) => None,
            Err(e) => return Err(e.into()),
        }
    };
    let Some(mut guard) = guard else {
        eprintln!(
            "mcds: lock {name:?} is held by another owner; not running the command (exit 75)"
        );
        return Ok(LOCK_NOT_ACQUIRED);
    };
    let mut command = Command::new(&cmd[0]);
    command.args(&cmd[1..]);
    if let Some(token) = guard.fencing_token() {
        command.env("MCDS_FENCING_TOKEN", token.to_string());
    }
    // Its own process group, so the whole job (its children too) can be
    // signalled, and a terminal's Ctrl-C reaches it once, through mcds.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // PR_SET_PDEATHSIG: if mcds dies, even by SIGKILL, the kernel kills the
    // command, which must not run on without the lock.
    let mut child = match ur_taking_me_with_you::spawn_dying_with_parent(command) {
        Ok(child) => child,
        Err(e) => {
            let _ = guard.release();
            return Err(Failure {
                code: INVALID_INPUT,
                message: format!("cannot run {:?}: {e}", cmd[0]),
            });
        }
    };
    let job = Job::new(&child);
    // The parent-death signal reaches only the command itself; its own
    // children are killed by this watcher when mcds goes away, however.
    let watcher = job.dead_man_switch();
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // After SIGTERM on a lost lease, the job gets this long before SIGKILL:
    // the renewer reports the loss about TTL/3 before the lease can end.
    let grace = (ttl / 6).clamp(Duration::from_millis(100), Duration::from_secs(5));
    guard.auto_extend_with(ttl, {
        let name = name.clone();
        let lost = Arc::clone(&lost);
        let job = job.clone();
        move |e| {
            lost.store(true, std::sync::atomic::Ordering::SeqCst);
            let why = e.map(|e| format!(": {e}")).unwrap_or_default();
            eprintln!(
                "mcds: lost the lease on lock {name:?} while the command runs{why}; stopping it (SIGTERM, SIGKILL after {grace:?}; exit 76)"
            );
            job.signal(rustix::process::Signal::TERM);
            std::thread::sleep(grace);
            job.signal(rustix::process::Signal::KILL);
        }
    })?;
    let forwarder = job.forward_signals();
    let status = child.wait();
    // Whatever the command left running in its group ends with it, before
    // the lock is released.
    job.signal(rustix::process::Signal::KILL);
    job.exited();
    if let Some(handle) = forwarder {
        handle.close();
    }
    let released = guard.release();
    if let Some(mut watcher) = watcher {
        drop(watcher.stdin.take());
        let _ = watcher.wait();
    }
    let status = status.map_err(|e| Failure {
        code: INVALID_INPUT,
        message: format!("waiting for {:?}: {e}", cmd[0]),
    })?;
    let lease_lost = lost.load(std::sync::atomic::Ordering::SeqCst);
    match released {
        Ok(Release::Lost) if !lease_lost => eprintln!(
            "mcds: warning: the lease on lock {name:?} had been lost before the command finished (TTL {} s too short?)",
            ttl.as_secs()
        ),
        Err(e) => {
            eprintln!("mcds: warning: could not release lock {name:?}: {e}; it expires by itself")
        }
        _ => {}
    }
    if lease_lost {
        return Ok(LEASE_LOST);
    }
    Ok(exit_code(status))
}

/// The running command of `lock run` (the leader of its own process group),
/// for signalling it and everything it started until it exits.
#[derive(Clone)]
struct Job {
    group: Option<rustix::process::Pid>,
    /// Set once the group has been killed after the command exited.
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Job {
    fn new(child: &std::process::Child) -> Job {
        Job {
            group: i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw),
            done: Arc::default(),
        }
    }

    /// Signal the job's whole process group.
    fn signal(&self, signal: rustix::process::Signal) {
        if let Some(group) = self.group
            && !self.done.load(std::sync::atomic::Ordering::SeqCst)
        {
            let _ = rustix::process::kill_process_group(group, signal);
        }
    }

    fn exited(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// A small `sh` that waits for its standard input (a pipe from mcds) to
    /// close, then SIGKILLs the job's process group. The pipe closes when
    /// mcds exits or dies in any way, SIGKILL included, so nothing the job
    /// started runs on without the lock. It ignores the terminal's signals.
    fn dead_man_switch(&self) -> Option<std::process::Child> {
        let group = self.group?;
        Command::new("/bin/sh")
            .args([
                "-c",
                "trap '' INT TERM HUP; read _; kill -s KILL -- -\"$0\" 2>/dev/null",
                &group.as_raw_nonzero().to_string(),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()
    }

    /// Pass SIGTERM, SIGINT and SIGHUP on to the job's group (from a
    /// thread, until the handle is closed), as a supervisor should: mcds
    /// keeps renewing the lease until the command has actually exited.
    fn forward_signals(&self) -> Option<signal_hook::iterator::Handle> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]).ok()?;
        let handle = signals.handle();
        let job = self.clone();
        std::thread::spawn(move || {
            for raw in signals.forever() {
                if let Some(signal) = rustix::process::Signal::from_named_raw(raw) {
                    job.signal(signal);
                }
            }
        });
        Some(handle)
    }
}

fn exit_code(status: std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return u8::try_from((128 + signal) & 0xff).unwrap_or(1);
        }
    }
    1
}

fn set(ctx: &Ctx, cmd: SetCmd) -> CliResult {
    match cmd {
        SetCmd::Add { name, members } => {
            ctx.set(&name)?.add(&members)?;
            if ctx.json {
                println!("{}", json!({ "set": name, "added": members }));
            }
            Ok(OK)
        }
        SetCmd::Remove { name, members } => {
            ctx.set(&name)?.remove(&members)?;
            if ctx.json {
                println!("{}", json!({ "set": name, "removed": members }));
            }
            Ok(OK)
        }
        SetCmd::Members { name } => {
            let members = ctx.set(&name)?.members_utf8()?;
            if ctx.json {
                println!("{}", json!({ "set": name, "members": members }));
            } else {
                for m in members {
                    println!("{m}");
                }
            }
            Ok(OK)
        }
        SetCmd::Contains { name, member } => {
            let found = ctx.set(&name)?.contains(&member)?;
            ctx.print(
                found,
                json!({ "set": name, "member": member, "contains": found }),
            );
            Ok(if found { OK } else { NEGATIVE })
        }
    }
}

fn log(ctx: &Ctx, cmd: LogCmd) -> CliResult {
    match cmd {
        LogCmd::Put {
            name,
            payload,
            at_ms,
            shape,
        } => {
            let log = ctx.log(&name, &shape)?;
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
            let events = ctx
                .log(&name, &shape)?
                .fetch(from_ms.unwrap_or(0), to_ms.unwrap_or(u64::MAX))?;
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

fn window(ctx: &Ctx, cmd: WindowCmd) -> CliResult {
    let (name, value) = match &cmd {
        WindowCmd::Incr { name, shape } => (name, ctx.window(name, shape)?.incr(1)?),
        WindowCmd::Get { name, shape } => (name, ctx.window(name, shape)?.value()?),
    };
    ctx.print(value, json!({ "window": name, "value": value }));
    Ok(OK)
}

fn limit(ctx: &Ctx, cmd: LimitCmd) -> CliResult {
    let LimitCmd::Check {
        name,
        limit,
        window,
        sliding,
    } = cmd;
    let mode = if sliding {
        Window::Sliding
    } else {
        Window::Fixed
    };
    let limiter = RateLimiter::new(&ctx.scope, &name, limit, Duration::from_secs(window), mode)?;
    let d = limiter.check()?;
    let retry_ms = d.retry_after.as_millis();
    ctx.print(
        format!(
            "{} remaining={} retry_after_ms={retry_ms}",
            if d.allowed { "allowed" } else { "denied" },
            d.remaining
        ),
        json!({ "limit": name, "allowed": d.allowed, "remaining": d.remaining, "retry_after_ms": retry_ms }),
    );
    Ok(if d.allowed { OK } else { NEGATIVE })
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
