//! `mcds lock run`: a distributed flock(1) (mcds-lock).
//!
//! The command runs in a process group of its own while the lease is
//! renewed; [`Job`] signals that group (forwarded signals, a lost lease, the
//! end of the run) and kills it if mcds dies, so nothing the command started
//! runs on without the lock.

use clap::{Args, Subcommand};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::Error;
use mcds_lock::{Lock, Release};

use serde_json::json;

use crate::args::exit_codes_help;
use crate::context::{CliResult, Ctx, Failure, Target};
use crate::duration::show;
use crate::{INVALID_INPUT, LEASE_LOST, NEGATIVE, OK, USAGE};

pub(crate) fn lock(ctx: &Ctx, cmd: LockCmd) -> CliResult {
    match cmd {
        LockCmd::Run(args) => run(ctx, args),
        LockCmd::Status { name, exact } => status(
            ctx,
            &Target::new(ctx, name, exact.key, "mcds lock status <NAME|--key KEY>")?,
        ),
    }
}

/// The lock of `target`, a NAME in the scope or an exact key.
fn open(ctx: &Ctx, target: &Target, ttl: Duration) -> Result<Lock, Error> {
    match target {
        Target::Name(name) => Lock::new(&ctx.scope, name, ttl),
        Target::Key(key) => Lock::with_key(Arc::clone(ctx.scope.store()), key.clone(), ttl),
    }
}

/// `lock status NAME` (or `--key KEY`): the holder and its lease's time
/// left, read in one round trip from the server that owns the lock item (on
/// a quorum: the holder a majority of its servers names, read from all).
fn status(ctx: &Ctx, target: &Target) -> CliResult {
    let lock = open(ctx, target, Duration::from_secs(1))?;
    // A quorum's holder is the one a majority of its servers names.
    let quorum = ctx.scope.store().quorum().is_some();
    // The time left: `Some(Some(d))`, `Some(None)` for an item with no
    // TTL, `None` where the store does not say (a text:// proxy, a
    // quorum, whose servers each keep their own).
    let held = match &ctx.memcached {
        Some(store) if !quorum => store
            .get_with_ttl(lock.key())?
            .map(|(owner, left)| (owner, Some(left))),
        _ => lock.holder()?.map(|h| (h.into_bytes(), None)),
    };
    let Some((owner, left)) = held else {
        ctx.print("free", target.json("lock", json!({ "held": false })));
        return Ok(NEGATIVE);
    };
    let owner = String::from_utf8_lossy(&owner);
    let (text_left, ms_left) = match left {
        Some(Some(left)) => (
            format!("expires in {}", show(left)),
            json!(left.as_millis() as u64),
        ),
        Some(None) => ("never expires (no TTL)".to_string(), json!(null)),
        None if quorum => (
            "on a majority of the quorum (each server keeps its own expiry)".to_string(),
            json!(null),
        ),
        None => (
            "expiry unknown (a text:// store does not report it)".to_string(),
            json!(null),
        ),
    };
    ctx.print(
        format!("held by {owner}; {text_left}"),
        target.json(
            "lock",
            json!({ "held": true, "owner": owner, "expires_in_ms": ms_left }),
        ),
    );
    Ok(OK)
}

/// Who this process is, written into its owner token for `lock status`.
fn owner_label() -> String {
    let uname = rustix::system::uname();
    let host: String = uname
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(100)
        .collect();
    format!("host={host} pid={}", std::process::id())
}

