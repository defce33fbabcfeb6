//! `mcds lock run`: a distributed flock(1) (mcds-lock).
//!
//! The command runs in a process group of its own while the lease is
//! renewed; [`Job`] signals that group (forwarded signals, a lost lease, the
//! end of the run) and kills it if mcds dies, so nothing the command started
//! runs on without the lock.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::Error;
use mcds_lock::{Lock, Release};

use crate::args::LockCmd;
use crate::context::{CliResult, Ctx, Failure};
use crate::{INVALID_INPUT, LEASE_LOST, LOCK_NOT_ACQUIRED};

pub(crate) fn lock(ctx: &Ctx, cmd: LockCmd) -> CliResult {
    let LockCmd::Run {
        name,
        ttl,
        wait,
        fencing,
        cmd,
    } = cmd;
    let lock = Lock::new(&ctx.scope, &name, ttl)?.with_fencing(fencing);
    let guard = if wait.is_zero() {
        lock.try_acquire()?
    } else {
        match lock.acquire(wait) {
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
            "mcds: warning: the lease on lock {name:?} had been lost before the command finished (TTL {} too short?)",
            crate::duration::show(ttl)
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
