//! Child processes tied to the test process ([`spawn_tied`]), free
//! loopback ports, and whether a process is alive.

use std::ffi::OsStr;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port to find a free one")
}

/// A request to the spawner thread: the command, and where to send the child.
pub(crate) type SpawnJob = (Command, Sender<std::io::Result<Child>>);

/// Start `program` so that the process dies with the test process, however
/// the test process ends: by returning, by a panic, or by SIGKILL.
/// `configure` sets its arguments, environment and standard streams.
///
/// Dropping a [`MemcachedServer`](crate::MemcachedServer) kills it, but a test killed with `-9` (or a
/// server kept in a `static`, which Rust never drops) runs no destructor. So
/// the process is started under `setpriv --pdeathsig KILL` (util-linux, part
/// of every Debian system), which asks the kernel to SIGKILL it when its
/// parent goes away, and then execs `program` under the same pid.
///
/// The kernel's notion of "parent" here is the *thread* that forked, not the
/// process: a server forked from a test's own thread would be killed when
/// that test's thread ends, even while a `static` still hands it out to other
/// tests. Every process is therefore forked from one spawner thread that
/// lives as long as the test process, so the signal comes exactly when the
/// test process dies.
///
/// Where `setpriv` is missing, `program` is started directly, with a warning:
/// it is then still killed on drop and on panic, but not when the test
/// process itself is killed.
///
/// ```no_run
/// let child = mcds_testserver::spawn_tied("sleep", |c| {
///     c.arg("60");
/// })
/// .unwrap();
/// // `sleep` is SIGKILLed by the kernel if this process dies first.
/// # drop(child);
/// ```
pub fn spawn_tied(
    program: impl AsRef<OsStr>,
    configure: impl FnOnce(&mut Command),
) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Sender<SpawnJob>> = OnceLock::new();
    let mut command = if have_setpriv() {
        let mut command = Command::new("setpriv");
        command.args(["--pdeathsig", "KILL", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    configure(&mut command);
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("mcds-testkit-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("cannot start the test kit's spawner thread");
        tx
    });
    let gone = || std::io::Error::other("the test kit's spawner thread is gone");
    let (reply, result) = channel();
    spawner.send((command, reply)).map_err(|_| gone())?;
    result.recv().map_err(|_| gone())?
}

/// Whether process `pid` is alive: it exists and is not a zombie (Linux
/// `/proc`). For tests that check a process is gone.
pub fn process_alive(pid: u32) -> bool {
    proc_state(format!("/proc/{pid}/stat")).is_some_and(|state| state != 'Z' && state != 'X')
}

/// The state letter of a `/proc/.../stat` file (R, S, T, Z, ...).
pub(crate) fn proc_state(stat: impl AsRef<std::path::Path>) -> Option<char> {
    let stat = std::fs::read_to_string(stat).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether `setpriv --pdeathsig` works here (checked once).
/// `MC_TESTKIT_NO_SETPRIV=1` turns it off, to see `tests/no_leaks.rs` fail
/// without it.
pub(crate) fn have_setpriv() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    std::env::var_os("MC_TESTKIT_NO_SETPRIV").is_none()
        && *HAVE.get_or_init(|| {
            let ok = Command::new("setpriv")
                .args(["--pdeathsig", "KILL", "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "mcds-testkit: `setpriv --pdeathsig` is unavailable (install util-linux): \
                 processes a test starts will outlive it if it is killed with SIGKILL"
                );
            }
            ok
        })
}