/// `lock run`: flock(1) across machines.
fn run(ctx: &Ctx, args: RunArgs) -> CliResult {
    let RunArgs {
        nonblock,
        wait,
        conflict_exit_code,
        shell,
        ttl,
        fencing,
        exact,
        name,
        cmd,
        options_after_name,
    } = args;
    let report = ctx.report;
    let usage = "mcds lock run [OPTIONS] <NAME|--key KEY> <CMD>... (or -c SHELL_COMMAND)";
    // With --key, NAME is left out, so the first word clap took for NAME
    // begins the command: `lock run --key report-lock ./report.sh`. Options
    // after that word were the command's (`ls -n`), taken by mcds only
    // because clap saw a NAME there: refused rather than misread.
    let (name, cmd) = match (&exact.key, name) {
        (Some(_), Some(first)) => {
            if !options_after_name.is_empty() {
                return Err(Failure {
                    code: USAGE,
                    message: format!(
                        "with --key, the command starts at {first:?}, so {} after it would be taken from the command: put mcds's options before the command, and `--` before a command with options of its own (mcds lock run --key KEY -- {first} ...)",
                        options_after_name.join(", ")
                    ),
                });
            }
            (None, [vec![first], cmd].concat())
        }
        (_, name) => (name, cmd),
    };
    let target = Target::new(ctx, name, exact.key, usage)?;
    let cmd = match shell {
        Some(_) if !cmd.is_empty() => {
            return Err(Failure {
                code: USAGE,
                message: format!("give CMD or -c SHELL_COMMAND, not both: {usage}"),
            });
        }
        Some(script) => vec!["/bin/sh".to_string(), "-c".to_string(), script],
        None if cmd.is_empty() => {
            return Err(Failure {
                code: USAGE,
                message: format!("no command to run: {usage}"),
            });
        }
        None => cmd,
    };
    // Messages say `lock "NAME"` or `lock on key "KEY"`; JSON has "lock":
    // NAME or "key": KEY.
    let what = target.describe("lock");
    let target = Arc::new(target);
    let lock = open(ctx, &target, ttl)?
        .with_fencing(fencing)
        .with_owner_label(&owner_label())?;
    let started = Instant::now();
    let mut guard = lock.try_acquire()?;
    if guard.is_none() && !nonblock && wait != Some(Duration::ZERO) {
        let holder = lock.holder()?.unwrap_or_default();
        let limit = wait.map_or("as long as it takes".to_string(), show);
        report.info(
            &format!("{what} is held by {holder}; waiting for {limit}"),
            target.json(
                "lock",
                json!({ "event": "waiting", "holder": holder,
                    "wait_ms": wait.map(|w| w.as_millis() as u64) }),
            ),
        );
        // Without -w: for ever (acquire takes Duration::MAX as no deadline).
        guard = match lock.acquire(wait.unwrap_or(Duration::MAX)) {
            Ok(guard) => Some(guard),
            Err(Error::WaitTimeout { .. }) => None,
            Err(e) => return Err(e.into()),
        };
    }
    let Some(mut guard) = guard else {
        // Silent, as flock -n and -w are: cron mails nothing for an overlap.
        let holder = lock.holder()?.unwrap_or_default();
        report.info(
            &format!(
                "{what} is held by {holder}; not running the command (exit {conflict_exit_code})"
            ),
            target.json(
                "lock",
                json!({ "event": "conflict", "holder": holder,
                    "exit_code": conflict_exit_code }),
            ),
        );
        return Ok(conflict_exit_code);
    };
    let token = guard.fencing_token();
    report.info(
        &format!(
            "acquired {what} after {}{}; running {}",
            show(started.elapsed()),
            token
                .map(|t| format!(" (fencing token {t})"))
                .unwrap_or_default(),
            cmd.join(" ")
        ),
        target.json(
            "lock",
            json!({ "event": "acquired", "waited_ms": started.elapsed().as_millis() as u64,
                "fencing_token": token, "ttl_ms": ttl.as_millis() as u64, "command": cmd }),
        ),
    );
    let running = Instant::now();
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
    if watcher.is_none() {
        report.warn(
            "cannot start /bin/sh to watch over the command: if mcds is killed, processes the command started may outlive the lock",
            target.json("lock", json!({ "event": "no_watcher" })),
        );
    }
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // After SIGTERM on a lost lease, the job gets this long before SIGKILL:
    // the renewer reports the loss about TTL/3 before the lease can end.
    let grace = (ttl / 6).clamp(Duration::from_millis(100), Duration::from_secs(5));
    guard.auto_extend_with(ttl, {
        let (what, target) = (what.clone(), Arc::clone(&target));
        let lost = Arc::clone(&lost);
        let job = job.clone();
        move |e| {
            lost.store(true, std::sync::atomic::Ordering::SeqCst);
            let why = e.map(|e| format!(": {e}")).unwrap_or_default();
            report.warn(
                &format!("lost the lease on {what} while the command runs{why}; stopping it (SIGTERM, SIGKILL after {}; exit 76)", show(grace)),
                target.json("lock", json!({ "event": "lease_lost", "exit_code": LEASE_LOST })),
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
    let code = if lease_lost {
        LEASE_LOST
    } else {
        exit_code(status)
    };
    match released {
        Ok(Release::Released) => report.info(
            &format!(
                "the command exited (exit {code}) after {}; released {what}",
                show(running.elapsed())
            ),
            target.json("lock", json!({ "event": "released", "exit_code": code,
                    "ran_ms": running.elapsed().as_millis() as u64 })),
        ),
        Ok(Release::Lost) if !lease_lost => report.warn(
            &format!(
                "the lease on {what} had been lost before the command finished (another host may have run it too)"
            ),
            target.json("lock", json!({ "event": "lease_lost", "exit_code": code })),
        ),
        Ok(Release::Lost) => {}
        Err(e) => report.warn(
            &format!("could not release {what}: {e}; it expires by itself within {}", show(ttl)),
            target.json("lock", json!({ "event": "release_failed", "error": e.to_string() })),
        ),
    }
    Ok(code)
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

/// The exit code that passes on `status`: the command's own code, or
/// 128 + N if signal N killed it, as a shell reports it.
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

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

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
